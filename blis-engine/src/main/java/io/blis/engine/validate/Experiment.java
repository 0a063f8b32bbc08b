package io.blis.engine.validate;

import io.blis.engine.EngineLimits;
import io.blis.workload.inferenceperf.InferencePerfProfile;
import java.nio.file.Path;
import java.util.Optional;

/**
 * One measured serving run of an experiments file: the deployment, the workload that drove it and
 * what the client observed. Paths are already resolved against the experiments file's folder.
 *
 * @param id run id (unique within the file)
 * @param model HF model name
 * @param modelConfig the model's HF {@code config.json}, or null when {@code model} names a bundled
 *     model
 * @param gpu the GPU as a reference {@code GpuCatalog.resolve} takes: a bundled name or alias, a
 *     device description, or a GPU file entry {@code FILE#KEY}
 * @param tp tensor-parallel degree
 * @param dp data-parallel ranks
 * @param maxModelLen vLLM {@code max_model_len} (tokens)
 * @param maxNumBatchedTokens vLLM per-step token budget (tokens)
 * @param maxNumSeqs vLLM maximum running requests
 * @param gpuMemoryUtilization vLLM {@code gpu_memory_utilization} (fraction)
 * @param blockSizeTokens KV block size (tokens)
 * @param kvBlocksGpu GPU KV blocks as recorded, or -1 to compute them from the memory budget
 * @param cpuOffloadBytes CPU KV offload capacity in bytes, 0 when offload is off
 * @param workloadName the workload's name (codegen, general, ...), used to group runs
 * @param profile the effective inference-perf profile (data, stages, timeout), or null when the
 *     workload is known only as the trace of what was sent ({@code workloadTrace})
 * @param saturated whether the run was overloaded (status.saturated)
 * @param observed what the client measured, per stage and overall
 * @param trace the per-request trace (gzip CSV), empty when the file names none
 * @param workloadTrace the requests exactly as they were sent, a BLIS trace ({@code workload.trace},
 *     as {@code blis observe} writes it); when present, replays send these requests at their
 *     recorded times
 * @param pp pipeline-parallel stages
 * @param ep expert-parallel degree (1, or tp x dp)
 */
public record Experiment(
    String id,
    String model,
    Path modelConfig,
    String gpu,
    int tp,
    int dp,
    int maxModelLen,
    int maxNumBatchedTokens,
    int maxNumSeqs,
    double gpuMemoryUtilization,
    int blockSizeTokens,
    long kvBlocksGpu,
    long cpuOffloadBytes,
    String workloadName,
    InferencePerfProfile profile,
    boolean saturated,
    RunSummary observed,
    Optional<Path> trace,
    Optional<Path> workloadTrace,
    int pp,
    int ep) {

  /** A tensor- (and data-) parallel experiment with the trace of what was sent. */
  public Experiment(String id, String model, Path modelConfig, String gpu, int tp, int dp,
      int maxModelLen, int maxNumBatchedTokens, int maxNumSeqs, double gpuMemoryUtilization,
      int blockSizeTokens, long kvBlocksGpu, long cpuOffloadBytes, String workloadName,
      InferencePerfProfile profile, boolean saturated, RunSummary observed, Optional<Path> trace,
      Optional<Path> workloadTrace) {
    this(id, model, modelConfig, gpu, tp, dp, maxModelLen, maxNumBatchedTokens, maxNumSeqs,
        gpuMemoryUtilization, blockSizeTokens, kvBlocksGpu, cpuOffloadBytes, workloadName, profile,
        saturated, observed, trace, workloadTrace, 1, 1);
  }

  /** An experiment whose workload is its inference-perf profile (no trace of what was sent). */
  public Experiment(String id, String model, Path modelConfig, String gpu, int tp, int dp,
      int maxModelLen, int maxNumBatchedTokens, int maxNumSeqs, double gpuMemoryUtilization,
      int blockSizeTokens, long kvBlocksGpu, long cpuOffloadBytes, String workloadName,
      InferencePerfProfile profile, boolean saturated, RunSummary observed, Optional<Path> trace) {
    this(id, model, modelConfig, gpu, tp, dp, maxModelLen, maxNumBatchedTokens, maxNumSeqs,
        gpuMemoryUtilization, blockSizeTokens, kvBlocksGpu, cpuOffloadBytes, workloadName, profile,
        saturated, observed, trace, Optional.empty());
  }

  public Experiment {
    if (profile == null && workloadTrace.isEmpty()) {
      throw new IllegalArgumentException("experiment '" + id + "': needs an inference-perf profile or a workload trace");
    }
  }

  /** The run's layout. */
  public io.blis.latency.layout.Layout layout() {
    return new io.blis.latency.layout.Layout(tp, pp, dp, ep);
  }

  /** A key naming the model's configuration: its file, or the bundled model's name. */
  public String modelKey() {
    return modelConfig != null ? modelConfig.toString() : "bundled:" + model;
  }

  /** The vLLM scheduler limits of this run (no long-prefill threshold was recorded). */
  public EngineLimits limits() {
    return new EngineLimits(maxNumSeqs, maxNumBatchedTokens, 0, maxModelLen);
  }

  /**
   * Tokens every request generates (the profile's output_len; ignore-EOS semantics), or 0 when
   * the workload is a trace whose requests ask for different lengths.
   */
  public int outputLen() {
    return profile != null ? profile.data().outputLen() : 0;
  }

  /** Whether the GPU KV block count was recorded (otherwise it is computed from memory). */
  public boolean hasRecordedKvBlocks() {
    return kvBlocksGpu > 0;
  }
}
