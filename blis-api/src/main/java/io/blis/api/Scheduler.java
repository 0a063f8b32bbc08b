package io.blis.api;

/**
 * The batch-formation policy of one instance: in which order waiting requests are considered, and
 * which running request is preempted when KV blocks run out. Token budget, max-num-seqs and
 * chunking are the engine's (they mirror vLLM) and are not a scheduler's choice.
 *
 * <p>Called on the engine's thread. The engine may share one scheduler between all the instances
 * of a simulation, so a scheduler should keep no per-instance state.
 */
public interface Scheduler {

  /**
   * Whether {@link #compareWaiting(RequestView, RequestView)} defines an order. When false (the
   * FCFS case) the engine keeps the waiting queue in arrival order with preempted requests at its
   * front and never sorts it.
   *
   * @return false by default
   */
  default boolean ordersWaitingQueue() {
    return false;
  }

  /**
   * Order of the waiting queue: negative when {@code a} should be considered before {@code b}.
   * The engine sorts stably, so equal requests keep their queue order. Only called when {@link
   * #ordersWaitingQueue()} is true, while the queue is sorted before each step's batch is formed.
   *
   * @param a a waiting request
   * @param b another waiting request
   * @return negative when {@code a} goes first, positive when {@code b} does, 0 to keep their
   *     queue order (the default)
   */
  default int compareWaiting(RequestView a, RequestView b) {
    return 0;
  }

  /**
   * Chooses which running request to preempt when the engine needs KV blocks. Called during
   * batch formation, once per preemption, until the request that needs blocks gets them or is
   * itself chosen.
   *
   * @param running the running requests in running-list order (never empty), the one that needs
   *     blocks included; those already in this step's batch have their {@link
   *     RequestView#newTokens()} set
   * @return an index into {@code running}, in {@code [0, running.size())}; anything else fails the
   *     run
   */
  int preemptionVictim(BatchView running);
}
