package io.blis.latency.catalog;

import io.blis.api.HardwareSpec;

/**
 * Datasheet figures of one GPU: an immutable, validated {@link HardwareSpec}. Rates are per
 * second, sizes in bytes, FLOP/s figures are dense (without 2:4 structured sparsity).
 *
 * @param name catalog name, e.g. {@code H100}
 * @param peakFlopsBf16 peak dense bf16/fp16 tensor throughput, FLOP/s
 * @param peakFlopsFp8 peak dense fp8 tensor throughput, FLOP/s; 0 without fp8 tensor cores
 * @param memoryBandwidthBytesPerS device-memory bandwidth, bytes/s
 * @param memoryBytes device memory as CUDA reports its total, bytes
 * @param interconnectBandwidthBytesPerS per-GPU, per-direction bandwidth of the link between the
 *     GPUs of one node, used by tensor-parallel collectives (NVLink, or PCIe without NVLink),
 *     bytes/s
 * @param gpusPerNode GPUs one node holds, all joined by that link
 * @param interNodeBandwidthBytesPerS per-GPU, per-direction bandwidth between nodes (InfiniBand or
 *     RoCE), bytes/s
 * @param interconnectLatencyS latency of one transfer over the link within a node, seconds
 * @param interNodeLatencyS latency of one transfer between nodes, seconds
 * @param efficiency how much of this datasheet the GPU's kernels realize, measured or estimated
 *     ({@link GpuEfficiency}); null when nothing is known, and the step model then takes the GPU to
 *     realize the same shares as the {@linkplain GpuEfficiency#ANCHOR anchor GPU}
 */
public record GpuSpec(
    String name,
    double peakFlopsBf16,
    double peakFlopsFp8,
    double memoryBandwidthBytesPerS,
    long memoryBytes,
    double interconnectBandwidthBytesPerS,
    int gpusPerNode,
    double interNodeBandwidthBytesPerS,
    double interconnectLatencyS,
    double interNodeLatencyS,
    GpuEfficiency efficiency)
    implements HardwareSpec {

  /**
   * A GPU that states none of the node figures: the source of the {@link HardwareSpec} defaults
   * ({@link #gpusPerNode()}, {@link #interNodeBandwidthBytesPerS()} and the two latencies).
   */
  static final HardwareSpec NODE_DEFAULTS = new HardwareSpec() {
    @Override
    public String name() {
      return "HardwareSpec defaults";
    }

    @Override
    public double peakFlopsBf16() {
      return 0;
    }

    @Override
    public double peakFlopsFp8() {
      return 0;
    }

    @Override
    public double memoryBandwidthBytesPerS() {
      return 0;
    }

    @Override
    public long memoryBytes() {
      return 0;
    }

    @Override
    public double interconnectBandwidthBytesPerS() {
      return 0;
    }
  };

  /** Validates every field; messages name the GPU and the field. */
  public GpuSpec {
    if (name == null || name.isBlank()) {
      throw new IllegalArgumentException("GPU name must not be empty");
    }
    positive(name, "bf16_dense_tflops", peakFlopsBf16);
    if (!Double.isFinite(peakFlopsFp8) || peakFlopsFp8 < 0) {
      throw new IllegalArgumentException(
          name + ": fp8_dense_tflops must be finite and >= 0 (0 = no fp8), got " + peakFlopsFp8);
    }
    positive(name, "hbm_bandwidth_tb_s", memoryBandwidthBytesPerS);
    if (memoryBytes <= 0) {
      throw new IllegalArgumentException(name + ": memory must be > 0 bytes, got " + memoryBytes);
    }
    positive(name, "interconnect_gb_s", interconnectBandwidthBytesPerS);
    if (gpusPerNode < 1) {
      throw new IllegalArgumentException(name + ": gpus_per_node must be >= 1, got " + gpusPerNode);
    }
    positive(name, "inter_node_gb_s", interNodeBandwidthBytesPerS);
    nonNegative(name, "interconnect_latency_us", interconnectLatencyS);
    nonNegative(name, "inter_node_latency_us", interNodeLatencyS);
  }

  /** A GPU without a kernel-efficiency entry (taken to realize the anchor GPU's shares). */
  public GpuSpec(
      String name,
      double peakFlopsBf16,
      double peakFlopsFp8,
      double memoryBandwidthBytesPerS,
      long memoryBytes,
      double interconnectBandwidthBytesPerS,
      int gpusPerNode,
      double interNodeBandwidthBytesPerS,
      double interconnectLatencyS,
      double interNodeLatencyS) {
    this(name, peakFlopsBf16, peakFlopsFp8, memoryBandwidthBytesPerS, memoryBytes,
        interconnectBandwidthBytesPerS, gpusPerNode, interNodeBandwidthBytesPerS, interconnectLatencyS,
        interNodeLatencyS, null);
  }

  /** This GPU with another kernel-efficiency entry. */
  public GpuSpec withEfficiency(GpuEfficiency e) {
    return new GpuSpec(name, peakFlopsBf16, peakFlopsFp8, memoryBandwidthBytesPerS, memoryBytes,
        interconnectBandwidthBytesPerS, gpusPerNode, interNodeBandwidthBytesPerS, interconnectLatencyS,
        interNodeLatencyS, e);
  }

  /**
   * A GPU whose node figures (GPUs per node, inter-node bandwidth, the two latencies) are the
   * {@link HardwareSpec} defaults.
   */
  public GpuSpec(
      String name,
      double peakFlopsBf16,
      double peakFlopsFp8,
      double memoryBandwidthBytesPerS,
      long memoryBytes,
      double interconnectBandwidthBytesPerS) {
    this(name, peakFlopsBf16, peakFlopsFp8, memoryBandwidthBytesPerS, memoryBytes,
        interconnectBandwidthBytesPerS, NODE_DEFAULTS.gpusPerNode(),
        NODE_DEFAULTS.interNodeBandwidthBytesPerS(), NODE_DEFAULTS.interconnectLatencyS(),
        NODE_DEFAULTS.interNodeLatencyS());
  }

  private static void positive(String gpu, String field, double v) {
    if (!Double.isFinite(v) || v <= 0) {
      throw new IllegalArgumentException(gpu + ": " + field + " must be a finite number > 0, got " + v);
    }
  }

  private static void nonNegative(String gpu, String field, double seconds) {
    if (!Double.isFinite(seconds) || seconds < 0) {
      throw new IllegalArgumentException(
          gpu + ": " + field + " must be a finite number >= 0, got " + seconds + " s");
    }
  }

  /**
   * Peak dense tensor throughput for weights of {@code weightBytesPerParam} bytes: the fp8 rate
   * for 1-byte weights (FP8 or INT8 W8A8) on GPUs that have fp8 tensor cores, the bf16 rate
   * otherwise, 4-bit weights included (AWQ and GPTQ W4A16 kernels widen them to bf16 before the
   * multiply). FLOP/s.
   */
  public static double peakFlopsFor(HardwareSpec gpu, double weightBytesPerParam) {
    return weightBytesPerParam == 1.0 && gpu.peakFlopsFp8() > 0
        ? gpu.peakFlopsFp8()
        : gpu.peakFlopsBf16();
  }
}
