package io.blis.engine.validate;

/**
 * Request-level statistics of one load stage or of a whole run, observed or predicted. Latencies
 * are milliseconds over successful requests only; a statistic that was not recorded is NaN.
 *
 * @param stage load stage index, or -1 for the whole run
 * @param countSuccess requests that received all their output tokens, or {@link #UNKNOWN_COUNT}
 * @param countFailed requests that failed (client timeout or server rejection), or
 *     {@link #UNKNOWN_COUNT}
 * @param e2eMeanMs mean end-to-end latency, send to last token
 * @param e2eP50Ms median end-to-end latency
 * @param e2eP90Ms 90th percentile end-to-end latency
 * @param e2eP99Ms 99th percentile end-to-end latency
 * @param ttftMeanMs mean time to first token
 * @param ttftP50Ms median time to first token
 * @param ttftP90Ms 90th percentile time to first token
 * @param ttftP99Ms 99th percentile time to first token
 * @param decodeMsPerToken (E2E mean - TTFT mean) / (configured output_len - 1)
 * @param throughputRps successful requests per second, successes / (last end - first start)
 */
public record RunStats(
    int stage,
    long countSuccess,
    long countFailed,
    double e2eMeanMs,
    double e2eP50Ms,
    double e2eP90Ms,
    double e2eP99Ms,
    double ttftMeanMs,
    double ttftP50Ms,
    double ttftP90Ms,
    double ttftP99Ms,
    double decodeMsPerToken,
    double throughputRps) {

  /** A request count that the observation did not record. */
  public static final long UNKNOWN_COUNT = -1;

  /** Successful requests as a double, NaN when not recorded. */
  public double successCount() {
    return countSuccess < 0 ? Double.NaN : countSuccess;
  }

  /**
   * Failed requests as a fraction of all requests sent (0 when nothing was sent, NaN when the
   * counts were not recorded).
   */
  public double failureFraction() {
    if (countSuccess < 0 || countFailed < 0) {
      return Double.NaN;
    }
    long sent = countSuccess + countFailed;
    return sent == 0 ? 0.0 : (double) countFailed / sent;
  }

  /** The decode time per output token implied by two mean latencies and the output length. */
  static double decodeMsPerToken(double e2eMeanMs, double ttftMeanMs, int outputLen) {
    if (outputLen < 2) {
      return Double.NaN;
    }
    return (e2eMeanMs - ttftMeanMs) / (outputLen - 1);
  }
}
