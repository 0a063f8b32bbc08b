package io.blis.workload;

import java.util.List;

/**
 * A stream of requests for the engine.
 *
 * <p>Open-loop requests are pulled one at a time with {@link #next()}, so a source never has to
 * hold the whole workload in memory. The engine keeps at most one pulled request ahead of the
 * simulation clock: it calls {@code next()} again when that request's arrival is processed.
 * Arrival times returned by successive {@code next()} calls are non-decreasing.
 *
 * <p>A source may have nothing to offer <em>yet</em>: for example the next load stage of an
 * inference-perf run starts only after every request of the previous stage finished. It then
 * returns {@code null} from {@code next()} while {@link #exhausted()} is false; the engine asks
 * again after each {@link #onFinished} call. When {@code next()} returns {@code null} and {@code
 * exhausted()} is true, the source is done for good.
 *
 * <p>Closed-loop requests (the next round of a session) are returned by {@link #onFinished}; each
 * of them arrives at or after the time passed to it.
 *
 * <p>Sources are single-use and used from one thread.
 */
public interface RequestSource extends AutoCloseable {

  /**
   * The next open-loop request, or {@code null} when none is available now (see {@link
   * #exhausted()}).
   */
  RequestSpec next();

  /**
   * After {@link #next()} returned {@code null}: true when the source will never produce another
   * open-loop request, false when it may once requests finish. The default is true.
   */
  default boolean exhausted() {
    return true;
  }

  /**
   * Called by the engine when {@code request} ended, at the time the client saw it end. Returns
   * follow-up requests this causes (for example the next round of a session, arriving a think
   * time after {@code timeUs}); each arrives at or after {@code timeUs}. The default has none.
   *
   * @param timeUs simulation time, microseconds, at which the client saw the request end
   */
  default List<RequestSpec> onFinished(RequestSpec request, RequestOutcome outcome, long timeUs) {
    return List.of();
  }

  /**
   * Whether {@link #next()} may be called ahead of the simulation, from another thread and
   * concurrently with {@link #onFinished}: it neither depends on nor changes anything {@code
   * onFinished} or the simulation sees, and returns null only once the source has ended. {@link
   * ReadAheadSource} then generates requests on a second core. The default is false; a source that
   * wraps another says true only when it adds nothing that depends on when it is called.
   */
  default boolean readableAhead() {
    return false;
  }

  /** Releases files or other resources; the default does nothing. */
  @Override
  default void close() {}

  /** A source over a fixed list (sorted by arrival time). */
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
