package io.blis.latency.lora;

import io.blis.api.HardwareSpec;
import io.blis.api.ModelSpec;
import io.blis.latency.catalog.ModelSizes;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;

/**
 * Sizes and costs of LoRA adapters on a model, from its {@code config.json} and the GPU's
 * datasheet, as vLLM serves them ({@code --enable-lora}).
 *
 * <p><b>Which matrices.</b> vLLM wraps every linear layer of the decoder it supports: the fused
 * QKV projection (three slices), the output projection, the fused gate/up projection (two slices,
 * one without a gate) and the down projection. An adapter of rank {@code r} on a module of input
 * width {@code in} and output width {@code out} adds {@code A} ({@code r x in}) and {@code B}
 * ({@code out x r}). Column-parallel modules (QKV, gate/up) keep {@code A} whole on every
 * tensor-parallel GPU and split {@code B}'s rows; row-parallel ones (O, down) split {@code A}'s
 * columns and keep {@code B} whole (vLLM's default, without {@code fully_sharded_loras}). The
 * routed experts of mixture-of-experts layers are not wrapped here (their dense layers and every
 * attention block are); latent attention is sized as if its heads were ordinary ones.
 *
 * <p><b>Memory.</b> vLLM allocates, before it profiles memory for the KV cache, a buffer of
 * {@code max_loras} slots of rank {@code max_lora_rank} for every wrapped module, whatever
 * modules the adapters target: {@link #slotBytesPerGpu} per slot comes out of the KV budget.
 *
 * <p><b>Step cost.</b> The Punica kernels vLLM runs (SGMV/BGMV, Chen et al. 2023, "Punica:
 * Multi-Tenant LoRA Serving"; S-LoRA, Sheng et al. 2023, batches them the same way) apply the
 * adapters of a mixed batch in two launches per wrapped module: a shrink ({@code x A}, each
 * token with its own adapter's {@code A}) and an expand ({@code (x A) B} added into the output).
 * Each reads the distinct adapters' matrices once and the batch's activations, so at decode they
 * are memory- and launch-bound: {@link #stepOverheadUs} charges each launch the larger of a
 * floor ({@value #KERNEL_FLOOR_US} us: the median time of the small element-wise kernels of a
 * layer at up to 128 tokens on H100 and A100 in the public kernel profiles, Vidur's data in
 * reference/kernel-profiles) and its bytes at {@value #BANDWIDTH_EFFICIENCY} of the HBM bandwidth
 * or its FLOPs at {@value #FLOPS_EFFICIENCY} of the bf16 peak (the kernels are small GEMMs of
 * rank width).
 */
public final class LoraSizes {

  /** Time of one small kernel launch of a decoder layer, microseconds (see the class comment). */
  public static final double KERNEL_FLOOR_US = 4.0;

  /** Fraction of the HBM bandwidth the LoRA kernels realize. */
  public static final double BANDWIDTH_EFFICIENCY = 0.7;

  /** Fraction of the bf16 tensor peak the LoRA kernels realize (rank-wide GEMMs). */
  public static final double FLOPS_EFFICIENCY = 0.3;

  /** The linear modules an adapter may target, by the names PEFT's {@code target_modules} use. */
  public enum Target {
    Q_PROJ, K_PROJ, V_PROJ, O_PROJ, GATE_PROJ, UP_PROJ, DOWN_PROJ;

    /** The PEFT name, for example {@code q_proj}. */
    public String peftName() {
      return name().toLowerCase(Locale.ROOT);
    }

    /**
     * The target named {@code name} ({@code q_proj}, ...).
     *
     * @throws IllegalArgumentException naming the accepted names when there is none
     */
    public static Target parse(String name) {
      for (Target t : values()) {
        if (t.peftName().equals(name)) {
          return t;
        }
      }
      throw new IllegalArgumentException("unknown LoRA target module '" + io.blis.latency.coeff.InputTrees.oneLine(name) + "'; expected q_proj, k_proj,"
          + " v_proj, o_proj, gate_proj, up_proj or down_proj");
    }
  }

  /** Every linear module ({@code all-linear}). */
  public static final Set<Target> ALL_LINEAR = EnumSet.allOf(Target.class);

  private LoraSizes() {}

  /** One module of one layer: widths, whether column-parallel, and its launch group. */
  private record Module(Target target, long in, long out, boolean column, int group) {}

  /** The wrapped modules of one dense layer (attention and FFN) of {@code m}. */
  private static Module[] modules(ModelSpec m, boolean withFfn) {
    long h = m.hiddenSize();
    long q = (long) m.numAttentionHeads() * m.headDim();
    long kv = (long) m.numKeyValueHeads() * m.headDim();
    long ffn = m.intermediateSize();
    boolean gated = ModelSizes.mlpMatrices(m) == 3;
    java.util.List<Module> out = new java.util.ArrayList<>();
    out.add(new Module(Target.Q_PROJ, h, q, true, 0));
    out.add(new Module(Target.K_PROJ, h, kv, true, 0));
    out.add(new Module(Target.V_PROJ, h, kv, true, 0));
    out.add(new Module(Target.O_PROJ, q, h, false, 1));
    if (withFfn) {
      if (gated) {
        out.add(new Module(Target.GATE_PROJ, h, ffn, true, 2));
      }
      out.add(new Module(Target.UP_PROJ, h, ffn, true, 2));
      out.add(new Module(Target.DOWN_PROJ, ffn, h, false, 3));
    }
    return out.toArray(new Module[0]);
  }

  /** Layers whose FFN vLLM wraps: all of a dense model, the dense ones of a mixture of experts. */
  private static int ffnLayers(ModelSpec m) {
    return m.isMoe() ? Math.max(0, m.numLayers() - m.numMoeLayers()) : m.numLayers();
  }

  /** Parameters of rank {@code r} on one module held by one of {@code tp} GPUs. */
  private static double paramsPerGpu(Module mod, int rank, int tp) {
    return mod.column() ? rank * (mod.in() + (double) mod.out() / tp) : rank * ((double) mod.in() / tp + mod.out());
  }

  private static double bytes(ModelSpec m, int tp, int rank, Set<Target> targets, int dtypeBytes, boolean perGpu) {
    check(rank, dtypeBytes);
    double sum = 0;
    int ffn = ffnLayers(m);
    for (int withFfn = 0; withFfn < 2; withFfn++) {
      int layers = withFfn == 1 ? ffn : m.numLayers() - ffn;
      if (layers == 0) {
        continue;
      }
      for (Module mod : modules(m, withFfn == 1)) {
        if (targets.contains(mod.target())) {
          sum += layers * (perGpu ? paramsPerGpu(mod, rank, tp) : (double) rank * (mod.in() + mod.out()));
        }
      }
    }
    return sum * dtypeBytes;
  }

  private static void check(int rank, int dtypeBytes) {
    if (rank < 1) {
      throw new IllegalArgumentException("LoRA rank must be >= 1, got " + rank);
    }
    if (dtypeBytes < 1) {
      throw new IllegalArgumentException("LoRA weight bytes per element must be >= 1, got " + dtypeBytes);
    }
  }

  /**
   * Bytes of an adapter's weights as a checkpoint holds them (every tensor-parallel GPU reads the
   * whole file).
   *
   * @param rank the adapter's rank
   * @param targets the modules it adapts
   * @param dtypeBytes bytes per weight (2 for bf16)
   */
  public static long adapterBytes(ModelSpec m, int rank, Set<Target> targets, int dtypeBytes) {
    return Math.round(bytes(m, 1, rank, targets, dtypeBytes, false));
  }

  /** Bytes of an adapter's weights one of {@code tp} GPUs holds in its slot. */
  public static long adapterBytesPerGpu(ModelSpec m, int tp, int rank, Set<Target> targets, int dtypeBytes) {
    return Math.round(bytes(m, tp, rank, targets, dtypeBytes, true));
  }

  /**
   * Bytes one GPU of {@code tp} reserves for one adapter slot: every wrapped module at {@code
   * maxLoraRank}.
   */
  public static long slotBytesPerGpu(ModelSpec m, int tp, int maxLoraRank, int dtypeBytes) {
    return adapterBytesPerGpu(m, tp, maxLoraRank, ALL_LINEAR, dtypeBytes);
  }

  /**
   * Tensors vLLM copies into a slot when it activates an adapter: an {@code A} and a {@code B} per
   * wrapped module slice and layer, each its own host-to-device copy.
   */
  public static int slotTensors(ModelSpec m) {
    int ffn = ffnLayers(m);
    return 2 * (ffn * modules(m, true).length + (m.numLayers() - ffn) * modules(m, false).length);
  }

  /**
   * Extra time of one engine step for its LoRA adapters (see the class comment): two launches per
   * wrapped module group (QKV, O, gate/up, down) of every layer of the pipeline stage.
   *
   * @param gpu the GPU
   * @param tp the tensor-parallel degree
   * @param layers the layers one GPU runs (the model's, or one pipeline stage's)
   * @param ranks the rank of each distinct adapter of the batch
   * @param tokens the tokens of the batch that use each of those adapters, in the same order
   * @param dtypeBytes bytes per weight and activation element (2 for bf16)
   * @return microseconds; 0 when no adapter is in the batch
   */
  public static double stepOverheadUs(ModelSpec m, HardwareSpec gpu, int tp, int layers, int[] ranks, int[] tokens,
      int dtypeBytes) {
    return stepOverheadUs(m, gpu, tp, layers, ranks, tokens, ranks.length, dtypeBytes);
  }

  /**
   * As {@link #stepOverheadUs(ModelSpec, HardwareSpec, int, int, int[], int[], int)} for the first
   * {@code n} adapters of {@code ranks} and {@code tokens} (arrays a caller reuses step after step).
   */
  public static double stepOverheadUs(ModelSpec m, HardwareSpec gpu, int tp, int layers, int[] ranks, int[] tokens,
      int n, int dtypeBytes) {
    if (n == 0) {
      return 0;
    }
    double bw = gpu.memoryBandwidthBytesPerS() * BANDWIDTH_EFFICIENCY;
    double flopsRate = gpu.peakFlopsBf16() * FLOPS_EFFICIENCY;
    int ffn = ffnLayers(m);
    double us = 0;
    for (int withFfn = 0; withFfn < 2; withFfn++) {
      int kinds = withFfn == 1 ? ffn : m.numLayers() - ffn; // layers of this kind
      if (kinds == 0) {
        continue;
      }
      Module[] mods = modules(m, withFfn == 1);
      for (int group = 0; group < 4; group++) {
        double shrinkBytes = 0;
        double expandBytes = 0;
        double shrinkFlops = 0;
        double expandFlops = 0;
        boolean any = false;
        for (Module mod : mods) {
          if (mod.group() != group) {
            continue;
          }
          any = true;
          double inLocal = mod.column() ? mod.in() : (double) mod.in() / tp;
          double outLocal = mod.column() ? (double) mod.out() / tp : mod.out();
          for (int a = 0; a < n; a++) {
            shrinkBytes += (double) ranks[a] * inLocal * dtypeBytes + (double) tokens[a] * inLocal * dtypeBytes;
            expandBytes += (double) ranks[a] * outLocal * dtypeBytes + 2.0 * tokens[a] * outLocal * dtypeBytes;
            shrinkFlops += 2.0 * tokens[a] * ranks[a] * inLocal;
            expandFlops += 2.0 * tokens[a] * ranks[a] * outLocal;
          }
        }
        if (any) {
          us += kinds * (kernelUs(shrinkBytes, shrinkFlops, bw, flopsRate) + kernelUs(expandBytes, expandFlops, bw, flopsRate));
        }
      }
    }
    return us * layers / m.numLayers();
  }

  private static double kernelUs(double bytes, double flops, double bw, double flopsRate) {
    return Math.max(KERNEL_FLOOR_US, Math.max(bytes / bw, flops / flopsRate) * 1e6);
  }
}
