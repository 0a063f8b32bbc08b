package io.blis.api;

/** How one serving instance is deployed: parallelism and vLLM server limits. */
public interface DeploymentSpec {

  /** Tensor-parallel degree (GPUs per instance). */
  int tensorParallel();

  /**
   * Data-parallel degree inside the instance (vLLM {@code --data-parallel-size}): ranks that each
   * hold a full copy of the attention (split {@link #tensorParallel()} ways) and run their own
   * scheduler, batch and KV cache. For an MoE model they step together, since every MoE layer
   * exchanges tokens across them. 1 by default.
   */
  default int dataParallel() {
    return 1;
  }

  /**
   * Expert-parallel degree (vLLM {@code --enable-expert-parallel}): the GPUs the routed experts of
   * an MoE layer are spread over as whole experts, {@code tensorParallel() x dataParallel()} when
   * enabled; 1 when experts are instead split tensor-parallel. 1 by default.
   */
  default int expertParallel() {
    return 1;
  }

  /**
   * Pipeline-parallel degree (vLLM {@code --pipeline-parallel-size}): stages the layers are split
   * over, each of {@link #tensorParallel()} GPUs. 1 by default.
   */
  default int pipelineParallel() {
    return 1;
  }

  /** GPUs of the instance: tensor x pipeline x data parallel. */
  default int gpus() {
    return tensorParallel() * pipelineParallel() * dataParallel();
  }

  /** Tokens per KV block. */
  int blockSizeTokens();

  /** Maximum requests in the running batch. */
  int maxNumSeqs();

  /** Token budget of one step. */
  int maxNumBatchedTokens();

  /** Maximum prompt plus output length, or 0 for unlimited. */
  int maxModelLen();

  /**
   * GPU KV blocks one scheduler manages: those of the instance, or of one data-parallel rank when
   * {@link #dataParallel()} is above 1 (every rank has as many).
   */
  long totalKvBlocks();

  /** Fraction of device memory vLLM may use. */
  double gpuMemoryUtilization();
}
