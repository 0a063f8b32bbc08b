package io.blis.engine;

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

  static final Distribution EMPTY =
      new Distribution(0, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN);

  /**
   * Linear-interpolation percentile of an ascending array.
   *
   * @param sorted ascending values, at least one
   * @param n number of values of {@code sorted} to use
   * @param p percentile in [0, 100]
   */
  static double percentile(long[] sorted, int n, double p) {
    double rank = p / 100.0 * (n - 1);
    int lo = (int) Math.floor(rank);
    int hi = (int) Math.ceil(rank);
    double a = sorted[lo];
    return a + (sorted[hi] - a) * (rank - lo);
  }
}
