package io.blis.engine.result;

/**
 * Mean and percentiles of one latency metric over the completed requests of a scope, in
 * microseconds (the JSON result shows them in milliseconds). Percentiles use linear interpolation
 * between the closest ranks ({@code rank = p/100 x (n - 1)}, numpy's default). Every value is NaN
 * when {@code count} is 0.
 *
 * @param count number of samples
 */
public record Distribution(long count, double meanUs, double p50Us, double p90Us, double p95Us,
    double p99Us) {

  /** The summary of no samples. */
  public static final Distribution EMPTY =
      new Distribution(0, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN);

}
