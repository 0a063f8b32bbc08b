package io.blis.cli.serve;

/**
 * Where the simulated server delivers one request's answer, at the simulated client times. Called
 * on the simulation thread, in order; implementations must not block (hand the bytes to a
 * non-blocking writer).
 */
public interface ResponseSink {

  /**
   * Token number {@code index} (1 for the first) of {@code total} is due now.
   *
   * @param dueNanos the {@link System#nanoTime()} at which it was due (for lateness measurement)
   */
  void onToken(int index, int total, long dueNanos);

  /** The answer is complete: every token was delivered. */
  void onFinished(int promptTokens, int completionTokens);

  /**
   * The simulated engine placed the request on instance {@code engine} (its first queueing).
   * Called before its first {@link #onToken}.
   */
  default void onEngine(int engine) {}

  /**
   * The request ended: a completed one just before {@link #onFinished}, an aborted one (its
   * client went away, or the engine dropped it) when it is aborted.
   */
  default void onStats(RequestStats stats) {}

  /** The request failed before its first token (rejected by the simulated engine). */
  void onFailed(int httpStatus, String message);
}
