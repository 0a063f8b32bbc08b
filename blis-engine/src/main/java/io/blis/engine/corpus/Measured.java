package io.blis.engine.corpus;

import io.blis.workload.TextFiles;
import java.util.List;
import java.util.Locale;

/**
 * A statistic a published point measured, with its unit and how a replay computes it. The order
 * of the constants is the order of preference of a point's headline statistic: the first one the
 * point measured is the one its error is reported by.
 */
public enum Measured {
  BATCH_LATENCY_MS(Kind.E2E, false),
  BATCH_LATENCY_P50_MS(Kind.E2E, false),
  BATCH_LATENCY_P90_MS(Kind.E2E, false),
  BATCH_LATENCY_P99_MS(Kind.E2E, false),
  MEAN_E2EL_MS(Kind.E2E, false),
  MEDIAN_E2EL_MS(Kind.E2E, false),
  DURATION_S(Kind.E2E, false),
  REQUEST_THROUGHPUT(Kind.E2E, true),
  OUTPUT_THROUGHPUT(Kind.E2E, true),
  TOTAL_TOKEN_THROUGHPUT(Kind.E2E, true),
  MEAN_TPOT_MS(Kind.DECODE, false),
  MEDIAN_TPOT_MS(Kind.DECODE, false),
  MEAN_ITL_MS(Kind.DECODE, false),
  MEDIAN_ITL_MS(Kind.DECODE, false),
  TOKENS_PER_S_PER_REQUEST(Kind.DECODE, true),
  MEAN_TTFT_MS(Kind.TTFT, false),
  MEDIAN_TTFT_MS(Kind.TTFT, false),
  P99_TTFT_MS(Kind.TTFT, false),
  P99_E2EL_MS(Kind.E2E, false),
  P99_TPOT_MS(Kind.DECODE, false),
  P99_ITL_MS(Kind.DECODE, false);

  /** What a statistic times: the whole request, its first token, or its decode. */
  public enum Kind {
    E2E, TTFT, DECODE
  }

  private final Kind kind;
  private final boolean rate;

  Measured(Kind kind, boolean rate) {
    this.kind = kind;
    this.rate = rate;
  }

  /** The key in corpus files: the constant's name in lower case. */
  public String key() {
    return name().toLowerCase(Locale.ROOT);
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
      if (m.key().equals(key)) {
        return m;
      }
    }
    throw new IllegalArgumentException("unknown measured statistic '" + TextFiles.quote(key)
        + "', expected one of "
        + List.of(values()).stream().map(Measured::key).toList());
  }
}
