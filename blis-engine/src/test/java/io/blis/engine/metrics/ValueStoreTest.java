package io.blis.engine.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.blis.engine.result.Distribution;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The exact store's percentiles come from selected order statistics, not a full sort: they must be
 * the very values the sort gave (linear interpolation between the two neighbouring ranks).
 */
class ValueStoreTest {

  static LongStream seeds() {
    return LongStream.range(1, 61);
  }

  /** Values of every awkward shape: ties, runs, sorted, reversed, constant, a few outliers. */
  static long[] values(long seed) {
    SplittableRandom rnd = new SplittableRandom(seed);
    int n = switch ((int) (seed % 4)) {
      case 0 -> 1 + rnd.nextInt(5);
      case 1 -> 1 + rnd.nextInt(40);
      default -> 1 + rnd.nextInt(20_000);
    };
    long[] v = new long[n];
    int shape = (int) (seed % 6);
    for (int i = 0; i < n; i++) {
      v[i] = switch (shape) {
        case 0 -> rnd.nextLong(1_000_000_000L);
        case 1 -> rnd.nextInt(7); // many ties
        case 2 -> i; // ascending
        case 3 -> n - i; // descending
        case 4 -> 42; // constant
        default -> rnd.nextInt(100) == 0 ? 5_000_000 + rnd.nextInt(1000) : 20_000 + rnd.nextInt(50);
      };
    }
    return v;
  }

  static long[] sorted(long[] values) {
    long[] s = values.clone();
    Arrays.sort(s);
    return s;
  }

  /** The percentile as the sort-based code computed it. */
  /** The percentile by its definition in exact decimal arithmetic, rounded once to a double. */
  static double sortedPercentile(long[] values, double p) {
    long[] s = sorted(values);
    java.math.BigDecimal rank = java.math.BigDecimal.valueOf(p).multiply(java.math.BigDecimal.valueOf(s.length - 1))
        .divide(java.math.BigDecimal.valueOf(100));
    int lo = rank.intValue();
    int hi = rank.compareTo(java.math.BigDecimal.valueOf(lo)) > 0 ? lo + 1 : lo;
    return java.math.BigDecimal.valueOf(s[lo]).add(java.math.BigDecimal.valueOf(s[hi] - s[lo])
        .multiply(rank.subtract(java.math.BigDecimal.valueOf(lo)))).doubleValue();
  }

  /** A percentile between two samples is the double nearest its value, so it prints as written. */
  @Test
  void anInterpolatedPercentileIsTheDoubleNearestItsValue() {
    ValueStore store = ValueStore.create(false);
    for (int i = 0; i < 68; i++) {
      store.add(1000);
    }
    store.add(1001); // p99 of 69 values: rank 67.32, between 1000 and 1001 (was 1000.3199999999999)
    assertThat(String.valueOf(store.summarize().p99Us())).isEqualTo("1000.32");
  }

  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  void percentilesEqualThoseOfAFullSort(long seed) {
    long[] v = values(seed);
    ValueStore store = ValueStore.create(false);
    double sum = 0;
    for (long x : v) {
      store.add(x);
      sum += x;
    }
    Distribution d = store.summarize();
    assertThat(d.count()).as("seed %d", seed).isEqualTo(v.length);
    assertThat(d.meanUs()).as("seed %d", seed).isEqualTo(sum / v.length);
    assertThat(d.p50Us()).as("seed %d", seed).isEqualTo(sortedPercentile(v, 50));
    assertThat(d.p90Us()).as("seed %d", seed).isEqualTo(sortedPercentile(v, 90));
    assertThat(d.p95Us()).as("seed %d", seed).isEqualTo(sortedPercentile(v, 95));
    assertThat(d.p99Us()).as("seed %d", seed).isEqualTo(sortedPercentile(v, 99));
  }

  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  void selectPlacesTheRankAndPartitionsAroundIt(long seed) {
    long[] v = values(seed);
    long[] sorted = sorted(v);
    int k = new SplittableRandom(seed ^ 0x5DEECE66DL).nextInt(v.length);
    long[] a = v.clone();
    ValueStore.select(a, 0, a.length, k);
    assertThat(a[k]).as("seed %d, rank %d", seed, k).isEqualTo(sorted[k]);
    for (int i = 0; i < a.length; i++) {
      if (i < k) {
        assertThat(a[i]).as("seed %d, left of rank", seed).isLessThanOrEqualTo(a[k]);
      } else if (i > k) {
        assertThat(a[i]).as("seed %d, right of rank", seed).isGreaterThanOrEqualTo(a[k]);
      }
    }
    assertThat(sorted(a)).as("seed %d: a permutation", seed).isEqualTo(sorted);
  }

  /** Shapes 1 to 4 span fewer integers than values (counted), 0 and 5 more (selected). */
  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  void orderStatisticsAreThoseOfASortedCopyAndLeaveTheValuesAlone(long seed) {
    long[] v = values(seed);
    long[] sorted = sorted(v);
    SplittableRandom rnd = new SplittableRandom(seed * 31);
    int[] ranks = rnd.ints(1 + rnd.nextInt(9), 0, v.length).toArray(); // any order, repeats
    long[] original = v.clone();
    long[] at = ValueStore.orderStatistics(v, v.length, ranks);
    for (int j = 0; j < ranks.length; j++) {
      assertThat(at[j]).as("seed %d, rank %d", seed, ranks[j]).isEqualTo(sorted[ranks[j]]);
    }
    assertThat(v).as("seed %d: values untouched", seed).isEqualTo(original);
  }

  @Test
  void handComputedSmallCase() {
    ValueStore store = ValueStore.create(false);
    for (long x : new long[] {40, 10, 30, 20, 50}) {
      store.add(x);
    }
    Distribution d = store.summarize();
    // sorted 10..50; p50 rank 2 -> 30; p90 rank 3.6 -> 40 + 0.6 x 10; p95 rank 3.8; p99 rank 3.96
    assertThat(d.p50Us()).isEqualTo(30.0);
    assertThat(d.p90Us()).isCloseTo(46.0, Offset.offset(1e-9));
    assertThat(d.p95Us()).isCloseTo(48.0, Offset.offset(1e-9));
    assertThat(d.p99Us()).isCloseTo(49.6, Offset.offset(1e-9));
    assertThat(d.meanUs()).isEqualTo(30.0);
  }

  /** Adds every value and checks the summary against a full sort of them. */
  private static ValueStore.Exact checkedAgainstSort(long[] v) {
    ValueStore.Exact store = new ValueStore.Exact();
    for (long x : v) {
      store.add(x);
    }
    Distribution d = store.summarize();
    assertThat(d.count()).isEqualTo(v.length);
    assertThat(d.p50Us()).isEqualTo(sortedPercentile(v, 50));
    assertThat(d.p90Us()).isEqualTo(sortedPercentile(v, 90));
    assertThat(d.p95Us()).isEqualTo(sortedPercentile(v, 95));
    assertThat(d.p99Us()).isEqualTo(sortedPercentile(v, 99));
    return store;
  }

  /** Inter-token latencies: many samples, few distinct step times. Counted, same percentiles. */
  @Test
  void repeatingValuesAreCountedWithTheSortsPercentiles() {
    SplittableRandom rnd = new SplittableRandom(7);
    long[] v = new long[300_000];
    for (int i = 0; i < v.length; i++) {
      v[i] = 8_000 + rnd.nextInt(300) + (rnd.nextInt(1000) == 0 ? 2_000_000 : 0);
    }
    assertThat(checkedAgainstSort(v).counted()).isTrue();
  }

  /** End-to-end latencies: nearly every value distinct. Kept one by one, same percentiles. */
  @Test
  void distinctValuesStayListed() {
    SplittableRandom rnd = new SplittableRandom(8);
    long[] v = new long[100_000];
    for (int i = 0; i < v.length; i++) {
      v[i] = rnd.nextLong(10_000_000_000L);
    }
    assertThat(checkedAgainstSort(v).counted()).isFalse();
  }

  /** Distinct first, repeating later: switches at a later look, and the result is the same. */
  @Test
  void valuesThatStartRepeatingLateAreCountedThen() {
    SplittableRandom rnd = new SplittableRandom(9);
    long[] v = new long[200_000];
    for (int i = 0; i < v.length; i++) {
      v[i] = i < 40_000 ? rnd.nextLong(1_000_000_000L) : 30_000 + rnd.nextInt(64);
    }
    assertThat(checkedAgainstSort(v).counted()).isTrue();
  }

  /**
   * A cluster's inter-token latencies: each finishing request adds its own run of step times, so a
   * recent window is mostly distinct, but over the whole run the step times repeat. Counted.
   */
  @Test
  void valuesThatRepeatOnlyOverTheWholeRunAreCounted() {
    SplittableRandom rnd = new SplittableRandom(10);
    long[] v = new long[600_000];
    for (int i = 0; i < v.length; i++) {
      v[i] = 5_000 + rnd.nextInt(40_000);
    }
    assertThat(checkedAgainstSort(v).counted()).isTrue();
  }

  /** Ties at the very ranks the percentiles read, in the counted form. */
  @Test
  void countedRanksLandOnTheRightValueAtTies() {
    long[] v = new long[100_000];
    for (int i = 0; i < v.length; i++) {
      v[i] = i % 100 < 50 ? 10 : i % 100 < 90 ? 20 : i % 100 < 99 ? 30 : 40; // 50/90/99% boundaries
    }
    assertThat(checkedAgainstSort(v).counted()).isTrue();
  }
}
