package io.blis.latency.physics;

import io.blis.latency.catalog.ModelConfig;
import io.blis.latency.layout.Layout;
import io.blis.api.Coefficients;
import io.blis.api.LatencyModel;
import io.blis.api.LatencyModelProvider;
import io.blis.api.ProviderContext;
import io.blis.latency.coeff.CoefficientFiles;
import io.blis.latency.coeff.CoefficientVectors;

/**
 * The {@code roofline} latency model: an analytical step time from FLOPs and bytes with per-GPU
 * efficiency factors, no fitted overheads.
 *
 * <pre>
 *   compute = prefillCompute / mfuPrefill + decodeCompute / mfuDecode
 *   memory  = (weightLoad + expertWeightLoad + prefillMemory + decodeMemory + moeRouting) / hbmFraction
 *   step    = max(compute, memory) + tpComm / interconnectFraction                   (us, >= 1)
 *   queueingTime = alpha[0] + alpha[1] x inputTokens;  outputTokenProcessingTime = alpha[2]
 *   schedulingProcessingTime = scheduling_us (0);  preemptionProcessingTime = preemption_us (0)
 * </pre>
 *
 * The terms are the ideal peak-rate times of {@code StepBasis} (docs/latency-models.md): attention
 * of t new tokens at progress index s costs t s + t (t + 1) / 2 query-key pairs, each decode reads
 * its whole context from the KV cache, weights are read once per step, MoE experts by the expected
 * number hit, and two ring all-reduces per layer cross the interconnect when TP > 1. Efficiencies
 * come from the vector {@code efficiency} ([mfu_prefill, mfu_decode, hbm_fraction,
 * interconnect_fraction], each in (0, 1]) if given, else {@code efficiency_<GPU name>}, from the
 * user's coefficients first and then the bundled {@code coefficients/roofline.yaml}. A vector named
 * for the GPU is that GPU's own shares of its datasheet; the generic {@code efficiency} is the
 * anchor GPU's (H100), and the GPU's kernel-efficiency entry scales the ideal times as it does for
 * trained-physics (docs/gpu-efficiency.md).
 */
public final class RooflineProvider implements LatencyModelProvider {

  /** The name this model is selected by. */
  public static final String NAME = "roofline";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public String description() {
    return "analytical max(compute, memory) + all-reduce from FLOPs and bytes, per-GPU efficiencies";
  }

  @Override
  public LatencyModel create(ProviderContext context) {
    Coefficients given = context.coefficients();
    Coefficients bundled = CoefficientFiles.bundled(NAME);
    String perGpu = "efficiency_" + context.hardware().name();
    String key;
    if (given.has("efficiency")) {
      key = "efficiency";
    } else if (given.has(perGpu) || bundled.has(perGpu)) {
      key = perGpu;
    } else {
      key = "efficiency";
    }
    CoefficientVectors v = new CoefficientVectors(NAME, given, bundled);
    double[] eff = v.nonNegative(key, 4, 4);
    for (int i = 0; i < eff.length; i++) {
      if (!(eff[i] > 0 && eff[i] <= 1)) {
        throw new IllegalArgumentException(
            v.sourceOf(key).source() + ": roofline efficiency " + key + "[" + i
                + "] must be in (0, 1], got " + eff[i]);
      }
    }
    // a vector named for this GPU holds its own shares of its datasheet; the generic one is the
    // anchor GPU's, carried to this GPU by its kernel-efficiency entry (docs/gpu-efficiency.md)
    boolean ownFigures = key.equals(perGpu);
    return new RooflineModel(
        new StepBasis(context.model(), context.hardware(), Layout.of(context.deployment()),
            ModelConfig.truncatesSampling(context.model()), !ownFigures),
        eff,
        v.nonNegative("alpha", 3, 3),
        v.scalar("scheduling_us", 0),
        v.scalar("preemption_us", 0));
  }
}
