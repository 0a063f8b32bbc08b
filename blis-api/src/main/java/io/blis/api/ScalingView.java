package io.blis.api;

/**
 * What an {@link Autoscaler} sees of one pool at a scaling tick: its replicas by lifecycle state
 * and the figures vLLM and Kubernetes expose, averaged over its ready replicas or taken over the
 * last interval. Read-only; valid only during the call.
 */
public interface ScalingView {

  /** {@return the simulated time of the tick, microseconds} */
  long nowUs();

  /** {@return the interval between ticks, microseconds} */
  long intervalUs();

  /** {@return replicas serving: ready, taking requests} */
  int readyReplicas();

  /** {@return replicas asked for and not yet ready: waiting for a node, loading or warming up} */
  int startingReplicas();

  /** {@return the replicas the last decision asked for (ready plus starting)} */
  int currentReplicas();

  /** {@return the fewest replicas allowed} */
  int minReplicas();

  /** {@return the most replicas allowed} */
  int maxReplicas();

  /** {@return requests waiting in the ready replicas' queues, mean per ready replica} */
  double meanWaiting();

  /** {@return requests running in the ready replicas' batches, mean per ready replica} */
  double meanRunning();

  /** {@return KV-cache use of the ready replicas, mean, 0 to 1} */
  double meanKvUtilization();

  /** {@return requests that arrived over the last interval, per second} */
  double arrivalRatePerS();

  /**
   * {@return mean time to first token of the requests that finished over the last interval,
   * milliseconds; NaN when none did}
   */
  double ttftMeanMs();

  /** {@return the KV cache of one replica, tokens; 0 when not known} */
  default long kvCapacityTokens() {
    return 0;
  }
}
