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

  /**
   * Keeps every value in a growable {@code long[]}: exact percentiles. Summarizing puts only the
   * order statistics the percentiles read in their sorted positions ({@link #selectRanks}), in linear
   * time: a run's inter-token latencies are millions of values, and sorting them all was the largest
   * single cost of a 16,800-request replay.
   */
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
      selectRanks(sorted, size, PERCENTILES);
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

  /** The percentiles of a {@link Distribution}, ascending. */
  private static final double[] PERCENTILES = {50, 90, 95, 99};

  /**
   * Rearranges the first {@code n} values of {@code a} so that every position {@link #percentile}
   * reads for {@code percentiles} (ascending) holds the value a full sort would put there; the
   * values stay a permutation of the originals. Each rank is found by quickselect among the values
   * right of the previous one, so the positions already fixed are not disturbed.
   */
  static void selectRanks(long[] a, int n, double[] percentiles) {
    int from = 0;
    for (double p : percentiles) {
      double rank = p / 100.0 * (n - 1);
      for (int k = Math.max(from, (int) Math.floor(rank)); k <= (int) Math.ceil(rank); k++) {
        select(a, from, n, k);
        from = k + 1;
      }
    }
  }

  /**
   * Puts into {@code a[k]} the value a full sort of {@code a[from, to)} would put there, smaller or
   * equal values before it and greater or equal after it (introselect: quickselect with a
   * median-of-three pivot and a three-way partition, which keeps runs of equal values linear, falling
   * back to a sort of the remaining range when the partitions stop shrinking fast enough).
   */
  static void select(long[] a, int from, int to, int k) {
    int budget = 2 * (32 - Integer.numberOfLeadingZeros(to - from)) + 4;
    while (to - from > 32) {
      if (budget-- == 0) {
        break;
      }
      int mid = (from + to) >>> 1;
      long pivot = medianOf3(a[from], a[mid], a[to - 1]);
      int lt = from;
      int i = from;
      int gt = to - 1;
      while (i <= gt) {
        long v = a[i];
        if (v < pivot) {
          a[i++] = a[lt];
          a[lt++] = v;
        } else if (v > pivot) {
          a[i] = a[gt];
          a[gt--] = v;
        } else {
          i++;
        }
      }
      if (k < lt) {
        to = lt;
      } else if (k > gt) {
        from = gt + 1;
      } else {
        return; // a[lt..gt] all equal the pivot
      }
    }
    Arrays.sort(a, from, to);
  }

  private static long medianOf3(long x, long y, long z) {
    return x < y ? (y < z ? y : Math.max(x, z)) : (x < z ? x : Math.max(y, z));
  }

  /**
   * Linear-interpolation percentile of an array whose positions read here hold the values a full
   * sort would put there (an ascending array, or one arranged by {@link #selectRanks}).
   *
   * @param sorted the values, at least one
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
