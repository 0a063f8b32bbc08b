package io.blis.engine.corpus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.blis.workload.RequestOutcome;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class PointWorkloadTest {

  private static CorpusPoint.Workload serving(int n, double rate, int concurrency, int in, int out, double meanIn,
      double meanOut, double ratio, boolean aroundMean) {
    return new CorpusPoint.Workload(0, in, out, n, rate, 1.0, concurrency, "random", ratio, aroundMean, 0, meanIn,
        meanOut);
  }

  @Test
  void theLatencyBenchmarkSendsItsMeasuredBatchWhenTheWarmUpHasEnded() {
    RequestSource s = new PointWorkload.RepeatedBatch(3, 40, 8, true, 7);
    List<RequestSpec> warm = new ArrayList<>();
    for (RequestSpec r = s.next(); r != null; r = s.next()) {
      warm.add(r);
    }
    assertThat(warm).hasSize(3).allSatisfy(r -> assertThat(r.arrivalTimeUs()).isZero());
    assertThat(s.exhausted()).isFalse();
    s.onFinished(warm.get(0), RequestOutcome.COMPLETED, 500);
    assertThat(s.next()).isNull();
    s.onFinished(warm.get(1), RequestOutcome.COMPLETED, 700);
    s.onFinished(warm.get(2), RequestOutcome.COMPLETED, 900);
    RequestSpec first = s.next();
    assertThat(first.arrivalTimeUs()).isEqualTo(900);
    assertThat(first.stage()).isEqualTo(1);
    // the same prompt again: the prefix cache of V1 finds it
    assertThat(first.promptTokens()).containsExactly(warm.get(0).promptTokens());
    s.next();
    s.next();
    assertThat(s.next()).isNull();
    assertThat(s.exhausted()).isTrue();
    // V0, no prefix cache: new content
    RequestSource v0 = new PointWorkload.RepeatedBatch(1, 40, 8, false, 7);
    RequestSpec w = v0.next();
    v0.onFinished(w, RequestOutcome.COMPLETED, 10);
    assertThat(Arrays.equals(v0.next().promptTokens(), w.promptTokens())).isFalse();
  }

  @Test
  void aConcurrencyCapHoldsRequestsUntilASlotFrees() {
    List<RequestSpec> all = PointWorkload.requests(serving(5, Double.POSITIVE_INFINITY, 2, 10, 4, Double.NaN,
        Double.NaN, Double.NaN, false), 0, true, 3);
    RequestSource s = new PointWorkload.Gated(all, 2);
    assertThat(s.next()).isNotNull();
    assertThat(s.next()).isNotNull();
    assertThat(s.next()).isNull();
    List<RequestSpec> next = s.onFinished(all.get(0), RequestOutcome.COMPLETED, 1_000);
    assertThat(next).singleElement().satisfies(r -> {
      assertThat(r.id()).isEqualTo(2);
      assertThat(r.arrivalTimeUs()).isEqualTo(1_000);
    });
    s.onFinished(all.get(1), RequestOutcome.COMPLETED, 2_000);
    s.onFinished(all.get(2), RequestOutcome.COMPLETED, 3_000);
    assertThat(s.exhausted()).isTrue();
    assertThat(s.onFinished(all.get(3), RequestOutcome.COMPLETED, 4_000)).isEmpty();
  }

  @Test
  void poissonArrivalsHaveTheRatesMeanGap() {
    List<RequestSpec> all = PointWorkload.requests(serving(4001, 8.0, 0, 10, 4, Double.NaN, Double.NaN, Double.NaN,
        false), 0, false, 11);
    assertThat(all.get(0).arrivalTimeUs()).isZero();
    double meanGapS = all.get(4000).arrivalTimeUs() / 1e6 / 4000;
    assertThat(meanGapS).isCloseTo(1 / 8.0, within(0.01));
    // burstiness 3: gamma gaps of shape 3, the same mean
    List<RequestSpec> bursty = PointWorkload.requests(new CorpusPoint.Workload(0, 10, 4, 4001, 8.0, 3.0, 0, "random",
        Double.NaN, true, 0, Double.NaN, Double.NaN), 0, false, 11);
    assertThat(bursty.get(4000).arrivalTimeUs() / 1e6 / 4000).isCloseTo(1 / 8.0, within(0.01));
  }

  @Test
  void lengthsAreFixedSpreadByTheRangeRatioOrDrawnAroundTheMeasuredMean() {
    CorpusPoint.Workload fixed = serving(100, 1, 0, 100, 50, Double.NaN, Double.NaN, Double.NaN, false);
    assertThat(PointWorkload.lengths(100, 100, Double.NaN, fixed, 1)).containsOnly(100);
    // older scripts: [r L, L]; from 2025: [(1 - r) L, (1 + r) L]
    CorpusPoint.Workload below = serving(1000, 1, 0, 100, 50, Double.NaN, Double.NaN, 0.5, false);
    int[] b = PointWorkload.lengths(1000, 100, Double.NaN, below, 1);
    assertThat(Arrays.stream(b).min().orElseThrow()).isGreaterThanOrEqualTo(50);
    assertThat(Arrays.stream(b).max().orElseThrow()).isLessThanOrEqualTo(100);
    CorpusPoint.Workload around = serving(1000, 1, 0, 100, 50, Double.NaN, Double.NaN, 0.5, true);
    int[] a = PointWorkload.lengths(1000, 100, Double.NaN, around, 1);
    assertThat(Arrays.stream(a).min().orElseThrow()).isGreaterThanOrEqualTo(50);
    assertThat(Arrays.stream(a).max().orElseThrow()).isLessThanOrEqualTo(150);
    assertThat(Arrays.stream(a).average().orElseThrow()).isCloseTo(100, within(3.0));
    int[] v = PointWorkload.lengths(1000, 0, 217.4, fixed, 9);
    assertThat(Arrays.stream(v).average().orElseThrow()).isCloseTo(217.4, within(1.0));
    assertThat(Arrays.stream(v).max().orElseThrow()).isLessThanOrEqualTo((int) Math.ceil(8 * 217.4 * 1.1));
    // asked for 100, stopped early at 76.8 on average: every request gets the mean
    assertThat(PointWorkload.fixed(100, 76.81)).isEqualTo(77);
    assertThat(PointWorkload.fixed(100, Double.NaN)).isEqualTo(100);
    assertThat(PointWorkload.fixed(0, 76.81)).isZero();
  }
}
