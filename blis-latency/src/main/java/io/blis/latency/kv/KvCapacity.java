package io.blis.latency.kv;

import io.blis.api.HardwareSpec;
import io.blis.api.ModelSpec;
import io.blis.latency.catalog.ModelSizes;
import io.blis.latency.layout.Layout;
import java.util.Locale;
import java.util.function.IntToDoubleFunction;

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
 *
 * <p>Under a {@link Layout} with pipeline, data or expert parallelism: the routed experts are
 * divided over the {@code tp x dp} GPUs of the MoE group and everything else over {@code tp}; a
 * pipeline stage holds {@code 1 / pp} of the weights and the KV cache of its {@code ceil(layers /
 * pp)} layers, so a block costs that share of the bytes above; and every data-parallel rank has
 * its own cache of the number of blocks computed (the count returned is per rank). Multi-head
 * latent attention keeps its whole latent on every tensor-parallel GPU, so its block does not
 * shrink with TP ({@link ModelSizes#kvBytesPerTokenPerGpu}), and its down-projections whole too
 * ({@link ModelSizes#mlaReplicatedParamsPerLayer}).
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
    return totalBlocks(model, gpu, Layout.tensorParallel(tp), gpuMemoryUtilization, blockSizeTokens);
  }

  /**
   * Number of KV blocks of {@code blockSizeTokens} tokens one scheduler of the instance can hold:
   * the instance's, or one data-parallel rank's.
   *
   * @throws IllegalArgumentException as {@link #totalBlocks(ModelSpec, HardwareSpec, int, double,
   *     int)}, or when the model cannot be laid out so ({@link Layout#check})
   */
  public static long totalBlocks(ModelSpec model, HardwareSpec gpu, Layout layout,
      double gpuMemoryUtilization, int blockSizeTokens) {
    return totalBlocks(model, gpu, layout, gpuMemoryUtilization, blockSizeTokens, 0);
  }

  /**
   * As {@link #totalBlocks(ModelSpec, HardwareSpec, Layout, double, int)} when every GPU also
   * reserves {@code reservedBytesPerGpu} before the KV cache is sized (vLLM's LoRA slots, say).
   */
  public static long totalBlocks(ModelSpec model, HardwareSpec gpu, Layout layout,
      double gpuMemoryUtilization, int blockSizeTokens, double reservedBytesPerGpu) {
    return totalBlocks(model, gpu, layout, gpuMemoryUtilization, blockSizeTokens, t -> reservedBytesPerGpu,
        "the reserved memory");
  }

  /**
   * As {@link #totalBlocks(ModelSpec, HardwareSpec, Layout, double, int)} when every GPU also
   * reserves memory before the KV cache is sized (vLLM's LoRA slots, a drafter's weights): {@code
   * reservedAtTp} gives the bytes per GPU at a tensor-parallel degree (this layout's, and the
   * others' for the message when the model does not fit), {@code reservedWhat} names what takes
   * them in that message ("the LoRA adapter slots", say): when they leave no room for the KV cache
   * at any degree, the message says so rather than naming a degree at which the model alone fits.
   */
  public static long totalBlocks(ModelSpec model, HardwareSpec gpu, Layout layout,
      double gpuMemoryUtilization, int blockSizeTokens, IntToDoubleFunction reservedAtTp, String reservedWhat) {
    validate(model, layout, gpuMemoryUtilization, blockSizeTokens);
    double reservedBytesPerGpu = reservedAtTp.applyAsDouble(layout.tp());
    if (!(reservedBytesPerGpu >= 0)) {
      throw new IllegalArgumentException("reserved memory must be >= 0 bytes, got " + reservedBytesPerGpu);
    }
    double free = freeBytesPerGpu(model, gpu, layout, gpuMemoryUtilization) - reservedBytesPerGpu;
    double blockBytes = blockBytesPerGpu(model, layout, blockSizeTokens);
    if (free < blockBytes) {
      throw new IllegalArgumentException(notFitting(model, gpu, layout, gpuMemoryUtilization, blockBytes - free,
          reservedAtTp, reservedWhat));
    }
    return (long) Math.floor(free / blockBytes);
  }

  /** Bytes one KV block takes on one GPU of {@code layout}: its stage's layers, its TP share. */
  public static double blockBytesPerGpu(ModelSpec model, Layout layout, int blockSizeTokens) {
    // a block of the pool is the full-attention layers' pages; sliding-window and recurrent layers
    // take blocks of the same size per request apart (vLLM's hybrid KV-cache manager; HybridKv)
    return (double) ModelSizes.kvBytesPerTokenPerGpu(model, layout.tp()) * blockSizeTokens
        * layout.layersPerStage(model) / model.numLayers() * ModelSizes.fullAttentionShare(model);
  }

  /** Weight bytes one GPU of {@code layout} holds. */
  public static double weightBytesPerGpu(ModelSpec model, Layout layout) {
    // latent attention's down-projections are whole on every tensor-parallel GPU
    double replicated = (double) ModelSizes.mlaReplicatedParamsPerLayer(model) * model.numLayers()
        * (layout.tp() - 1) / layout.tp() * model.weightBytesPerParam() / layout.pp();
    if (layout.moeGroup() == layout.tp()) {
      // every weight split tp ways: the same arithmetic as before layouts, so the same block counts
      return ModelSizes.weightBytes(model) / layout.tp() / layout.pp() + replicated;
    }
    double experts = ModelSizes.routedExpertParams(model);
    double rest = ModelSizes.parameterCount(model) - experts;
    return (rest / layout.tp() * model.weightBytesPerParam()
        + experts / layout.moeGroup() * model.expertWeightBytesPerParam()) / layout.pp() + replicated;
  }

  /**
   * Bytes left for the KV cache on one GPU: budget minus weights minus overheads (negative when the
   * model does not fit).
   */
  public static double freeBytesPerGpu(
      ModelSpec model, HardwareSpec gpu, int tp, double gpuMemoryUtilization) {
    return freeBytesPerGpu(model, gpu, Layout.tensorParallel(tp), gpuMemoryUtilization);
  }

  /** As {@link #freeBytesPerGpu(ModelSpec, HardwareSpec, int, double)} for one GPU of {@code layout}. */
  public static double freeBytesPerGpu(
      ModelSpec model, HardwareSpec gpu, Layout layout, double gpuMemoryUtilization) {
    double budget = gpu.memoryBytes() * gpuMemoryUtilization;
    double weights = weightBytesPerGpu(model, layout);
    double activation = (model.isMoe() ? MOE_ACTIVATION_GIB : DENSE_ACTIVATION_GIB) * GIB;
    double runtime = RUNTIME_GIB_PER_TP_RANK * layout.tp() * GIB;
    return budget - weights - activation - runtime;
  }

  private static void validate(ModelSpec model, Layout layout, double util, int blockSizeTokens) {
    if (!(util > 0 && util <= 1)) {
      throw new IllegalArgumentException(
          "gpu-memory-utilization must be in (0, 1], got " + util);
    }
    if (blockSizeTokens < 1) {
      throw new IllegalArgumentException("block size must be >= 1 token, got " + blockSizeTokens);
    }
    layout.check(model);
  }

  private static String notFitting(ModelSpec model, HardwareSpec gpu, Layout layout, double util, double shortBytes,
      IntToDoubleFunction reservedAtTp, String reservedWhat) {
    int tp = layout.tp();
    String need =
        String.format(
            "%s does not fit on %d x %s at gpu-memory-utilization %.2f: %.2f GiB short per GPU",
            model.name(), layout.gpus(), gpu.name(), util, shortBytes / GIB);
    if (layout.gpus() != tp) {
      return need + " (layout " + layout + "); spread it over more GPUs (tp, pp, or dp with expert"
          + " parallelism)";
    }
    int largest = 0; // the largest degree the model splits over, and whether it fits there without the reservation
    boolean fitsWithout = false;
    for (int t = tp + 1; t <= MAX_TP; t++) {
      if (!ModelSizes.splitsOver(model, t)) {
        continue;
      }
      largest = t;
      double room = freeBytesPerGpu(model, gpu, t, util) - ModelSizes.kvBytesPerTokenPerGpu(model, t);
      fitsWithout |= room >= 0;
      if (room >= reserved(reservedAtTp, t)) {
        return need + "; the minimum tensor parallelism that fits is " + t;
      }
    }
    double here = reserved(reservedAtTp, tp);
    if (here > 0 && (fitsWithout || freeBytesPerGpu(model, gpu, tp, util) >= ModelSizes.kvBytesPerTokenPerGpu(model, tp))) {
      // the model alone fits somewhere: what is reserved leaves no room for the KV cache anywhere
      int at = largest > 0 ? largest : tp;
      return need + String.format(Locale.ROOT, "; %s take %.2f GiB per GPU at tensor parallelism %d", reservedWhat,
          here / GIB, tp)
          + (at != tp && Double.isFinite(reserved(reservedAtTp, at))
              ? String.format(Locale.ROOT, " and still %.2f GiB at %d, where %.2f GiB are left after the weights",
                  reserved(reservedAtTp, at) / GIB, at, freeBytesPerGpu(model, gpu, at, util) / GIB)
              : String.format(Locale.ROOT, ", where %.2f GiB are left after the weights",
                  freeBytesPerGpu(model, gpu, tp, util) / GIB))
          + ": no tensor parallelism up to " + MAX_TP + " leaves room for the KV cache";
    }
    return need + "; it does not fit at any tensor parallelism up to " + MAX_TP;
  }

  /** The bytes reserved per GPU at {@code tp}; infinite where they cannot be laid out so. */
  private static double reserved(IntToDoubleFunction reservedAtTp, int tp) {
    try {
      double r = reservedAtTp.applyAsDouble(tp);
      return r >= 0 ? r : Double.POSITIVE_INFINITY;
    } catch (IllegalArgumentException e) {
      return Double.POSITIVE_INFINITY;
    }
  }
}
