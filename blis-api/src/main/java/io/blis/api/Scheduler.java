package io.blis.api;

/**
 * The batch-formation policy of one instance: in which order waiting requests are considered, and
 * which running request is preempted when KV blocks run out. Token budget, max-num-seqs and
 * chunking are the engine's (they mirror vLLM) and are not a scheduler's choice.
 */
public interface Scheduler {

  /**
   * Whether {@link #compareWaiting(RequestView, RequestView)} defines an order. When false (the
   * FCFS case) the engine keeps the waiting queue in arrival order with preempted requests at its
   * front and never sorts it.
   */
  default boolean ordersWaitingQueue() {
    return false;
  }

  /**
   * Order of the waiting queue: negative when {@code a} should be considered before {@code b}.
   * The engine sorts stably, so equal requests keep their queue order. Only called when {@link
   * #ordersWaitingQueue()} is true.
   */
  default int compareWaiting(RequestView a, RequestView b) {
    return 0;
  }

  /**
   * Chooses which running request to preempt when the engine needs KV blocks.
   *
   * @param running the running requests in running-list order (never empty)
   * @return an index into {@code running}
   */
  int preemptionVictim(BatchView running);
}
