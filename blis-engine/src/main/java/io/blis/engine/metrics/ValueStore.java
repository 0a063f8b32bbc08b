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
   * Keeps every value in a growable {@code long[]}: exact percentiles. Summarizing finds only the
   * order statistics the percentiles read ({@link #orderStatistics}), in linear time: a run's
   * inter-token latencies are millions of values, and sorting them all was the largest single cost
   * of a 16,800-request replay.
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
      int[] ranks = new int[2 * PERCENTILES.length];
      for (int i = 0; i < PERCENTILES.length; i++) {
        double rank = PERCENTILES[i] / 100.0 * (size - 1);
        ranks[2 * i] = (int) Math.floor(rank);
        ranks[2 * i + 1] = (int) Math.ceil(rank);
      }
      long[] at = orderStatistics(values, size, ranks);
      double[] p = new double[PERCENTILES.length];
      for (int i = 0; i < p.length; i++) {
        double rank = PERCENTILES[i] / 100.0 * (size - 1);
        double a = at[2 * i];
        p[i] = a + (at[2 * i + 1] - a) * (rank - ranks[2 * i]);
      }
      return new Distribution(size, sum / size, p[0], p[1], p[2], p[3]);
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
   * The values of ranks {@code ranks} (0-based, any order) among the first {@code n} of {@code
   * values}, which are left as they are: what a sorted copy holds at those positions. When the values
   * span fewer distinct integers than there are values (inter-token latencies, say) they are counted,
   * in one pass and an {@code int} per possible value; otherwise a copy is partially ordered by
   * {@link #selectRanks}.
   */
  static long[] orderStatistics(long[] values, int n, int[] ranks) {
    int[] ascending = ranks.clone();
    Arrays.sort(ascending);
    long[] ascendingAt = new long[ascending.length];
    long min = Long.MAX_VALUE;
    long max = Long.MIN_VALUE;
    for (int i = 0; i < n; i++) {
      min = Math.min(min, values[i]);
      max = Math.max(max, values[i]);
    }
    if (max - min >= 0 && max - min < n) {
      int[] counts = new int[(int) (max - min) + 1];
      for (int i = 0; i < n; i++) {
        counts[(int) (values[i] - min)]++;
      }
      long atMost = 0; // values up to min + v
      int j = 0;
      for (int v = 0; v < counts.length && j < ascending.length; v++) {
        atMost += counts[v];
        while (j < ascending.length && ascending[j] < atMost) {
          ascendingAt[j++] = min + v;
        }
      }
    } else {
      long[] copy = Arrays.copyOf(values, n);
      selectRanks(copy, n, ascending);
      for (int j = 0; j < ascending.length; j++) {
        ascendingAt[j] = copy[ascending[j]];
      }
    }
    long[] at = new long[ranks.length];
    for (int j = 0; j < ranks.length; j++) {
      at[j] = ascendingAt[Arrays.binarySearch(ascending, ranks[j])];
    }
    return at;
  }

  /**
   * Rearranges the first {@code n} values of {@code a} so that every position of {@code ranks}
   * (ascending) holds the value a full sort would put there; the values stay a permutation of the
   * originals. Each rank is found by quickselect among the values right of the previous one, so the
   * positions already fixed are not disturbed.
   */
  static void selectRanks(long[] a, int n, int[] ranks) {
    int from = 0;
    for (int k : ranks) {
      if (k >= from) {
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
}
