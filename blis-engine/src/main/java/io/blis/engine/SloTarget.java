package io.blis.engine;

/**
 * Latency targets of one SLO class: a completed request of the class counts toward goodput when
 * its TTFT and its E2E latency are both within them.
 *
 * @param ttftMs time-to-first-token target, milliseconds; 0 means none
 * @param e2eMs end-to-end target, milliseconds; 0 means none
 */
public record SloTarget(double ttftMs, double e2eMs) {

  /** No target: every completed request counts. */
  public static final SloTarget NONE = new SloTarget(0, 0);

  public SloTarget {
    if (!(ttftMs >= 0 && Double.isFinite(ttftMs)) || !(e2eMs >= 0 && Double.isFinite(e2eMs))) {
      throw new IllegalArgumentException(
          "SLO targets must be finite and >= 0 ms, got ttft " + ttftMs + " and e2e " + e2eMs);
    }
  }

  /** Whether a request with these latencies (microseconds) meets the targets. */
  public boolean met(long ttftUs, long e2eUs) {
    return (ttftMs == 0 || ttftUs <= ttftMs * 1000.0) && (e2eMs == 0 || e2eUs <= e2eMs * 1000.0);
  }
}
