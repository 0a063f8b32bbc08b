package io.blis.latency.catalog;

import io.blis.api.HardwareSpec;

/**
 * How much longer (above 1) or shorter (below 1) each kind of kernel work takes on a GPU than its
 * datasheet ratio to the {@linkplain GpuEfficiency#ANCHOR anchor GPU} says, from the two GPUs'
 * {@link GpuEfficiency} entries. The step model's ideal times are datasheet times; multiplying each
 * by its scale turns "the anchor GPU's coefficients at this GPU's peaks" into "at this GPU's
 * realized rates". On the anchor GPU, and on a GPU without an entry, every scale is exactly 1.
 *
 * <ul>
 *   <li>{@link #weights()}: weight streaming (dense and expert weights, MoE routing bytes, the
 *       sampler's passes over the logits): anchor GEMM bandwidth share / this GPU's;
 *   <li>{@link #kv()}: KV-cache reads and writes: anchor decode-attention bandwidth share / this
 *       GPU's;
 *   <li>{@link #prefillFlops()}: FLOPs of prefill GEMMs and attention: anchor FLOP share / this
 *       GPU's;
 *   <li>{@link #decodeFlops()}: the added cost of a decode token, per FLOP at peak: this GPU's decode
 *       GEMM cost / the anchor's;
 *   <li>{@link #layer()}: the fixed time of a layer's kernels (four GEMMs' fixed times and the
 *       element-wise kernels at the model's hidden size): this GPU's / the anchor's;
 *   <li>{@link #smallKernels()}: the element-wise kind of kernel (the per-step sampling chain): this
 *       GPU's / the anchor's;
 *   <li>{@link #gemmFixed()}: one GEMM kernel's fixed time (per MoE layer): this GPU's / the
 *       anchor's;
 *   <li>{@link #allReduceLatency()} and {@link #allReduceBandwidth()}: a tensor-parallel all-reduce
 *       of the deployment's group size, its latency (this GPU's / the anchor's) and its bytes (anchor
 *       bus-bandwidth share / this GPU's).
 * </ul>
 */
public record KernelScales(double weights, double kv, double prefillFlops, double decodeFlops,
    double layer, double smallKernels, double gemmFixed, double allReduceLatency, double allReduceBandwidth) {

  /** Every scale 1: the anchor GPU, or a GPU nothing is known of. */
  public static final KernelScales ONE = new KernelScales(1, 1, 1, 1, 1, 1, 1, 1, 1);

  /** GEMM kernels of one transformer layer: the fused QKV, output, gate-up and down projections. */
  static final int GEMMS_PER_LAYER = 4;

  /** The efficiency entry of {@code gpu}: its own, or null when it has none. */
  public static GpuEfficiency efficiencyOf(HardwareSpec gpu) {
    return gpu instanceof GpuSpec g ? g.efficiency() : null;
  }

  /** The anchor GPU's entry (bundled, measured). */
  public static GpuEfficiency anchor() {
    return GpuCatalog.byName(GpuEfficiency.ANCHOR).efficiency();
  }

  /**
   * The scales of {@code gpu} for a model of hidden size {@code hidden} whose layers all-reduce
   * over {@code tp} GPUs.
   */
  public static KernelScales of(HardwareSpec gpu, int tp, int hidden) {
    GpuEfficiency e = efficiencyOf(gpu);
    GpuEfficiency a = e == null ? null : anchor();
    return e == null || a == null ? ONE : between(e, a, tp, hidden, gpu);
  }

  /**
   * The scales of a GPU with entry {@code e} against an anchor with entry {@code a}; {@code gpu}
   * gives the link figures when {@code e} measured no all-reduce (its latency then scales with the
   * catalog's link latency against the anchor's, its bandwidth as the datasheet says).
   */
  static KernelScales between(GpuEfficiency e, GpuEfficiency a, int tp, int hidden, HardwareSpec gpu) {
    if (e == a || e.equals(a)) {
      return ONE;
    }
    double kh = hidden / 1000.0;
    double layer = (GEMMS_PER_LAYER * e.gemmFixedUs() + e.elementwiseUsPerKiloHidden() * kh)
        / (GEMMS_PER_LAYER * a.gemmFixedUs() + a.elementwiseUsPerKiloHidden() * kh);
    double arLatency = 1.0;
    double arBandwidth = 1.0;
    if (tp > 1) {
      var mine = e.allReduceFor(tp);
      var theirs = a.allReduceFor(tp);
      if (mine.isPresent() && theirs.isPresent()) {
        arLatency = mine.get().latencyUs() / theirs.get().latencyUs();
        arBandwidth = theirs.get().busBandwidthFraction() / mine.get().busBandwidthFraction();
      } else {
        HardwareSpec anchorGpu = GpuCatalog.byName(GpuEfficiency.ANCHOR);
        arLatency = gpu.interconnectLatencyS() / anchorGpu.interconnectLatencyS();
      }
    }
    return new KernelScales(
        a.gemmBandwidthFraction() / e.gemmBandwidthFraction(),
        a.decodeAttentionFraction() / e.decodeAttentionFraction(),
        a.gemmFlopsFraction() / e.gemmFlopsFraction(),
        e.decodeGemmCost() / a.decodeGemmCost(),
        layer,
        e.elementwiseUsPerKiloHidden() / a.elementwiseUsPerKiloHidden(),
        e.gemmFixedUs() / a.gemmFixedUs(),
        arLatency,
        arBandwidth);
  }
}
