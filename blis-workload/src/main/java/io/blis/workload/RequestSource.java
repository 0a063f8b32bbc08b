package io.blis.workload;

import java.util.List;

/**
 * A stream of requests for the engine. Open-loop requests are pulled one at a time with {@link
 * #next()} in non-decreasing arrival order, so a source never has to hold the whole workload in
 * memory. Closed-loop requests (the next round of a session) are produced when the engine reports
 * how the previous one ended, through {@link #onFinished(RequestSpec, RequestOutcome, long)}.
 *
 * <p>Sources are single-use and used from one thread.
 */
public interface RequestSource extends AutoCloseable {

  /**
   * The next open-loop request, or {@code null} when there are no more. Arrival times are
   * non-decreasing across calls.
   */
  RequestSpec next();

  /**
   * Called by the engine when {@code request} ended. Returns the follow-up requests this causes
   * (for example the next round of a session arriving a think time after {@code timeUs}); each
   * arrives at or after {@code timeUs}. The default has none.
   *
   * @param timeUs simulation time at which the client saw the request end
   */
  default List<RequestSpec> onFinished(RequestSpec request, RequestOutcome outcome, long timeUs) {
    return List.of();
  }

  /** Releases files or other resources; the default does nothing. */
  @Override
  default void close() {}

  /** A source over a fixed list (already sorted by arrival time). */
  static RequestSource of(List<RequestSpec> requests) {
    return new RequestSource() {
      private int next;

      @Override
      public RequestSpec next() {
        return next < requests.size() ? requests.get(next++) : null;
      }
    };
  }
}
