package io.blis.engine.corpus;

import java.util.List;
import java.util.Locale;

/**
 * A statistic a published point measured, with its unit and how a replay computes it. The order
 * of the constants is the order of preference of a point's headline statistic: the first one the
 * point measured is the one its error is reported by.
 */
public enum Measured {
  BATCH_LATENCY_MS("batch_latency_ms", Kind.E2E, false),
  BATCH_LATENCY_P50_MS("batch_latency_p50_ms", Kind.E2E, false),
  BATCH_LATENCY_P90_MS("batch_latency_p90_ms", Kind.E2E, false),
  BATCH_LATENCY_P99_MS("batch_latency_p99_ms", Kind.E2E, false),
  MEAN_E2EL_MS("mean_e2el_ms", Kind.E2E, false),
  MEDIAN_E2EL_MS("median_e2el_ms", Kind.E2E, false),
  DURATION_S("duration_s", Kind.E2E, false),
  REQUEST_THROUGHPUT("request_throughput", Kind.E2E, true),
  OUTPUT_THROUGHPUT("output_throughput", Kind.E2E, true),
  TOTAL_TOKEN_THROUGHPUT("total_token_throughput", Kind.E2E, true),
  MEAN_TPOT_MS("mean_tpot_ms", Kind.DECODE, false),
  MEDIAN_TPOT_MS("median_tpot_ms", Kind.DECODE, false),
  MEAN_ITL_MS("mean_itl_ms", Kind.DECODE, false),
  MEDIAN_ITL_MS("median_itl_ms", Kind.DECODE, false),
  TOKENS_PER_S_PER_REQUEST("tokens_per_s_per_request", Kind.DECODE, true),
  MEAN_TTFT_MS("mean_ttft_ms", Kind.TTFT, false),
  MEDIAN_TTFT_MS("median_ttft_ms", Kind.TTFT, false),
  P99_TTFT_MS("p99_ttft_ms", Kind.TTFT, false),
  P99_E2EL_MS("p99_e2el_ms", Kind.E2E, false),
  P99_TPOT_MS("p99_tpot_ms", Kind.DECODE, false),
  P99_ITL_MS("p99_itl_ms", Kind.DECODE, false);

  /** What a statistic times: the whole request, its first token, or its decode. */
  public enum Kind {
    E2E, TTFT, DECODE
  }

  private final String key;
  private final Kind kind;
  private final boolean rate;

  Measured(String key, Kind kind, boolean rate) {
    this.key = key;
    this.kind = kind;
    this.rate = rate;
  }

  /** The key in corpus files. */
  public String key() {
    return key;
  }

  /** What it times. */
  public Kind kind() {
    return kind;
  }

  /**
   * Whether it is a rate (higher is faster): its error in time is the inverse ratio, so that a
   * prediction 10% too fast reads the same whether the point published a time or a rate.
   */
  public boolean rate() {
    return rate;
  }

  /** The statistic of a key. */
  public static Measured parse(String key) {
    for (Measured m : values()) {
      if (m.key.equals(key)) {
        return m;
      }
    }
    throw new IllegalArgumentException("unknown measured statistic '" + io.blis.workload.TextFiles.quote(key)
        + "', expected one of "
        + List.of(values()).stream().map(Measured::key).toList());
  }

  @Override
  public String toString() {
    return key.toLowerCase(Locale.ROOT);
  }
}
