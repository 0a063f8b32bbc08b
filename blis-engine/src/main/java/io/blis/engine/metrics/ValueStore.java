package io.blis.engine.metrics;

import io.blis.engine.result.Distribution;
import java.util.Arrays;
import org.HdrHistogram.Histogram;

/** Collects non-negative microsecond samples of one metric and summarizes them. */
public abstract class ValueStore {

  public abstract void add(long valueUs);

  public abstract Distribution summarize();

  /** An independent store holding the same samples. */
  public abstract ValueStore copy();

  public static ValueStore create(boolean streaming) {
    return streaming ? new Streaming() : new Exact();
  }

  /**
   * Exact percentiles in memory that grows with the number of distinct values. Values are kept as
   * they come in a growable {@code long[]} while they are mostly distinct (end-to-end times of
   * requests: 8 bytes a value, the least any exact store can use); once a sample of them shows
   * that they repeat (inter-token latencies: millions of samples, a few thousand distinct step
   * times; checked on a recent window and on all values so far at each doubling), they are counted
   * instead ({@link Counts}: a dense window of at most 1 MiB and 64 bytes per distinct value, 32
   * bytes per distinct value outside it, none per sample). Both forms give the same order statistics, so the summary does not depend on the
   * form. Summarizing finds only the order statistics the percentiles read ({@link
   * #orderStatistics}), in linear time.
   */
  static final class Exact extends ValueStore {
    /** Values kept while they look distinct: how many are counted before the first look. */
    static final int FIRST_LOOK = 1 << 14;
    /** Counted when a sample of this many values holds at most a quarter as many distinct ones. */
    static final int SAMPLE = 1 << 12;

    private long[] values = new long[64];
    private int size;
    private Counts counts;
    private long n;
    private double sum;
    private int nextLook = FIRST_LOOK;

    @Override
    public void add(long valueUs) {
      n++;
      sum += valueUs;
      if (counts != null) {
        counts.add(valueUs);
        return;
      }
      if (size == nextLook) {
        nextLook = size >= Integer.MAX_VALUE / 2 ? Integer.MAX_VALUE : size * 2;
        counts = repeats(values, size) ? countAll(values, size, size) : countAll(values, size, size / 4);
        if (counts != null) {
          values = null;
          counts.add(valueUs);
          return;
        }
      }
      if (size == values.length) {
        if (size == Integer.MAX_VALUE - 8) {
          throw new IllegalStateException("more than " + size + " distinct latency samples in one metric");
        }
        values = Arrays.copyOf(values, (int) Math.min(Integer.MAX_VALUE - 8L, 2L * size));
      }
      values[size++] = valueUs;
    }

    /** Whether the last {@link #SAMPLE} of the first {@code size} values repeat (a quarter distinct). */
    private static boolean repeats(long[] values, int size) {
      Counts sample = new Counts();
      for (int i = Math.max(0, size - SAMPLE); i < size; i++) {
        sample.add(values[i]);
      }
      return sample.distinct() * 4L <= Math.min(size, SAMPLE);
    }

    /**
     * The first {@code size} values counted, or null as soon as more than {@code atMostDistinct} of
     * them are distinct. With a bound of a quarter this finds values that repeat over the whole run
     * but not within a recent window: the inter-token latencies of a cluster, where each finishing
     * request adds its own run of step times from one of many instances. The counts get a dense
     * window over the values' range of at most 8 entries per distinct value.
     */
    private static Counts countAll(long[] values, int size, int atMostDistinct) {
      Counts probe = new Counts();
      long min = Long.MAX_VALUE;
      long max = Long.MIN_VALUE;
      for (int i = 0; i < size; i++) {
        probe.add(values[i]);
        if (probe.distinct() > atMostDistinct) {
          return null;
        }
        min = Math.min(min, values[i]);
        max = Math.max(max, values[i]);
      }
      Counts all = new Counts(min, Math.min(max, min + 8L * probe.distinct()));
      for (int i = 0; i < size; i++) {
        all.add(values[i]);
      }
      return all;
    }

    @Override
    public ValueStore copy() {
      Exact c = new Exact();
      c.values = values == null ? null : values.clone();
      c.size = size;
      c.counts = counts == null ? null : counts.copy();
      c.n = n;
      c.sum = sum;
      c.nextLook = nextLook;
      return c;
    }

    /** Whether the values are counted (repeating) rather than kept one by one. */
    boolean counted() {
      return counts != null;
    }

    @Override
    public Distribution summarize() {
      if (n == 0) {
        return Distribution.EMPTY;
      }
      // the rank p/100 x (n - 1) in exact integer arithmetic: its whole part and hundredths
      long[] ranks = new long[2 * PERCENTILES.length];
      long[] hundredths = new long[PERCENTILES.length];
      for (int i = 0; i < PERCENTILES.length; i++) {
        long scaled = PERCENTILES[i] * (n - 1);
        hundredths[i] = scaled % 100;
        ranks[2 * i] = scaled / 100;
        ranks[2 * i + 1] = scaled / 100 + (hundredths[i] > 0 ? 1 : 0);
      }
      long[] at;
      if (counts != null) {
        at = counts.orderStatistics(ranks);
      } else {
        int[] intRanks = new int[ranks.length];
        for (int i = 0; i < ranks.length; i++) {
          intRanks[i] = (int) ranks[i];
        }
        at = orderStatistics(values, size, intRanks);
      }
      double[] p = new double[PERCENTILES.length];
      for (int i = 0; i < p.length; i++) {
        // one rounding: the nearest double to the interpolated value (3484473.28, not 3484473.279999999)
        long a = at[2 * i];
        p[i] = (a * 100 + (at[2 * i + 1] - a) * hundredths[i]) / 100.0;
      }
      return new Distribution(n, sum / n, p[0], p[1], p[2], p[3]);
    }
  }

  /**
   * How often each non-negative value occurred. Values in a window chosen when the counts are made
   * (from the smallest value seen then, at most {@value #WINDOW_MAX} wide) are counted in a dense
   * array, one increment and no search (inter-token latencies of a long run: hundreds of millions
   * of adds); the others in open addressing with linear probing over two parallel arrays (key,
   * count), kept at most half full.
   */
  static final class Counts {
    private static final long EMPTY = -1;
    /** The widest dense window: 1 MiB of counts. */
    static final int WINDOW_MAX = 1 << 17;
    private long[] keys = filled(16);
    private long[] counts = new long[16];
    private int hashed;
    private int distinct;
    private final long base;
    private final long[] window;

    /** Counts without a dense window. */
    Counts() {
      base = 0;
      window = new long[0];
    }

    private Counts(Counts from) {
      keys = from.keys.clone();
      counts = from.counts.clone();
      hashed = from.hashed;
      distinct = from.distinct;
      base = from.base;
      window = from.window.clone();
    }

    Counts copy() {
      return new Counts(this);
    }

    /**
     * Counts whose dense window starts at {@code min} and spans {@code max - min + 1} values rounded
     * up to a power of two, at most {@value #WINDOW_MAX}.
     */
    Counts(long min, long max) {
      base = Math.max(0, min);
      long span = Math.max(1, Math.min(WINDOW_MAX, max - base + 1));
      long width = Long.highestOneBit(span);
      window = new long[(int) (width < span ? 2 * width : width)];
    }

    private static long[] filled(int capacity) {
      long[] k = new long[capacity];
      Arrays.fill(k, EMPTY);
      return k;
    }

    private static int slot(long key, int mask) {
      long h = key * 0x9E3779B97F4A7C15L;
      return (int) (h ^ (h >>> 32)) & mask;
    }

    void add(long value) {
      long d = value - base;
      if (d >= 0 && d < window.length) {
        if (window[(int) d]++ == 0) {
          distinct++;
        }
        return;
      }
      if (value < 0) {
        throw new IllegalArgumentException("negative latency sample " + value);
      }
      int mask = keys.length - 1;
      int i = slot(value, mask);
      while (keys[i] != EMPTY) {
        if (keys[i] == value) {
          counts[i]++;
          return;
        }
        i = (i + 1) & mask;
      }
      keys[i] = value;
      counts[i] = 1;
      distinct++;
      if (++hashed * 2 > keys.length) {
        grow();
      }
    }

    private void grow() {
      long[] oldKeys = keys;
      long[] oldCounts = counts;
      keys = filled(oldKeys.length * 2);
      counts = new long[oldKeys.length * 2];
      int mask = keys.length - 1;
      for (int j = 0; j < oldKeys.length; j++) {
        if (oldKeys[j] != EMPTY) {
          int i = slot(oldKeys[j], mask);
          while (keys[i] != EMPTY) {
            i = (i + 1) & mask;
          }
          keys[i] = oldKeys[j];
          counts[i] = oldCounts[j];
        }
      }
    }

    int distinct() {
      return distinct;
    }

    /**
     * The values at 0-based ranks {@code ranks} (any order) of the counted values in ascending
     * order: what a sorted list of every occurrence holds at those positions.
     */
    long[] orderStatistics(long[] ranks) {
      long[] sortedKeys = new long[distinct];
      long[] order = new long[distinct];
      int d = 0;
      for (int j = 0; j < window.length; j++) {
        if (window[j] != 0) {
          sortedKeys[d++] = base + j;
        }
      }
      for (int j = 0; j < keys.length; j++) {
        if (keys[j] != EMPTY) {
          sortedKeys[d++] = keys[j];
        }
      }
      Arrays.sort(sortedKeys);
      int mask = keys.length - 1;
      long atMost = 0;
      for (int v = 0; v < distinct; v++) {
        long key = sortedKeys[v];
        long dk = key - base;
        if (dk >= 0 && dk < window.length) {
          atMost += window[(int) dk];
        } else {
          int i = slot(key, mask);
          while (keys[i] != key) {
            i = (i + 1) & mask;
          }
          atMost += counts[i];
        }
        order[v] = atMost; // occurrences up to and including sortedKeys[v]
      }
      long[] at = new long[ranks.length];
      for (int r = 0; r < ranks.length; r++) {
        int pos = Arrays.binarySearch(order, ranks[r] + 1);
        at[r] = sortedKeys[pos >= 0 ? pos : -pos - 1];
      }
      return at;
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
    public ValueStore copy() {
      Streaming c = new Streaming();
      c.histogram.add(histogram);
      c.sum = sum;
      return c;
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
  private static final long[] PERCENTILES = {50, 90, 95, 99};

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
