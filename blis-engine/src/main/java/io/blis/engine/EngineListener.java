package io.blis.engine;

import io.blis.api.RequestView;
import io.blis.workload.RequestOutcome;

/**
 * Receives the engine's request-journey and step events as they happen, for tracing (for
 * example {@code io.blis.engine.trace.OtlpTraceWriter}). Every method has a no-op default. Times
 * are engine microseconds; a request view is valid only during the call. Called on the engine's
 * thread; a listener must not change engine state.
 */
public interface EngineListener {

  /** The request arrived from the client. */
  default void onArrived(RequestView request, long timeUs) {}

  /** The request joined {@code instance}'s waiting queue (first time, or after a preemption). */
  default void onQueued(int instance, RequestView request, long timeUs) {}

  /**
   * The request was admitted to the running batch by step {@code stepId}; its progress index is
   * where its computation starts (prompt tokens found in the prefix cache).
   *
   * @param resume true when it had been preempted before
   */
  default void onScheduled(int instance, RequestView request, long stepId, boolean resume,
      long timeUs) {}

  /**
   * Step {@code stepId} emitted the request's first output token at {@code timeUs}; the client
   * sees it at {@code clientTimeUs}.
   */
  default void onFirstToken(int instance, RequestView request, long stepId, long timeUs,
      long clientTimeUs) {}

  /**
   * The step that ended at {@code timeUs} emitted the request's output token number {@code
   * tokenIndex} (1 for the first); the client sees it at {@code clientTimeUs}. Called for every
   * token, after {@link #onFirstToken} for the first and before {@link #onFinished} for the last.
   */
  default void onToken(int instance, RequestView request, int tokenIndex, long timeUs,
      long clientTimeUs) {}

  /** The request was preempted while step {@code stepId} was formed. */
  default void onPreempted(int instance, RequestView request, long stepId, long timeUs) {}

  /**
   * The request ended.
   *
   * @param instance where it was routed, -1 when it never was
   * @param engineEndUs engine time it ended
   * @param clientEndUs time the client saw it end (its last token, or the deadline)
   */
  default void onFinished(int instance, RequestView request, RequestOutcome outcome,
      long engineEndUs, long clientEndUs) {}

  /** Step {@code step.stepId()} of {@code instance} completed. */
  default void onStep(int instance, StepRecord step) {}
}
