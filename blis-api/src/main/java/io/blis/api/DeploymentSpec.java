package io.blis.api;

/** How one serving instance is deployed: parallelism and vLLM server limits. */
public interface DeploymentSpec {

  /** Tensor-parallel degree (GPUs per instance). */
  int tensorParallel();

  /** Data-parallel degree inside the instance (1 unless expert/data parallel MoE). */
  default int dataParallel() {
    return 1;
  }

  /** Tokens per KV block. */
  int blockSizeTokens();

  /** Maximum requests in the running batch. */
  int maxNumSeqs();

  /** Token budget of one step. */
  int maxNumBatchedTokens();

  /** Maximum prompt plus output length, or 0 for unlimited. */
  int maxModelLen();

  /** Total GPU KV blocks of the instance. */
  long totalKvBlocks();

  /** Fraction of device memory vLLM may use. */
  double gpuMemoryUtilization();
}
