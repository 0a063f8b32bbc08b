package io.blis.engine;

import io.blis.api.DeploymentSpec;

/**
 * How one instance is deployed, as plugins see it.
 *
 * @param tensorParallel GPUs per pipeline stage of a data-parallel rank
 * @param blockSizeTokens tokens per KV block
 * @param maxNumSeqs maximum running requests
 * @param maxNumBatchedTokens token budget per step
 * @param maxModelLen maximum prompt plus output length, 0 for unlimited
 * @param totalKvBlocks GPU KV blocks of the instance (of each data-parallel rank)
 * @param gpuMemoryUtilization fraction of device memory vLLM may use
 * @param pipelineParallel pipeline stages
 * @param dataParallel data-parallel ranks
 * @param expertParallel expert-parallel degree: 1, or tensor x data parallel
 */
public record Deployment(int tensorParallel, int blockSizeTokens, int maxNumSeqs,
    int maxNumBatchedTokens, int maxModelLen, long totalKvBlocks, double gpuMemoryUtilization,
    int pipelineParallel, int dataParallel, int expertParallel)
    implements DeploymentSpec {

  public Deployment {
    if (tensorParallel < 1) {
      throw new IllegalArgumentException("tensor parallel degree must be at least 1, got " + tensorParallel);
    }
    if (pipelineParallel < 1 || dataParallel < 1 || expertParallel < 1) {
      throw new IllegalArgumentException("pipeline, data and expert parallel degrees must be at least 1, got "
          + pipelineParallel + ", " + dataParallel + " and " + expertParallel);
    }
    if (blockSizeTokens < 1) {
      throw new IllegalArgumentException("block size must be at least 1 token, got " + blockSizeTokens);
    }
    if (!(gpuMemoryUtilization > 0 && gpuMemoryUtilization <= 1)) {
      throw new IllegalArgumentException(
          "GPU memory utilization must be in (0, 1], got " + gpuMemoryUtilization);
    }
  }

  /** A tensor-parallel deployment (no pipeline, data or expert parallelism). */
  public Deployment(int tensorParallel, int blockSizeTokens, int maxNumSeqs,
      int maxNumBatchedTokens, int maxModelLen, long totalKvBlocks, double gpuMemoryUtilization) {
    this(tensorParallel, blockSizeTokens, maxNumSeqs, maxNumBatchedTokens, maxModelLen, totalKvBlocks,
        gpuMemoryUtilization, 1, 1, 1);
  }

  /** The deployment of {@code limits} with the given parallelism and KV cache. */
  public static Deployment of(EngineLimits limits, int tensorParallel, int blockSizeTokens,
      long totalKvBlocks, double gpuMemoryUtilization) {
    return new Deployment(tensorParallel, blockSizeTokens, limits.maxNumSeqs(),
        limits.maxNumBatchedTokens(), limits.maxModelLen(), totalKvBlocks, gpuMemoryUtilization);
  }
}
