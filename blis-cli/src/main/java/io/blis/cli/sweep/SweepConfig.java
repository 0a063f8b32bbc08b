package io.blis.cli.sweep;

import io.blis.engine.lora.LoraSpec;
import java.util.Objects;

/**
 * One configuration of a sweep: a single pool of {@code replicas} identical instances of a model,
 * each on {@code tp x pp x dp} GPUs, with vLLM's batch limits, behind a router, each instance
 * scheduling with {@code scheduler}, serving LoRA adapters in {@code maxLoras} GPU slots when that
 * is not 0. Model and GPU are as written in the grid file (a bundled name or alias, or a path
 * relative to the grid file).
 *
 * @param model bundled model name or config.json path
 * @param gpu bundled GPU name or GPU JSON path
 * @param tp tensor-parallel degree (vLLM {@code --tensor-parallel-size})
 * @param pp pipeline-parallel degree (vLLM {@code --pipeline-parallel-size})
 * @param dp data-parallel degree (vLLM {@code --data-parallel-size})
 * @param expertParallel vLLM {@code --enable-expert-parallel}: the routed experts spread whole over
 *     the {@code tp x dp} GPUs of an instance
 * @param replicas instances
 * @param maxNumSeqs vLLM {@code --max-num-seqs}
 * @param maxNumBatchedTokens vLLM {@code --max-num-batched-tokens}
 * @param router router provider name
 * @param scheduler scheduler provider name
 * @param prefillReplicas of the replicas, those that prefill (prefill/decode disaggregation); 0 for none
 * @param decodeReplicas of the replicas, those that decode; the rest of the replicas do both
 * @param pdDecider which requests are disaggregated: never, always or prefix-threshold
 * @param maxLoras LoRA adapters each instance holds on its GPUs (vLLM {@code --max-loras}); 0 for
 *     no LoRA
 */
public record SweepConfig(String model, String gpu, int tp, int pp, int dp, boolean expertParallel, int replicas,
    int maxNumSeqs, int maxNumBatchedTokens, String router, String scheduler, int prefillReplicas,
    int decodeReplicas, String pdDecider, int maxLoras) {

  /** A configuration without LoRA adapters. */
  public SweepConfig(String model, String gpu, int tp, int pp, int dp, boolean expertParallel, int replicas,
      int maxNumSeqs, int maxNumBatchedTokens, String router, String scheduler, int prefillReplicas,
      int decodeReplicas, String pdDecider) {
    this(model, gpu, tp, pp, dp, expertParallel, replicas, maxNumSeqs, maxNumBatchedTokens, router, scheduler,
        prefillReplicas, decodeReplicas, pdDecider, 0);
  }

  /** A configuration without prefill/decode disaggregation or LoRA adapters. */
  public SweepConfig(String model, String gpu, int tp, int pp, int dp, boolean expertParallel, int replicas,
      int maxNumSeqs, int maxNumBatchedTokens, String router, String scheduler) {
    this(model, gpu, tp, pp, dp, expertParallel, replicas, maxNumSeqs, maxNumBatchedTokens, router, scheduler, 0, 0,
        "never");
  }

  /** {@code blis run}'s defaults for an axis or a field left out. */
  public static final SweepConfig DEFAULTS =
      new SweepConfig("meta-llama/Llama-2-7b-hf", "H100", 1, 1, 256, 2048, "round-robin", "fcfs");

  /** A configuration of tensor parallelism only (pp 1, dp 1, no expert parallelism). */
  public SweepConfig(String model, String gpu, int tp, int replicas, int maxNumSeqs, int maxNumBatchedTokens,
      String router, String scheduler) {
    this(model, gpu, tp, 1, 1, false, replicas, maxNumSeqs, maxNumBatchedTokens, router, scheduler);
  }

  public SweepConfig {
    Objects.requireNonNull(model, "model");
    Objects.requireNonNull(gpu, "gpu");
    Objects.requireNonNull(router, "router");
    Objects.requireNonNull(scheduler, "scheduler");
    if (tp < 1 || pp < 1 || dp < 1 || replicas < 1 || maxNumSeqs < 1 || maxNumBatchedTokens < 1) {
      throw new IllegalArgumentException("tp, pp, dp, replicas, max_num_seqs and max_num_batched_tokens must be at"
          + " least 1: " + this);
    }
    Objects.requireNonNull(pdDecider, "pdDecider");
    io.blis.engine.disagg.Decider.parse(pdDecider);
    if (prefillReplicas < 0 || decodeReplicas < 0 || prefillReplicas + decodeReplicas > replicas) {
      throw new IllegalArgumentException("prefill_replicas " + prefillReplicas + " and decode_replicas "
          + decodeReplicas + " must be >= 0 and together at most replicas " + replicas);
    }
    if (maxLoras < 0 || maxLoras > LoraSpec.MAX_ADAPTERS) {
      throw new IllegalArgumentException("max_loras must be in [1, " + LoraSpec.MAX_ADAPTERS + "], or 0 for no LoRA,"
          + " got " + maxLoras);
    }
  }

  /** Whether some replicas prefill or decode only (prefill/decode disaggregation). */
  public boolean disaggregated() {
    return prefillReplicas > 0 || decodeReplicas > 0;
  }

  /** Whether the instances serve LoRA adapters ({@code maxLoras > 0}). */
  public boolean lora() {
    return maxLoras > 0;
  }

  /**
   * The configuration's identity in {@code points.jsonl} and the tables:
   * {@code model=M;gpu=G;tp=T;replicas=R;max_num_seqs=S;max_num_batched_tokens=B;router=X;scheduler=Y},
   * with {@code ;pp=P}, {@code ;dp=D} and {@code ;expert_parallel=true} after the TP only when they
   * are not the defaults (1, 1, false), so that the keys of tensor-parallel configurations are those
   * recorded before the sweep had these fields; likewise {@code
   * ;prefill_replicas=P;decode_replicas=D;pd_decider=X} only when replicas are split or the decider
   * is not {@code never}, and {@code ;max_loras=N} last only with LoRA.
   */
  public String key() {
    return "model=" + model + ";gpu=" + gpu + ";tp=" + tp + (pp != 1 ? ";pp=" + pp : "") + (dp != 1 ? ";dp=" + dp : "")
        + (expertParallel ? ";expert_parallel=true" : "") + ";replicas=" + replicas + ";max_num_seqs=" + maxNumSeqs
        + ";max_num_batched_tokens=" + maxNumBatchedTokens + ";router=" + router + ";scheduler=" + scheduler
        + (disaggregated() || !pdDecider.equals("never") ? ";prefill_replicas=" + prefillReplicas + ";decode_replicas="
            + decodeReplicas + ";pd_decider=" + pdDecider : "")
        + (maxLoras > 0 ? ";max_loras=" + maxLoras : "");
  }

  /** The expert-parallel degree: {@code tp x dp} with expert parallelism, else 1. */
  public long ep() {
    return expertParallel ? (long) tp * dp : 1;
  }

  /** GPUs of one instance: {@code tp x pp x dp}. */
  public long gpusPerReplica() {
    return (long) tp * pp * dp;
  }

  /** GPUs the configuration occupies: replicas x tp x pp x dp. */
  public long gpus() {
    return replicas * gpusPerReplica();
  }
}
