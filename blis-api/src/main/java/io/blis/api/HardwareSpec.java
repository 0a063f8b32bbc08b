package io.blis.api;

/** Datasheet figures of one GPU. Rates are per second, sizes in bytes. */
public interface HardwareSpec {

  /** {@return the catalog name, e.g. {@code H100}} */
  String name();

  /** {@return the peak dense bf16/fp16 tensor throughput, FLOP/s} */
  double peakFlopsBf16();

  /**
   * {@return the peak dense fp8 tensor throughput, FLOP/s; 0 when the GPU has no fp8 tensor
   * cores}
   */
  double peakFlopsFp8();

  /** {@return the HBM (device memory) bandwidth, bytes/s} */
  double memoryBandwidthBytesPerS();

  /** {@return the device memory, bytes} */
  long memoryBytes();

  /**
   * Per-GPU, per-direction bandwidth of the link between GPUs of one node (NVLink, or PCIe without
   * it), used by collectives that stay within a node, bytes/s.
   *
   * @return the intra-node link bandwidth, bytes/s
   */
  double interconnectBandwidthBytesPerS();

  /**
   * {@return the GPUs one node holds, all joined by {@link #interconnectBandwidthBytesPerS()}} 8 by
   * default.
   */
  default int gpusPerNode() {
    return 8;
  }

  /**
   * Per-GPU, per-direction bandwidth between nodes (InfiniBand or RoCE), bytes/s: 50 GB/s (one 400
   * Gb/s NIC per GPU) by default.
   *
   * @return the inter-node bandwidth, bytes/s
   */
  default double interNodeBandwidthBytesPerS() {
    return 50e9;
  }

  /**
   * {@return the latency of one transfer over the link within a node, seconds} 3 us by default.
   */
  default double interconnectLatencyS() {
    return 3e-6;
  }

  /** {@return the latency of one transfer between nodes, seconds} 10 us by default. */
  default double interNodeLatencyS() {
    return 10e-6;
  }
}
