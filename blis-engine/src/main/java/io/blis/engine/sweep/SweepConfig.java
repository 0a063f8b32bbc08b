package io.blis.engine.sweep;

import java.util.Objects;

/**
 * One configuration of a sweep: a single pool of {@code replicas} identical instances of a model
 * on {@code tp} GPUs each, with vLLM's batch limits, behind a router, each instance scheduling
 * with {@code scheduler}. Model and GPU are as written in the grid file (a bundled name or alias,
 * or a path relative to the grid file).
 *
 * @param model bundled model name or config.json path
 * @param gpu bundled GPU name or GPU JSON path
 * @param tp tensor-parallel degree (GPUs per instance)
 * @param replicas instances
 * @param maxNumSeqs vLLM {@code --max-num-seqs}
 * @param maxNumBatchedTokens vLLM {@code --max-num-batched-tokens}
 * @param router router provider name
 * @param scheduler scheduler provider name
 */
public record SweepConfig(String model, String gpu, int tp, int replicas, int maxNumSeqs, int maxNumBatchedTokens,
    String router, String scheduler) {

  /** {@code blis run}'s defaults for an axis or a field left out. */
  public static final SweepConfig DEFAULTS =
      new SweepConfig("meta-llama/Llama-2-7b-hf", "H100", 1, 1, 256, 2048, "round-robin", "fcfs");

  public SweepConfig {
    Objects.requireNonNull(model, "model");
    Objects.requireNonNull(gpu, "gpu");
    Objects.requireNonNull(router, "router");
    Objects.requireNonNull(scheduler, "scheduler");
    if (tp < 1 || replicas < 1 || maxNumSeqs < 1 || maxNumBatchedTokens < 1) {
      throw new IllegalArgumentException("tp, replicas, max_num_seqs and max_num_batched_tokens must be at least 1: " + this);
    }
  }

  /**
   * The configuration's identity in {@code points.jsonl} and the tables:
   * {@code model=M;gpu=G;tp=T;replicas=R;max_num_seqs=S;max_num_batched_tokens=B;router=X;scheduler=Y}.
   */
  public String key() {
    return "model=" + model + ";gpu=" + gpu + ";tp=" + tp + ";replicas=" + replicas + ";max_num_seqs=" + maxNumSeqs
        + ";max_num_batched_tokens=" + maxNumBatchedTokens + ";router=" + router + ";scheduler=" + scheduler;
  }

  /** GPUs the configuration occupies: replicas x TP. */
  public int gpus() {
    return replicas * tp;
  }
}
