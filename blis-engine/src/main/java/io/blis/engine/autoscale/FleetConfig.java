package io.blis.engine.autoscale;

/**
 * How one autoscaled pool may grow and shrink, and what a new replica costs in time and money.
 *
 * @param minReplicas fewest replicas (at least 1: a pool that scales to zero has nobody to route to)
 * @param maxReplicas most replicas (the simulation holds this many instances, most of them off)
 * @param initialReplicas replicas ready at time 0 (warm start)
 * @param intervalUs time between scaling ticks (Kubernetes HPA's sync period is 15 s)
 * @param gpusPerReplica GPUs one replica holds (its TP x PP x DP)
 * @param gpusPerNode GPUs of one node of the node pool
 * @param maxNodes most nodes of the node pool
 * @param initialNodes nodes ready at time 0 (more if the initial replicas need them)
 * @param minNodes nodes never released, though empty
 * @param provisioningUs from asking for a node to the node being ready
 * @param loadingUs from a replica's node being ready to its weights being loaded
 * @param warmupUs from the weights being loaded to the replica taking requests (CUDA graph capture,
 *     compilation)
 * @param nodeCostPerHour price of one node per hour (0 when unknown)
 * @param scaleUpWindowUs stabilization window for scaling up: the lowest recommendation of the
 *     window is acted on (Kubernetes' default 0)
 * @param scaleDownWindowUs stabilization window for scaling down: the highest recommendation of
 *     the window is acted on (Kubernetes' default 300 s)
 * @param warmupSlowdown the first-requests slowdown of a replica that has just become ready: its
 *     steps take this many times as long (1 for none; caches and compiled kernels still filling)
 * @param slowdownUs how long the slowdown lasts from the replica becoming ready (a step started
 *     within it is slowed whole); replicas ready at time 0 are warm and never slowed
 */
public record FleetConfig(int minReplicas, int maxReplicas, int initialReplicas, long intervalUs,
    int gpusPerReplica, int gpusPerNode, int maxNodes, int initialNodes, int minNodes,
    long provisioningUs, long loadingUs,
    long warmupUs, double nodeCostPerHour, long scaleUpWindowUs, long scaleDownWindowUs, double warmupSlowdown,
    long slowdownUs) {

  /** A fleet whose replicas run at full speed as soon as they are ready (no first-requests slowdown). */
  public FleetConfig(int minReplicas, int maxReplicas, int initialReplicas, long intervalUs, int gpusPerReplica,
      int gpusPerNode, int maxNodes, int initialNodes, int minNodes, long provisioningUs, long loadingUs,
      long warmupUs, double nodeCostPerHour, long scaleUpWindowUs, long scaleDownWindowUs) {
    this(minReplicas, maxReplicas, initialReplicas, intervalUs, gpusPerReplica, gpusPerNode, maxNodes, initialNodes,
        minNodes, provisioningUs, loadingUs, warmupUs, nodeCostPerHour, scaleUpWindowUs, scaleDownWindowUs, 1.0, 0);
  }

  public FleetConfig {
    if (minReplicas < 1) {
      throw new IllegalArgumentException("autoscaling: the minimum replicas must be at least 1, got " + minReplicas);
    }
    if (maxReplicas < minReplicas) {
      throw new IllegalArgumentException("autoscaling: the maximum replicas (" + maxReplicas
          + ") must be at least the minimum (" + minReplicas + ")");
    }
    if (initialReplicas < minReplicas || initialReplicas > maxReplicas) {
      throw new IllegalArgumentException("autoscaling: the initial replicas (" + initialReplicas
          + ") must be between the minimum (" + minReplicas + ") and the maximum (" + maxReplicas + ")");
    }
    if (intervalUs < 1) {
      throw new IllegalArgumentException("autoscaling: the interval must be at least 1 us, got " + intervalUs);
    }
    if (gpusPerReplica < 1 || gpusPerNode < gpusPerReplica) {
      throw new IllegalArgumentException("autoscaling: a node of " + gpusPerNode
          + " GPUs cannot hold a replica of " + gpusPerReplica);
    }
    int perNode = gpusPerNode / gpusPerReplica;
    if (maxNodes < 1 || (long) maxNodes * perNode < initialReplicas) {
      throw new IllegalArgumentException("autoscaling: " + maxNodes + " nodes of " + perNode
          + " replicas cannot hold the " + initialReplicas + " initial replicas");
    }
    if (initialNodes < 0 || minNodes < 0 || initialNodes > maxNodes || minNodes > maxNodes) {
      throw new IllegalArgumentException("autoscaling: the initial (" + initialNodes + ") and minimum ("
          + minNodes + ") nodes must be between 0 and the maximum (" + maxNodes + ")");
    }
    if (provisioningUs < 0 || loadingUs < 0 || warmupUs < 0 || scaleUpWindowUs < 0 || scaleDownWindowUs < 0) {
      throw new IllegalArgumentException("autoscaling: delays and windows must be >= 0");
    }
    if (!(warmupSlowdown >= 1) || !Double.isFinite(warmupSlowdown) || warmupSlowdown > 100) {
      throw new IllegalArgumentException("autoscaling: the warm-up slowdown must be a factor in [1, 100], got "
          + warmupSlowdown);
    }
    if (slowdownUs < 0) {
      throw new IllegalArgumentException("autoscaling: the slowdown's duration must be >= 0, got " + slowdownUs);
    }
    if (!(nodeCostPerHour >= 0) || !Double.isFinite(nodeCostPerHour)) {
      throw new IllegalArgumentException("autoscaling: the node cost must be a finite number >= 0, got " + nodeCostPerHour);
    }
  }
}
