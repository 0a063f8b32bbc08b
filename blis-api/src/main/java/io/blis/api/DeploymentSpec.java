package io.blis.api;

/** How one serving instance is deployed: parallelism and vLLM server limits. */
public interface DeploymentSpec {

  /**
   * {@return the tensor-parallel degree} The GPUs of one pipeline stage of one data-parallel rank
   * (all the GPUs of the instance when there is neither); at least 1.
   */
  int tensorParallel();

  /**
   * Data-parallel degree inside the instance (vLLM {@code --data-parallel-size}): ranks that each
   * hold a full copy of the attention (split {@link #tensorParallel()} ways) and run their own
   * scheduler, batch and KV cache. For an MoE model they step together, since every MoE layer
   * exchanges tokens across them. 1 by default.
   *
   * @return the data-parallel degree, at least 1
   */
  default int dataParallel() {
    return 1;
  }

  /**
   * Expert-parallel degree (vLLM {@code --enable-expert-parallel}): the GPUs the routed experts of
   * an MoE layer are spread over as whole experts, {@code tensorParallel() x dataParallel()} when
   * enabled; 1 when experts are instead split tensor-parallel. 1 by default.
   *
   * @return the expert-parallel degree, at least 1
   */
  default int expertParallel() {
    return 1;
  }

  /**
   * Pipeline-parallel degree (vLLM {@code --pipeline-parallel-size}): stages the layers are split
   * over, each of {@link #tensorParallel()} GPUs. 1 by default.
   *
   * @return the pipeline-parallel degree, at least 1
   */
  default int pipelineParallel() {
    return 1;
  }

  /** {@return the GPUs of the instance: tensor x pipeline x data parallel} */
  default int gpus() {
    return tensorParallel() * pipelineParallel() * dataParallel();
  }

  /** {@return the tokens per KV block} At least 1. */
  int blockSizeTokens();

  /** {@return the maximum number of requests in the running batch (vLLM {@code --max-num-seqs})} */
  int maxNumSeqs();

  /**
   * {@return the token budget of one step (vLLM {@code --max-num-batched-tokens})} It bounds the
   * new tokens, prefill and decode together, that one step schedules.
   */
  int maxNumBatchedTokens();

  /**
   * {@return the maximum prompt plus output length in tokens (vLLM {@code --max-model-len}), or 0
   * for unlimited} The engine rejects a request that does not fit when it reaches the waiting
   * queue.
   */
  int maxModelLen();

  /**
   * GPU KV blocks one scheduler manages: those of the instance, or of one data-parallel rank when
   * {@link #dataParallel()} is above 1 (every rank has as many).
   *
   * @return the number of GPU KV blocks, each of {@link #blockSizeTokens()} tokens
   */
  long totalKvBlocks();

  /** {@return the fraction of device memory vLLM may use} In {@code (0, 1]}. */
  double gpuMemoryUtilization();
}
