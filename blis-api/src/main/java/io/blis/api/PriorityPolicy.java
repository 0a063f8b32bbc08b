package io.blis.api;

/**
 * Assigns each request its scheduling priority, in vLLM's convention: lower values are more
 * urgent. Schedulers that order the waiting queue by {@link RequestView#priority()} (for example
 * {@code priority-fcfs}) then follow it; FCFS ignores it, as vLLM does.
 *
 * <p>The engine asks when a request joins an instance's waiting queue and, for a {@link
 * #timeDependent()} policy, again for every waiting request before the queue is sorted.
 */
public interface PriorityPolicy {

  /**
   * The priority of {@code request} at {@code nowUs}.
   *
   * @param request a request joining, or waiting in, an instance's queue
   * @param nowUs current simulation time in microseconds
   * @return the priority, lower more urgent (vLLM's SLO classes use 0 to 7)
   */
  int priority(RequestView request, long nowUs);

  /**
   * Whether the priority of a waiting request can change as time passes (aging). When false, the
   * engine computes it once per queue entry.
   *
   * @return false by default
   */
  default boolean timeDependent() {
    return false;
  }
}
