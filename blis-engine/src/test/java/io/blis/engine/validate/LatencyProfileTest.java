package io.blis.engine.validate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.blis.engine.result.RequestRecord;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class LatencyProfileTest {

  @Test
  void aSmallRunIsDescribedExactly() {
    // arrivals at 0, 1, 2, 3 s (stage 0) and 10, 11 s (stage 1); request 2 times out
    List<RequestRecord> rs = List.of(
        TraceFixtures.completed(0, 0, 0, 10_000, 100_000),
        TraceFixtures.completed(1, 0, 1_000_000, 30_000, 300_000),
        TraceFixtures.timedOut(2, 0, 2_000_000, 5_000_000),
        TraceFixtures.completed(3, 0, 3_000_000, 20_000, 100_000),
        TraceFixtures.completed(4, 1, 10_000_000, 40_000, 400_000),
        TraceFixtures.completed(5, 1, 11_000_000, 10_000, 200_000));
    LatencyProfile p = LatencyProfile.of(rs);
    // E2E of the 5 completed: 100, 100, 200, 300, 400 ms; the tie is one point at 2/5
    assertThat(p.e2e().count()).isEqualTo(5);
    assertThat(p.e2e().points()).containsExactly(new LatencyProfile.CdfPoint(100, 0.4),
        new LatencyProfile.CdfPoint(200, 0.6), new LatencyProfile.CdfPoint(300, 0.8),
        new LatencyProfile.CdfPoint(400, 1.0));
    assertThat(p.ttft().points()).extracting(LatencyProfile.CdfPoint::valueMs).containsExactly(10.0, 20.0, 30.0, 40.0);
    // per token: (E2E - TTFT) / (10 - 1), e.g. (100 - 10) / 9 = 10 ms
    assertThat(p.perToken().points().get(0).valueMs()).isCloseTo(80.0 / 9, within(1e-9));
    assertThat(p.perToken().points().get(p.perToken().points().size() - 1).valueMs()).isCloseTo(40.0, within(1e-9));
    assertThat(p.stages()).containsExactly(new LatencyProfile.StageSpan(0, 0, 3, 4),
        new LatencyProfile.StageSpan(1, 10, 11, 2));
    assertThat(p.stages().get(0).arrivalRps()).isCloseTo(1.0, within(1e-12));
    // 11 s in bins of 0.1 s (11 / 118 = 0.093 -> 0.1): one bin per arrival
    assertThat(p.timeline()).hasSize(6);
    LatencyProfile.TimeBin third = p.timeline().get(2);
    assertThat(third.startS()).isCloseTo(2.0, within(1e-9));
    assertThat(third.arrivals()).isEqualTo(1);
    assertThat(third.completed()).isZero();
    assertThat(third.e2eMeanMs()).isNaN();
    assertThat(p.timeline().get(1).e2eMeanMs()).isEqualTo(300.0);
    assertThat(LatencyProfile.of(List.of())).isSameAs(LatencyProfile.NONE);
    assertThat(LatencyProfile.NONE.isEmpty()).isTrue();
    assertThat(p.isEmpty()).isFalse();
  }

  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3})
  void aLargeRunKeepsAtMost200PointsEachAtItsTrueFractionAndTheTail(long seed) {
    Random rnd = new Random(seed);
    int n = 5_000 + rnd.nextInt(20_000);
    List<RequestRecord> rs = new ArrayList<>();
    double[] e2e = new double[n];
    for (int i = 0; i < n; i++) {
      long ttft = 1_000 + (long) (rnd.nextDouble() * 50_000);
      long total = ttft + (long) (Math.exp(rnd.nextGaussian()) * 1_000_000);
      rs.add(TraceFixtures.completed(i, i * 3 / n, (long) (i * 1e6 / 7), ttft, total));
      e2e[i] = total / 1000.0;
    }
    Arrays.sort(e2e);
    LatencyProfile p = LatencyProfile.of(rs);
    List<LatencyProfile.CdfPoint> pts = p.e2e().points();
    assertThat(pts.size()).as("seed %d", seed).isBetween(150, LatencyProfile.MAX_CDF_POINTS);
    assertThat(pts.get(0).valueMs()).isEqualTo(e2e[0]);
    assertThat(pts.get(pts.size() - 1)).isEqualTo(new LatencyProfile.CdfPoint(e2e[n - 1], 1.0));
    for (int i = 0; i < pts.size(); i++) {
      double v = pts.get(i).valueMs();
      long atOrBelow = Arrays.stream(e2e).filter(x -> x <= v).count();
      assertThat(pts.get(i).fraction()).as("seed %d point %d", seed, i).isEqualTo((double) atOrBelow / n);
      if (i > 0) {
        assertThat(v).isGreaterThan(pts.get(i - 1).valueMs());
      }
    }
    // the top 2% holds about a fifth of the points: the tail is drawn, not skipped
    assertThat(pts.stream().filter(x -> x.fraction() > 0.98).count()).isGreaterThanOrEqualTo(30);
    assertThat(p.timeline().size()).isLessThanOrEqualTo(LatencyProfile.MAX_BINS);
    assertThat(p.timeline().stream().mapToInt(LatencyProfile.TimeBin::arrivals).sum()).isEqualTo(n);
    int[] perStage = new int[3];
    rs.forEach(r -> perStage[r.stage()]++);
    assertThat(p.stages()).extracting(LatencyProfile.StageSpan::requests)
        .containsExactly(perStage[0], perStage[1], perStage[2]);
  }

  @ParameterizedTest
  @ValueSource(doubles = {0.0005, 0.9, 11, 1200, 12_345.6, 400_000})
  void binWidthsAreRoundAndGiveAtMostTheBins(double spanS) {
    double w = LatencyProfile.binWidthS(spanS);
    double mantissa = w / Math.pow(10, Math.floor(Math.log10(w) + 1e-9));
    assertThat(List.of(1.0, 2.0, 5.0)).anyMatch(m -> Math.abs(m - mantissa) < 1e-6);
    assertThat(spanS / w).isLessThanOrEqualTo(LatencyProfile.MAX_BINS - 2 + 1e-9);
    // the next smaller round width would give too many bins
    double smaller = mantissa < 1.5 ? w / 2 : mantissa < 3 ? w / 2 : w * 2 / 5;
    assertThat(Math.max(spanS, 1e-3) / smaller).isGreaterThan(LatencyProfile.MAX_BINS - 2);
  }

  @Test
  void theObservedSideOfATracedRunCarriesTheTraceProfileWithTheRecordedSummary() {
    Experiment e = ExperimentsFile.read(TraceFixtures.resource("experiments-small.json")).get(0);
    RunSummary observed = new EngineRunSimulator(EngineRunSimulator.Mode.REPLAY, "trained-physics", 42).observed(e, 0);
    assertThat(observed.overall()).isEqualTo(e.observed().overall());
    List<RequestRecord> trace = EngineRunSimulator.observedRecords(e);
    assertThat(observed.profile()).isEqualTo(LatencyProfile.of(trace));
    assertThat(observed.profile().e2e().count()).isEqualTo(e.observed().overall().countSuccess());
    // a subsample's profile is of the same requests as its statistics
    RunSummary first = RunStatsCalculator.summarizeFirst(trace, 120, e.outputLen());
    assertThat(first.profile().e2e().count()).isEqualTo(first.overall().countSuccess());
  }
}
