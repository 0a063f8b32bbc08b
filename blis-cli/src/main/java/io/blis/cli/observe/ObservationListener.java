package io.blis.cli.observe;

import io.blis.workload.RequestSpec;

/**
 * Receives a run as it happens, on the thread that called {@link Observer#run}: every request as
 * it is sent, every observation as its request ends, every scrape of the server's metrics and,
 * every {@link #progressIntervalUs()}, a {@link Progress}. An exception thrown here stops the run
 * (the requests in flight end as stopped) and is rethrown by {@code run}.
 */
public interface ObservationListener {

  /**
   * The run began: its time 0 (the origin of every time in microseconds the run hands over) is
   * {@code epochUs} on the wall clock, microseconds since the Unix epoch.
   */
  default void onStart(long epochUs) {}

  /**
   * A request was sent.
   *
   * @param seq send order (0 for the first request sent)
   * @param asSent the workload's request as it was sent: its arrival time is the moment it was
   *     sent and its timeout the one the client applied
   * @param scheduledUs when the workload wanted it sent
   */
  default void onSent(long seq, RequestSpec asSent, long scheduledUs) {}

  /** A request ended (complete, failed, timed out or stopped). */
  default void onObservation(Observation o) {}

  /** The server's metrics were scraped. */
  default void onMetrics(MetricsSample sample) {}

  /** Where the run stands. */
  default void onProgress(Progress p) {}

  /** How often {@link #onProgress} is called, microseconds; 0 (the default) for never. */
  default long progressIntervalUs() {
    return 0;
  }
}
