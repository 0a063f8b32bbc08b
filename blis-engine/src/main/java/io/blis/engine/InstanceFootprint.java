package io.blis.engine;

import io.blis.kvcache.KvFootprint;
import java.util.List;

/**
 * The Java heap a simulation's instances take before any request arrives, estimated from their
 * sizes without building them ({@link Simulation.Builder#instanceFootprint()}): each scheduler's
 * KV block pool ({@link KvFootprint}) and {@link #PER_INSTANCE_BYTES} for the rest (the instance,
 * its latency model, metrics and queues). So that a deployment that cannot fit in the heap is
 * refused before it is built, not after minutes of allocating.
 *
 * @param instances the schedulers (instances times their data-parallel ranks and pipeline stages)
 * @param bytes the heap they take
 * @param smallestKvBlocks the fewest GPU KV blocks one of them has
 * @param largestKvBlocks the most GPU KV blocks one of them has
 */
public record InstanceFootprint(long instances, long bytes, long smallestKvBlocks, long largestKvBlocks) {

  /**
   * The heap one instance takes besides its KV block pool: 48 KiB. Measured with a class histogram:
   * about 15 KiB a {@code blis run} instance (3,400 instances of 7,462 blocks: 1,678 MB live, 1,630
   * MB of it their pools), about 78 KiB a {@code blis serve} one (with its Prometheus metrics).
   */
  public static final long PER_INSTANCE_BYTES = 48 << 10;

  /** The footprint of {@code pools}. */
  static InstanceFootprint of(List<InstancePool> pools) {
    long instances = 0;
    long bytes = 0;
    long smallest = Long.MAX_VALUE;
    long largest = 0;
    for (InstancePool p : pools) {
      long schedulers = (long) p.instances() * p.ranks();
      long blocks = p.totalKvBlocks() / p.pipelineParallel();
      instances += schedulers;
      bytes += schedulers * of(blocks, p.cpuKvBlocks() / p.pipelineParallel());
      smallest = Math.min(smallest, blocks);
      largest = Math.max(largest, blocks);
    }
    return new InstanceFootprint(instances, bytes, instances == 0 ? 0 : smallest, largest);
  }

  /** The heap one scheduler of {@code kvBlocks} GPU and {@code cpuBlocks} CPU KV blocks takes. */
  public static long of(long kvBlocks, long cpuBlocks) {
    return KvFootprint.poolBytes(kvBlocks, cpuBlocks) + PER_INSTANCE_BYTES;
  }
}
