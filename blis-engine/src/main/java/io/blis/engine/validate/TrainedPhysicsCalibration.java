package io.blis.engine.validate;

import io.blis.api.Coefficients;
import io.blis.api.ModelSpec;
import io.blis.latency.catalog.ModelConfig;
import io.blis.latency.physics.TrainedPhysicsCoefficients;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

/**
 * The default calibration of the {@code trained-physics} latency model: its 17 coefficients with
 * the physically plausible bounds the latency module declares (inverse-efficiency multipliers
 * >= 1, overheads >= 0), and a staged search that fits what the data can identify.
 *
 * <ol>
 *   <li>{@code decode}: the decode step (weight and KV reads, per-layer, per-all-reduce,
 *       per-request, per-step and per-MoE-layer overheads, per-output-token time) on the
 *       decode-per-token error, with half weight on mean E2E;
 *   <li>{@code ttft}: queueing and scheduling overheads and the prefill multipliers on mean TTFT,
 *       with half weight on mean E2E and decode;
 *   <li>{@code joint}: a short CMA-ES search over all of them together on the full loss, over
 *       twice as many requests per stage by default.
 * </ol>
 *
 * The search simulates the first {@code subsample} requests of each load stage; the final
 * comparison uses whole runs. A prefix of each stage is cheap but blind to what builds up later
 * in a stage, such as a queue that grows once the batch nears {@code max_num_seqs}; a joint stage
 * on whole runs sees it (at about 5 s per evaluation instead of 1.5 s for the default fit).
 */
public final class TrainedPhysicsCalibration {

  /** Parameters fitted in the decode stage. */
  public static final List<String> DECODE = List.of("decode_memory", "decode_compute", "weight_load", "expert_weight_load",
      "tp_comm", "per_layer_us", "per_allreduce_us", "per_request_us", "per_step_us", "per_moe_layer_us",
      "sampling_us_per_kvocab", "sampling_passes", "per_output_token_us");

  /** Parameters fitted in the TTFT stage. */
  public static final List<String> TTFT = List.of("queueing_us", "scheduling_us", "prefill_compute",
      "prefill_memory", "per_step_us");

  private TrainedPhysicsCalibration() {}

  /** The coefficient space, starting at {@code start} (for example the bundled defaults). */
  public static ParameterSpace space(Coefficients start) {
    double[] lower = TrainedPhysicsCoefficients.lowerBounds();
    double[] upper = TrainedPhysicsCoefficients.upperBounds();
    double[] initial = TrainedPhysicsCoefficients.toArray(start);
    for (int i = 0; i < initial.length; i++) {
      initial[i] = Math.max(lower[i], Math.min(upper[i], initial[i]));
    }
    return new ParameterSpace(TrainedPhysicsCoefficients.names(), lower, upper, initial,
        x -> TrainedPhysicsCoefficients.toCoefficients(x, "calibration"));
  }

  /**
   * The staged search.
   *
   * @param subsample requests per load stage simulated in the decode and TTFT stages (0 = whole
   *     runs)
   * @param jointSubsample the same for the joint stage (0 = whole runs)
   * @param budget multiplier of the evaluation budgets (1 = the default, about 530 evaluations)
   */
  public static List<CalibrationStage> stages(int subsample, int jointSubsample, double budget) {
    LinkedHashSet<String> all = new LinkedHashSet<>(DECODE);
    all.addAll(TTFT);
    return List.of(
        new CalibrationStage("decode", DECODE, 0.5, 0, 1, subsample, evals(150, budget), evals(60, budget)),
        new CalibrationStage("ttft", TTFT, 0.5, 1, 0.5, subsample, evals(120, budget), evals(40, budget)),
        new CalibrationStage("joint", List.copyOf(all), 1, 0.5, 1, jointSubsample, evals(80, budget), 0));
  }

  /** The default joint-stage subsample: twice {@code subsample}, or whole runs when that is 0. */
  public static int defaultJointSubsample(int subsample) {
    return subsample == 0 ? 0 : subsample * 2;
  }

  /**
   * The coefficients no experiment of {@code training} exercises and what they take instead: with
   * no MoE model, {@code expert_weight_load} follows {@code weight_load} (expert weights are read
   * like dense ones), {@code moe_routing} follows {@code decode_memory} (activation traffic over
   * HBM) and {@code per_moe_layer_us} is 0; with no run at TP > 1, {@code tp_comm} is 1 (the link's
   * peak) and {@code per_allreduce_us} 0; with no model whose default sampling is truncated
   * (top-p/top-k), {@code sampling_us_per_kvocab} and {@code sampling_passes} are 0. Neutral values, not the start point, so that a
   * held-out MoE or TP model is predicted from physics and the other models' fit alone.
   */
  public static List<Calibrator.Tie> unexercised(List<Experiment> training) {
    boolean moe = false;
    boolean tp = false;
    boolean truncated = false;
    Map<String, ModelSpec> seen = new HashMap<>();
    for (Experiment e : training) {
      ModelSpec m = seen.computeIfAbsent(e.modelKey(), p -> EngineRunSimulator.loadModel(e));
      moe |= m.isMoe();
      truncated |= ModelConfig.truncatesSampling(m);
      tp |= e.tp() > 1;
    }
    List<Calibrator.Tie> ties = new ArrayList<>();
    if (!moe) {
      ties.add(new Calibrator.Tie("expert_weight_load", "weight_load", 0));
      ties.add(new Calibrator.Tie("moe_routing", "decode_memory", 0));
      ties.add(new Calibrator.Tie("per_moe_layer_us", null, 0));
    }
    if (!tp) {
      ties.add(new Calibrator.Tie("tp_comm", null, 1));
      ties.add(new Calibrator.Tie("per_allreduce_us", null, 0));
    }
    if (!truncated) {
      ties.add(new Calibrator.Tie("sampling_us_per_kvocab", null, 0));
      ties.add(new Calibrator.Tie("sampling_passes", null, 0));
    }
    return ties;
  }

  private static int evals(int base, double budget) {
    return Math.max(1, (int) Math.round(base * budget));
  }
}
