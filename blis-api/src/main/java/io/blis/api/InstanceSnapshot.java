package io.blis.api;

/**
 * A read-only snapshot of one serving instance as a router sees it. Valid only during the call
 * that receives it.
 */
public interface InstanceSnapshot {

  /** Index of the instance in the cluster, from 0. */
  int index();

  /** Requests waiting in the instance's queue. */
  int queueDepth();

  /** Requests in the instance's running batch. */
  int runningBatchSize();

  /** Fraction of the instance's KV blocks in use, in {@code [0, 1]}. */
  double kvUtilization();

  /** Requests routed to the instance and not finished yet (always current). */
  int inFlight();

  /**
   * Number of leading prompt tokens of the request being routed already cached there (read from
   * the instance's prefix cache at the time of the call).
   */
  int cachedPrefixTokens();

  /** Name of the pool the instance belongs to; empty when the cluster has a single pool. */
  default String pool() {
    return "";
  }

  /** Prompt tokens of the requests waiting in the instance's queue (uncached ones included). */
  default long queuedPromptTokens() {
    return 0;
  }

  /**
   * Simulation time, in microseconds, at which the queue, batch and KV figures of this snapshot
   * were read. Routers see instances as a real gateway does: through figures refreshed
   * periodically, while {@link #inFlight()} is the router's own, always current, count.
   */
  default long refreshedAtUs() {
    return 0;
  }
}
