package io.blis.engine.validate;

import java.util.function.ToDoubleFunction;

/** A statistic compared between prediction and observation, with its JSON key. */
public enum Metric {
  E2E_MEAN("e2e_mean", RunStats::e2eMeanMs),
  E2E_P50("e2e_p50", RunStats::e2eP50Ms),
  E2E_P90("e2e_p90", RunStats::e2eP90Ms),
  E2E_P99("e2e_p99", RunStats::e2eP99Ms),
  TTFT_MEAN("ttft_mean", RunStats::ttftMeanMs),
  TTFT_P90("ttft_p90", RunStats::ttftP90Ms),
  TTFT_P99("ttft_p99", RunStats::ttftP99Ms),
  DECODE_MS_PER_TOKEN("decode_ms_per_token", RunStats::decodeMsPerToken),
  THROUGHPUT("throughput", RunStats::throughputRps),
  SUCCESS_COUNT("success_count", RunStats::successCount);

  private final String key;
  private final ToDoubleFunction<RunStats> value;

  Metric(String key, ToDoubleFunction<RunStats> value) {
    this.key = key;
    this.value = value;
  }

  /** JSON key of the metric (snake_case). */
  public String key() {
    return key;
  }

  /** The metric's value in {@code stats} (ms, requests/s or a count; NaN when not recorded). */
  public double of(RunStats stats) {
    return value.applyAsDouble(stats);
  }

  /**
   * Absolute percentage error |predicted - observed| / observed x 100, or NaN when either value
   * is missing or the observed value is 0.
   */
  public static double ape(double predicted, double observed) {
    if (!Double.isFinite(predicted) || !Double.isFinite(observed) || observed == 0) {
      return Double.NaN;
    }
    return Math.abs(predicted - observed) / Math.abs(observed) * 100.0;
  }

  /** APE of this metric between two statistics. */
  public double ape(RunStats predicted, RunStats observed) {
    return ape(of(predicted), of(observed));
  }
}
