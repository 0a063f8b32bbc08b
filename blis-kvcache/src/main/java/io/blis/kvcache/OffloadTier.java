package io.blis.kvcache;

/**
 * One secondary KV offload tier behind the CPU tier (vLLM's tiered offloading with a file-system
 * backend: a local NVMe drive or a network file system). Every block stored in the CPU tier is
 * also written here; a block found here and nowhere nearer is read back into the CPU tier before
 * the GPU can load it. The tier holds every block written to it (no capacity).
 *
 * <p>Reads and writes are served by I/O threads as vLLM's thread pool serves them: {@code
 * readThreads} threads take reads first and writes when no read waits, {@code writeThreads} the
 * reverse. One transfer takes {@code baseLatencyUs + bytes / bandwidth}, where the bandwidth may
 * grow with the transfers of the same direction in service: {@code singleTransferFraction} of the
 * peak for one, rising linearly to the peak at {@code saturationQueueDepth} (1 for none).
 *
 * @param readThreads threads that prefer reads (vLLM's {@code n_read_threads}), at least 0
 * @param writeThreads threads that prefer writes ({@code n_write_threads}), at least 0; the two
 *     together at least 1
 * @param readBytesPerUs peak read bandwidth, bytes per microsecond (MB/s), above 0
 * @param writeBytesPerUs peak write bandwidth, bytes per microsecond, above 0
 * @param baseLatencyUs fixed time of each transfer, microseconds, at least 0
 * @param saturationQueueDepth transfers in service at which the peak bandwidth is reached, at
 *     least 1
 * @param singleTransferFraction share of the peak one transfer alone reaches, in (0, 1]
 */
public record OffloadTier(int readThreads, int writeThreads, double readBytesPerUs, double writeBytesPerUs,
    double baseLatencyUs, int saturationQueueDepth, double singleTransferFraction) {

  /** A tier whose bandwidth does not depend on the transfers in service. */
  public OffloadTier(int readThreads, int writeThreads, double readBytesPerUs, double writeBytesPerUs,
      double baseLatencyUs) {
    this(readThreads, writeThreads, readBytesPerUs, writeBytesPerUs, baseLatencyUs, 1, 1.0);
  }

  public OffloadTier {
    if (readThreads < 0 || writeThreads < 0 || readThreads + writeThreads < 1) {
      throw new IllegalArgumentException("offload tier: read and write threads must be >= 0 and at least one in"
          + " all, got " + readThreads + " and " + writeThreads);
    }
    if (!(readBytesPerUs > 0) || !(writeBytesPerUs > 0) || Double.isInfinite(readBytesPerUs)
        || Double.isInfinite(writeBytesPerUs)) {
      throw new IllegalArgumentException("offload tier: read and write bandwidths must be finite and above 0, got "
          + readBytesPerUs + " and " + writeBytesPerUs);
    }
    if (!(baseLatencyUs >= 0) || Double.isInfinite(baseLatencyUs)) {
      throw new IllegalArgumentException("offload tier: base latency must be finite and >= 0, got " + baseLatencyUs);
    }
    if (saturationQueueDepth < 1) {
      throw new IllegalArgumentException("offload tier: saturation queue depth must be at least 1, got "
          + saturationQueueDepth);
    }
    if (!(singleTransferFraction > 0 && singleTransferFraction <= 1)) {
      throw new IllegalArgumentException("offload tier: single-transfer fraction must be in (0, 1], got "
          + singleTransferFraction);
    }
  }

  /**
   * Microseconds one transfer of {@code bytes} takes while {@code inService} transfers of its
   * direction (itself included) are in service; at least 1.
   */
  public long transferUs(boolean read, long bytes, int inService) {
    double peak = read ? readBytesPerUs : writeBytesPerUs;
    double share = 1.0;
    if (saturationQueueDepth > 1 && inService < saturationQueueDepth) {
      int q = Math.max(1, inService);
      share = singleTransferFraction + (1 - singleTransferFraction) * (q - 1) / (saturationQueueDepth - 1);
    }
    double us = baseLatencyUs + bytes / (peak * share);
    return Math.max(1L, (long) Math.min(Math.ceil(us), 3_600_000_000.0));
  }
}
