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
 * @param interconnectBandwidthBytesPerS per-GPU, per-direction bandwidth of the link used by
 *     tensor-parallel collectives (NVLink, or PCIe without NVLink), bytes/s
 */
public record GpuSpec(
    String name,
    double peakFlopsBf16,
    double peakFlopsFp8,
    double memoryBandwidthBytesPerS,
    long memoryBytes,
    double interconnectBandwidthBytesPerS)
    implements HardwareSpec {

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
  }

  private static void positive(String gpu, String field, double v) {
    if (!Double.isFinite(v) || v <= 0) {
      throw new IllegalArgumentException(gpu + ": " + field + " must be a finite number > 0, got " + v);
    }
  }

  /**
   * Peak dense tensor throughput for weights of {@code weightBytesPerParam} bytes: the fp8 rate
   * for 1-byte weights on GPUs that have fp8 tensor cores, the bf16 rate otherwise. FLOP/s.
   */
  public static double peakFlopsFor(HardwareSpec gpu, double weightBytesPerParam) {
    return weightBytesPerParam <= 1.0 && gpu.peakFlopsFp8() > 0
        ? gpu.peakFlopsFp8()
        : gpu.peakFlopsBf16();
  }
}
