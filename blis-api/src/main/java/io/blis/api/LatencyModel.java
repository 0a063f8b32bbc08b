package io.blis.api;

/**
 * Predicts how long the pieces of serving a request take. All results are in microseconds and
 * must be finite and non-negative; {@link #stepTime(BatchView)} must be at least 1. The engine
 * fails the run when a time exceeds one hour (no real deployment comes near it; bad coefficients
 * do).
 *
 * <p>Where each time enters a request's timeline (the engine's contract, see the engine
 * documentation for the exact event order):
 *
 * <ul>
 *   <li>{@link #queueingTime(RequestView)}: between client arrival and the moment the request
 *       joins the instance's waiting queue. It advances the request's clock (the scheduler cannot
 *       see the request before it elapsed), once per arrival.
 *   <li>{@link #schedulingProcessingTime()}: added once to the request's latency when it is first
 *       scheduled (it shifts its TTFT and E2E; it does not stall the engine's clock).
 *   <li>{@link #stepTime(BatchView)}: the duration of one engine step (one forward pass of the
 *       batch); it advances the engine's clock.
 *   <li>{@link #outputTokenProcessingTime()}: added to the request's latency for every output
 *       token it emits (detokenisation and streaming), so TTFT includes it once and E2E once per
 *       output token; it does not stall the engine's clock.
 *   <li>{@link #preemptionProcessingTime()}: added to the request's latency each time it is
 *       preempted; it does not stall the engine's clock.
 * </ul>
 *
 * <p>Implementations are created per simulated instance and are called from one thread.
 * {@link #stepTime(BatchView)} is on the hot path: it should not allocate.
 */
public interface LatencyModel {

  /**
   * Duration of one engine step that processes {@code batch}, in microseconds (at least 1).
   *
   * @param batch the scheduled requests with their {@link RequestView#newTokens()} set; never
   *     empty
   * @return the step's duration in microseconds, at least 1
   */
  long stepTime(BatchView batch);

  /**
   * Delay from client arrival to entering the waiting queue, in microseconds. Called once per
   * request, when it is routed to this model's instance.
   *
   * @param request the routed request, not yet in the waiting queue
   * @return the delay in microseconds, at least 0
   */
  long queueingTime(RequestView request);

  /**
   * Processing time charged per output token, in microseconds. Called each time a request emits a
   * token.
   *
   * @return the time in microseconds, at least 0
   */
  long outputTokenProcessingTime();

  /**
   * Processing time charged once per request when it is first scheduled, in microseconds.
   *
   * @return the time in microseconds, at least 0
   */
  long schedulingProcessingTime();

  /**
   * Processing time charged per preemption of a request, in microseconds. Called at each
   * preemption.
   *
   * @return the time in microseconds, at least 0
   */
  long preemptionProcessingTime();

  /**
   * Duration of one forward pass of this model over {@code batch} when it runs inside an engine step
   * that another model leads, in microseconds (at least 1): a speculative drafter's passes between
   * the target model's verification steps. The step's own fixed host work (scheduling, input
   * preparation, truncated sampling) is the leading model's and is not charged again. By default
   * the whole {@link #stepTime(BatchView)}, which over-charges that fixed work; a model that can tell
   * it apart overrides this.
   *
   * @param batch the requests the pass runs over, with their {@link RequestView#newTokens()}; never
   *     empty
   * @return the pass's duration in microseconds, at least 1
   */
  default long forwardPassTime(BatchView batch) {
    return stepTime(batch);
  }
}
