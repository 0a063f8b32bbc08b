package io.blis.engine.metrics;

import io.blis.engine.result.Distribution;
import java.util.Arrays;
import org.HdrHistogram.Histogram;

/** Collects non-negative microsecond samples of one metric and summarizes them. */
public abstract class ValueStore {

  public abstract void add(long valueUs);

  public abstract Distribution summarize();

  public static ValueStore create(boolean streaming) {
    return streaming ? new Streaming() : new Exact();
  }

  /** Keeps every value in a growable {@code long[]}: exact percentiles. */
  static final class Exact extends ValueStore {
    private long[] values = new long[64];
    private int size;
    private double sum;

    @Override
    public void add(long valueUs) {
      if (size == values.length) {
        values = Arrays.copyOf(values, size * 2);
      }
      values[size++] = valueUs;
      sum += valueUs;
    }

    @Override
    public Distribution summarize() {
      if (size == 0) {
        return Distribution.EMPTY;
      }
      long[] sorted = Arrays.copyOf(values, size);
      Arrays.sort(sorted);
      return new Distribution(size, sum / size,
          percentile(sorted, size, 50), percentile(sorted, size, 90),
          percentile(sorted, size, 95), percentile(sorted, size, 99));
    }
  }

  /**
   * Bounded memory: an HdrHistogram with 3 significant digits (percentiles within 0.1%); the
   * mean is exact.
   */
  static final class Streaming extends ValueStore {
    private final Histogram histogram = new Histogram(3);
    private double sum;

    @Override
    public void add(long valueUs) {
      histogram.recordValue(valueUs);
      sum += valueUs;
    }

    @Override
    public Distribution summarize() {
      long n = histogram.getTotalCount();
      if (n == 0) {
        return Distribution.EMPTY;
      }
      return new Distribution(n, sum / n,
          histogram.getValueAtPercentile(50), histogram.getValueAtPercentile(90),
          histogram.getValueAtPercentile(95), histogram.getValueAtPercentile(99));
    }
  }

  /**
   * Linear-interpolation percentile of an ascending array.
   *
   * @param sorted ascending values, at least one
   * @param n number of values of {@code sorted} to use
   * @param p percentile in [0, 100]
   */
  private static double percentile(long[] sorted, int n, double p) {
    double rank = p / 100.0 * (n - 1);
    int lo = (int) Math.floor(rank);
    int hi = (int) Math.ceil(rank);
    double a = sorted[lo];
    return a + (sorted[hi] - a) * (rank - lo);
  }
}
