package io.blis.api;

/** Datasheet figures of one GPU. Rates are per second, sizes in bytes. */
public interface HardwareSpec {

  /** Catalog name, e.g. {@code H100}. */
  String name();

  /** Peak dense bf16/fp16 tensor throughput, FLOP/s. */
  double peakFlopsBf16();

  /** Peak dense fp8 tensor throughput, FLOP/s; 0 when the GPU has no fp8 tensor cores. */
  double peakFlopsFp8();

  /** HBM (device memory) bandwidth, bytes/s. */
  double memoryBandwidthBytesPerS();

  /** Device memory, bytes. */
  long memoryBytes();

  /** Per-GPU interconnect bandwidth used by tensor-parallel collectives, bytes/s. */
  double interconnectBandwidthBytesPerS();
}
