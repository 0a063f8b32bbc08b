package io.blis.latency.physics;

import io.blis.latency.layout.Layout;
import io.blis.api.LatencyModel;
import io.blis.api.LatencyModelProvider;
import io.blis.api.ProviderContext;
import io.blis.latency.catalog.ModelConfig;

/**
 * The {@code trained-physics} latency model (the default): a roofline over physically derived
 * basis terms with learned inverse efficiencies, plus learned overheads.
 *
 * <pre>
 *   compute = b0 x prefillCompute
 *   memory  = b4 x weightLoad + b5 x expertWeightLoad + b1 x prefillMemory + b3 x decodeMemory
 *   step    = max(compute, memory) + b2 x decodeCompute + b6 x tpComm + b7 x moeRouting
 *             + b8 x layers x sLayer + b9 x allReduces x sAllReduce + b10 x requests + b11
 *             + b12 x moeLayers x sGemm + b13 x vocab / 1000 x sSmall + b14 x requests x logitsPass
 *               (b13, b14 only for top-p/top-k default sampling)               (us, >= 1)
 *   logitsPass = vocab x 4 bytes / peak HBM bandwidth x sWeights (one read of a request's fp32 logits)
 *   queueingTime = a0,  schedulingProcessingTime = a1,  outputTokenProcessingTime = a2,
 *   preemptionProcessingTime = a3                                                      (us)
 * </pre>
 *
 * The basis terms are ideal microseconds at the GPU's peak rates, per GPU of the TP group, each
 * times the GPU's kernel scale for its kind of work ({@link io.blis.latency.catalog.KernelScales}:
 * 1 on the H100 the bundled coefficients were fitted on, the GPU's measured or estimated kernel
 * efficiency against the H100's elsewhere; the {@code s...} factors above are those of the fixed
 * terms) (definitions in docs/latency-models.md): they read each scheduled request's {@code newTokens},
 * {@code progressIndex} (context already in the KV cache, prefix hits included) and {@code phase}.
 * {@code b0..b7} are dimensionless multipliers (inverse efficiencies), {@code b8..b13} and {@code
 * a0..a3} microseconds, {@code b14} a count of passes; names, bounds and defaults are in {@link TrainedPhysicsCoefficients}.
 * Coefficients come from vectors {@code beta} (15; 13 or 14 with the missing {@code b13}, {@code b14} = 0) and {@code alpha} (3 or 4); a vector not given
 * is taken from the bundled {@code coefficients/trained-physics.yaml}.
 */
public final class TrainedPhysicsProvider implements LatencyModelProvider {

  /** The name this model is selected by. */
  public static final String NAME = TrainedPhysicsCoefficients.LATENCY_MODEL;

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public String description() {
    return "roofline of physically derived terms (FLOPs, KV and weight bytes, all-reduce) with"
        + " learned efficiencies and overheads; the default";
  }

  /** The provider option that overrides how requests are sampled ({@code --option sampling=...}). */
  public static final String SAMPLING_OPTION = "sampling";

  @Override
  public LatencyModel create(ProviderContext context) {
    return new TrainedPhysicsModel(
        context.model(),
        context.hardware(),
        Layout.of(context.deployment()),
        truncatedSampling(context),
        TrainedPhysicsParameters.of(context.coefficients()));
  }

  /**
   * Whether requests are sampled with top-p/top-k: option {@code sampling} {@code auto} (the
   * default: the model's generation defaults, {@link ModelConfig#truncatesSampling}), {@code
   * truncated} (clients send top-p/top-k, or the defaults truncate) or {@code plain} (greedy or
   * plain temperature sampling, e.g. clients that send {@code temperature: 0}).
   */
  static boolean truncatedSampling(ProviderContext context) {
    String v = context.option(SAMPLING_OPTION).orElse("auto");
    return switch (v) {
      case "auto" -> ModelConfig.truncatesSampling(context.model());
      case "truncated" -> true;
      case "plain" -> false;
      default -> throw new IllegalArgumentException(
          "option " + SAMPLING_OPTION + " must be auto, truncated or plain, got '" + v + "'");
    };
  }
}
