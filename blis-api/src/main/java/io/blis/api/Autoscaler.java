package io.blis.api;

/**
 * Decides how many replicas a pool should have. The simulator calls it at every scaling tick with
 * what the pool exposes; the answer is clamped to the pool's minimum and maximum, passed through
 * the stabilization windows, and then acted on: new replicas wait for a node, load their weights
 * and warm up before they take requests; removed ones drain (take no new requests, finish those
 * they hold) before their GPUs are released.
 */
public interface Autoscaler {

  /**
   * The replicas the pool should have now.
   *
   * @param view the pool at this tick
   * @return the desired number of replicas (clamped by the caller)
   */
  int desiredReplicas(ScalingView view);
}
