package io.blis.engine.validate;

import static io.blis.engine.validate.TraceFixtures.completed;
import static io.blis.engine.validate.TraceFixtures.timedOut;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.blis.engine.result.RequestRecord;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RunStatsCalculatorTest {

  @Test
  void handMadeRunGivesTheHandComputedStatistics() {
    // stage 0: E2E 100, 200, 300, 400 ms; TTFT 10, 20, 30, 40 ms; one timeout (excluded)
    List<RequestRecord> records = List.of(
        completed(0, 0, 0, 10_000, 100_000),
        completed(1, 0, 1_000_000, 20_000, 200_000),
        completed(2, 0, 2_000_000, 30_000, 300_000),
        completed(3, 0, 3_000_000, 40_000, 400_000),
        timedOut(4, 0, 3_500_000, 300_000_000L),
        completed(5, 1, 400_000_000L, 50_000, 500_000));
    RunSummary s = RunStatsCalculator.summarize(records, 11);

    RunStats st0 = s.stages().get(0);
    assertThat(st0.stage()).isZero();
    assertThat(st0.countSuccess()).isEqualTo(4);
    assertThat(st0.countFailed()).isEqualTo(1);
    assertThat(st0.e2eMeanMs()).isCloseTo(250.0, within(1e-9));
    // numpy linear: rank 0.5*3 = 1.5 -> 250; 0.9*3 = 2.7 -> 370; 0.99*3 = 2.97 -> 397
    assertThat(st0.e2eP50Ms()).isCloseTo(250.0, within(1e-9));
    assertThat(st0.e2eP90Ms()).isCloseTo(370.0, within(1e-9));
    assertThat(st0.e2eP99Ms()).isCloseTo(397.0, within(1e-9));
    assertThat(st0.ttftMeanMs()).isCloseTo(25.0, within(1e-9));
    assertThat(st0.ttftP90Ms()).isCloseTo(37.0, within(1e-9));
    // (250 - 25) / (11 - 1)
    assertThat(st0.decodeMsPerToken()).isCloseTo(22.5, within(1e-9));
    // 4 successes over first start 0 s .. last end 303.5 s (the timeout)
    assertThat(st0.throughputRps()).isCloseTo(4 / 303.5, within(1e-12));
    assertThat(st0.failureFraction()).isCloseTo(0.2, within(1e-12));

    RunStats all = s.overall();
    assertThat(all.stage()).isEqualTo(-1);
    assertThat(all.countSuccess()).isEqualTo(5);
    assertThat(all.e2eMeanMs()).isCloseTo(300.0, within(1e-9));
    assertThat(s.stages()).hasSize(2);
    assertThat(s.stages().get(1).e2eMeanMs()).isCloseTo(500.0, within(1e-9));
  }

  @Test
  void noSuccessesGivesNanLatenciesAndZeroThroughput() {
    RunStats st = RunStatsCalculator.stats(0, List.of(timedOut(0, 0, 0, 300_000_000L)), 10);
    assertThat(st.countSuccess()).isZero();
    assertThat(st.e2eMeanMs()).isNaN();
    assertThat(st.throughputRps()).isZero();
    assertThat(st.failureFraction()).isEqualTo(1.0);
  }

  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {1, 7, 42, 1234, 98765})
  void percentileMatchesTheDefinitionOnRandomData(long seed) {
    SplittableRandom rnd = new SplittableRandom(seed);
    int n = 1 + rnd.nextInt(200);
    double[] v = new double[n];
    for (int i = 0; i < n; i++) {
      v[i] = rnd.nextDouble() * 1000;
    }
    Arrays.sort(v);
    double p = rnd.nextDouble() * 100;
    double value = RunStatsCalculator.percentile(v, p);
    // monotone in p, bounded by the data, exact at order statistics
    assertThat(value).isBetween(v[0], v[n - 1]);
    assertThat(RunStatsCalculator.percentile(v, Math.min(100, p + 5))).isGreaterThanOrEqualTo(value);
    int k = rnd.nextInt(n);
    double pk = n == 1 ? 0 : 100.0 * k / (n - 1);
    assertThat(RunStatsCalculator.percentile(v, pk)).isCloseTo(v[k], within(1e-9));
    // fraction of values at or below the percentile is at least p% of n-1 positions
    long below = Arrays.stream(v).filter(x -> x <= value + 1e-12).count();
    assertThat(below - 1).isGreaterThanOrEqualTo((long) Math.floor(p / 100 * (n - 1)));
  }

  @Test
  void reproducesInferencePerfStatisticsOfARealRun() {
    Path exp = Path.of("/work/shared/groundtruth/experiments.json");
    assumeTrue(Files.exists(exp), "ground truth not available");
    for (Experiment e : ExperimentsFile.read(exp)) {
      if (!e.id().endsWith("llama-2-7b-tp1-codegen") && !e.id().endsWith("mixtral-8x7b-v0-1-tp2-reasoning")) {
        continue;
      }
      List<RequestRecord> records = TraceFixtures.read(e.trace().orElseThrow(), e.outputLen());
      RunSummary s = RunStatsCalculator.summarize(records, e.outputLen());
      List<RunStats[]> pairs = new ArrayList<>();
      pairs.add(new RunStats[] {e.observed().overall(), s.overall()});
      for (int i = 0; i < e.observed().stages().size(); i++) {
        pairs.add(new RunStats[] {e.observed().stages().get(i), s.stages().get(i)});
      }
      for (RunStats[] p : pairs) {
        assertThat(p[1].countSuccess()).isEqualTo(p[0].countSuccess());
        assertThat(p[1].countFailed()).isEqualTo(p[0].countFailed());
        assertThat(p[1].e2eMeanMs()).isCloseTo(p[0].e2eMeanMs(), within(0.01));
        assertThat(p[1].e2eP90Ms()).isCloseTo(p[0].e2eP90Ms(), within(0.01));
        assertThat(p[1].e2eP99Ms()).isCloseTo(p[0].e2eP99Ms(), within(0.01));
        assertThat(p[1].ttftMeanMs()).isCloseTo(p[0].ttftMeanMs(), within(0.01));
        assertThat(p[1].ttftP99Ms()).isCloseTo(p[0].ttftP99Ms(), within(0.01));
        assertThat(p[1].decodeMsPerToken()).isCloseTo(p[0].decodeMsPerToken(), within(0.01));
        assertThat(p[1].throughputRps()).isCloseTo(p[0].throughputRps(), within(0.01 * p[0].throughputRps()));
      }
    }
  }
}
