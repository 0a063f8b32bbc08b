package io.blis.latency.kv;

import io.blis.api.HardwareSpec;
import io.blis.api.ModelSpec;
import io.blis.latency.catalog.ModelSizes;

/**
 * Automatic KV-cache sizing: how many KV blocks vLLM allocates for a model on a GPU, computed the
 * way vLLM does it (device memory x {@code gpu_memory_utilization}, minus weights, minus the peak
 * activation and runtime memory it profiles), per GPU of the tensor-parallel group.
 *
 * <p>Per GPU, in bytes:
 *
 * <pre>
 *   budget   = memoryBytes x gpuMemoryUtilization
 *   weights  = parameterCount x weightBytesPerParam / TP        (every matrix is split over TP)
 *   overhead = activationPeak + runtimePerGpu x TP
 *   block    = 2 x layers x ceil(kvHeads / TP) x headDim x activationBytes x blockSizeTokens
 *            = layers x (kv_lora_rank + qk_rope_head_dim) x activationBytes x blockSizeTokens
 *                                                             (multi-head latent attention)
 *   blocks   = floor((budget - weights - overhead) / block)
 * </pre>
 *
 * Every GPU holds its share of the heads of every block, so the per-GPU count is the instance's
 * block count. Under multi-head latent attention every GPU holds the whole latent of every block,
 * so a block does not shrink with TP ({@link ModelSizes#kvBytesPerTokenPerGpu}). Overheads (fitted to the counts vLLM 0.15 logged on H100 with {@code
 * max_num_batched_tokens} 2048, documented in docs/latency-models.md): the activation peak of the
 * profiling forward pass is {@value #DENSE_ACTIVATION_GIB} GiB for dense models and {@value
 * #MOE_ACTIVATION_GIB} GiB for MoE models (fused-MoE intermediate buffers); non-torch runtime
 * memory (NCCL and cuBLAS workspaces, allocator slack) is {@value #RUNTIME_GIB_PER_TP_RANK} GiB per
 * GPU of the group. With these, Llama-2-7B TP1 gives 7462 blocks (vLLM logged 7462), Llama-2-70B
 * TP4 31359 (31356) and Mixtral-8x7B TP2 27520 (27510), all within 0.1%.
 */
public final class KvCapacity {

  /** Peak activation memory of a dense model's profiling pass, GiB per GPU. */
  public static final double DENSE_ACTIVATION_GIB = 0.27;

  /** Peak activation memory of an MoE model's profiling pass, GiB per GPU. */
  public static final double MOE_ACTIVATION_GIB = 0.60;

  /** Non-torch runtime memory, GiB per GPU for every GPU of the tensor-parallel group. */
  public static final double RUNTIME_GIB_PER_TP_RANK = 0.15;

  private static final double GIB = 1024.0 * 1024.0 * 1024.0;
  private static final int MAX_TP = 64;

  private KvCapacity() {}

  /**
   * Number of KV blocks of {@code blockSizeTokens} tokens the instance can hold.
   *
   * @throws IllegalArgumentException if an argument is out of range, the attention heads are not
   *     divisible by {@code tp}, or the model does not fit (the message names the smallest TP at
   *     which it fits)
   */
  public static long totalBlocks(
      ModelSpec model, HardwareSpec gpu, int tp, double gpuMemoryUtilization, int blockSizeTokens) {
    validate(model, tp, gpuMemoryUtilization, blockSizeTokens);
    double free = freeBytesPerGpu(model, gpu, tp, gpuMemoryUtilization);
    long blockBytes = ModelSizes.kvBytesPerTokenPerGpu(model, tp) * blockSizeTokens;
    if (free < blockBytes) {
      throw new IllegalArgumentException(
          notFitting(model, gpu, tp, gpuMemoryUtilization, blockBytes - free));
    }
    return (long) Math.floor(free / blockBytes);
  }

  /**
   * Bytes left for the KV cache on one GPU: budget minus weights minus overheads (negative when the
   * model does not fit).
   */
  public static double freeBytesPerGpu(
      ModelSpec model, HardwareSpec gpu, int tp, double gpuMemoryUtilization) {
    double budget = gpu.memoryBytes() * gpuMemoryUtilization;
    double weights = ModelSizes.weightBytes(model) / tp;
    double activation = (model.isMoe() ? MOE_ACTIVATION_GIB : DENSE_ACTIVATION_GIB) * GIB;
    double runtime = RUNTIME_GIB_PER_TP_RANK * tp * GIB;
    return budget - weights - activation - runtime;
  }

  private static void validate(ModelSpec model, int tp, double util, int blockSizeTokens) {
    if (!(util > 0 && util <= 1)) {
      throw new IllegalArgumentException(
          "gpu-memory-utilization must be in (0, 1], got " + util);
    }
    if (blockSizeTokens < 1) {
      throw new IllegalArgumentException("block size must be >= 1 token, got " + blockSizeTokens);
    }
    ModelSizes.checkTensorParallel(model, tp);
  }

  private static String notFitting(
      ModelSpec model, HardwareSpec gpu, int tp, double util, double shortBytes) {
    String need =
        String.format(
            "%s does not fit on %d x %s at gpu-memory-utilization %.2f: %.2f GiB short per GPU",
            model.name(), tp, gpu.name(), util, shortBytes / GIB);
    for (int t = tp + 1; t <= MAX_TP; t++) {
      if (ModelSizes.splitsOver(model, t)
          && freeBytesPerGpu(model, gpu, t, util) >= ModelSizes.kvBytesPerTokenPerGpu(model, t)) {
        return need + "; the minimum tensor parallelism that fits is " + t;
      }
    }
    return need + "; it does not fit at any tensor parallelism up to " + MAX_TP;
  }
}
