package io.blis.engine.cluster;

/** Size limits of a cluster that both {@link Cluster} and {@link PolicyBundle} enforce. */
public final class ClusterLimits {

  /**
   * Most instances in a cluster, over all its pools: 4,096. Each instance holds its own KV cache,
   * queues and metrics (about 0.6 MB at the defaults, 2.4 GB of memory for 4,096), so much larger
   * fleets exhaust the memory before they simulate anything; split such a study by pool instead.
   */
  public static final int MAX_INSTANCES = 4096;

  private ClusterLimits() {}
}
