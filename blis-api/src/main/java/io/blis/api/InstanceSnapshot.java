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

  /** Requests routed to the instance and not finished yet. */
  int inFlight();

  /** Number of leading prompt tokens of the request being routed already cached there. */
  int cachedPrefixTokens();
}
