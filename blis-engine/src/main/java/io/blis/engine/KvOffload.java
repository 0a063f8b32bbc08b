package io.blis.engine;

/**
 * Sizing of the CPU KV tier that mirrors vLLM's OffloadingConnector ({@code --kv-offloading-size}),
 * shared by the CLI and the validation runs.
 */
public final class KvOffload {

  /** Host-to-GPU copy bandwidth per GPU assumed when none is given (PCIe Gen5 x16 in practice). */
  public static final double DEFAULT_BANDWIDTH_GBPS = 25.0;

  private KvOffload() {}

  /**
   * CPU blocks that {@code totalBytes} of host memory hold, summed over the {@code tp} ranks that
   * each keep their shard of a block.
   *
   * @param blockBytesPerGpu bytes of one KV block on one GPU
   */
  public static long cpuBlocks(double totalBytes, long blockBytesPerGpu, int tp) {
    if (!(totalBytes >= 0) || blockBytesPerGpu <= 0 || tp < 1) {
      throw new IllegalArgumentException("CPU KV tier: need bytes >= 0, block bytes > 0 and TP >= 1, got "
          + totalBytes + ", " + blockBytesPerGpu + ", " + tp);
    }
    return (long) Math.floor(totalBytes / ((double) blockBytesPerGpu * tp));
  }

  /** Microseconds to copy one block's per-GPU shard at {@code bandwidthGbps} GB/s. */
  public static double loadUsPerBlock(long blockBytesPerGpu, double bandwidthGbps) {
    return blockBytesPerGpu / (bandwidthGbps * 1e9) * 1e6;
  }
}
