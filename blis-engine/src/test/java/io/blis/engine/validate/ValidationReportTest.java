package io.blis.engine.validate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.blis.engine.report.ReportPages;
import io.blis.engine.result.RequestRecord;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ValidationReportTest {

  private static RunStats stats(double e2e, double e2eP90, double e2eP99, double ttft, double ttftP90,
      double decode, long ok, long failed) {
    return new RunStats(-1, ok, failed, e2e, e2e, e2eP90, e2eP99, ttft, ttft, ttftP90, ttftP90 * 2, decode, 10.0);
  }

  private static ExperimentComparison cmp(String id, boolean saturated, RunStats observed, RunStats predicted) {
    return new ExperimentComparison(id, "m", "w", saturated, new RunSummary(observed, List.of()),
        new RunSummary(predicted, List.of()));
  }

  private final ValidationReport report = new ValidationReport(List.of(
      // APE: e2e 10 %, p90 20 %, p99 5 %, ttft 50 %, ttft p90 0 %, decode 2 %
      cmp("a", false, stats(1000, 1000, 2000, 20, 40, 8.0, 100, 0), stats(1100, 1200, 1900, 30, 40, 8.16, 100, 0)),
      // APE: e2e 30 %, decode 4 %
      cmp("b", false, stats(2000, 2500, 3000, 50, 60, 10.0, 100, 0), stats(1400, 2500, 3000, 50, 60, 10.4, 100, 0)),
      // APE e2e 2 %, decode 6 %
      cmp("c", false, stats(500, 600, 700, 10, 12, 5.0, 100, 0), stats(510, 600, 700, 10, 12, 4.7, 100, 0)),
      // saturated: e2e 15 %, failure fraction 0.6 observed vs 0.45 predicted = 15 pp
      cmp("s", true, stats(100_000, 1, 1, 50_000, 1, 30, 40, 60), stats(115_000, 1, 1, 50_000, 1, 30, 55, 45))),
      "replay", "test-coefficients");

  @Test
  void apesAreComputedFromObservedAndPredicted() {
    ExperimentComparison a = report.comparisons().get(0);
    assertThat(a.ape(Metric.E2E_MEAN)).isCloseTo(10.0, within(1e-9));
    assertThat(a.ape(Metric.E2E_P90)).isCloseTo(20.0, within(1e-9));
    assertThat(a.ape(Metric.E2E_P99)).isCloseTo(5.0, within(1e-9));
    assertThat(a.ape(Metric.TTFT_MEAN)).isCloseTo(50.0, within(1e-9));
    assertThat(a.ape(Metric.TTFT_P90)).isCloseTo(0.0, within(1e-9));
    assertThat(a.ape(Metric.DECODE_MS_PER_TOKEN)).isCloseTo(2.0, within(1e-9));
    assertThat(report.comparisons().get(3).failureFractionDiffPp()).isCloseTo(15.0, within(1e-9));
    assertThat(Metric.ape(1, 0)).isNaN();
    assertThat(Metric.ape(Double.NaN, 3)).isNaN();
  }

  @Test
  void summarySeparatesSaturatedRuns() {
    ValidationReport.Aggregate e2e = report.aggregate(Metric.E2E_MEAN, false);
    assertThat(e2e.count()).isEqualTo(3);
    assertThat(e2e.median()).isCloseTo(10.0, within(1e-9));
    assertThat(e2e.mean()).isCloseTo(14.0, within(1e-9));
    assertThat(e2e.max()).isCloseTo(30.0, within(1e-9));
    assertThat(report.aggregate(Metric.DECODE_MS_PER_TOKEN, false).median()).isCloseTo(4.0, within(1e-9));
    assertThat(report.aggregate(Metric.E2E_MEAN, true).median()).isCloseTo(15.0, within(1e-9));
    assertThat(report.failureDiff(true).max()).isCloseTo(15.0, within(1e-9));
    assertThat(report.above(Metric.E2E_MEAN, 10.0, false)).containsExactly("a", "b");
  }

  @Test
  void jsonHasTheAgreedKeysAndValues() throws Exception {
    JsonNode root = new ObjectMapper().readTree(report.toJson());
    JsonNode a = root.get("experiments").get(0);
    assertThat(a.get("id").asText()).isEqualTo("a");
    assertThat(a.get("saturated").asBoolean()).isFalse();
    assertThat(a.get("observed").get("e2e_mean").asDouble()).isEqualTo(1000.0);
    assertThat(a.get("predicted").get("e2e_mean").asDouble()).isEqualTo(1100.0);
    JsonNode ape = a.get("ape_pct");
    for (String key : List.of("e2e_mean", "e2e_p90", "e2e_p99", "ttft_mean", "ttft_p90", "decode_ms_per_token")) {
      assertThat(ape.has(key)).as(key).isTrue();
    }
    assertThat(ape.get("e2e_mean").asDouble()).isEqualTo(10.0);
    assertThat(ape.get("e2e_p90").asDouble()).isEqualTo(20.0);
    assertThat(ape.get("ttft_mean").asDouble()).isEqualTo(50.0);
    assertThat(ape.get("decode_ms_per_token").asDouble()).isEqualTo(2.0);
    JsonNode summary = root.get("summary");
    assertThat(summary.get("non_saturated").get("experiments").asInt()).isEqualTo(3);
    assertThat(summary.get("non_saturated").get("ape_pct").get("e2e_mean").get("median").asDouble()).isEqualTo(10.0);
    assertThat(summary.get("saturated").get("failure_fraction_diff_pp").get("max").asDouble()).isEqualTo(15.0);
    // deterministic rendering
    assertThat(report.toJson()).isEqualTo(report.toJson());
  }

  @Test
  void missingObservedValuesBecomeJsonNull() throws Exception {
    RunStats obs = new RunStats(-1, 10, 0, 100, Double.NaN, Double.NaN, Double.NaN, 10, Double.NaN, Double.NaN,
        Double.NaN, 1, Double.NaN);
    ValidationReport r = new ValidationReport(List.of(cmp("x", false, obs, obs)), "synthetic", "c");
    JsonNode x = new ObjectMapper().readTree(r.toJson()).get("experiments").get(0);
    assertThat(x.get("observed").get("e2e_p90").isNull()).isTrue();
    assertThat(x.get("ape_pct").get("e2e_p90").isNull()).isTrue();
    assertThat(x.get("ape_pct").get("e2e_mean").asDouble()).isEqualTo(0.0);
  }

  @Test
  void tableAndHtmlShowEveryExperiment() {
    String table = report.table();
    String html = report.html();
    for (String id : List.of("a", "b", "c", "s")) {
      assertThat(html).contains("<h3>" + id);
    }
    assertThat(table).contains("non-saturated experiments").contains("saturated experiments");
    assertThat(html).startsWith("<!DOCTYPE html>").contains("</html>").contains("<pre>" + table.substring(0, 40))
        .doesNotContain("http://cdn");
    assertThat(ReportPages.loadsExternalResources(html)).isFalse();
    // no run has per-request data: one chart, across the runs
    assertThat(ReportPages.specs(html)).hasSize(1);
    assertThat(html).contains("No per-request data on either side.");
  }

  @Test
  void theAcrossRunsChartHoldsEachRunsObservedAndPredictedValues() {
    JsonNode across = ReportPages.specs(report.html()).get(0);
    List<JsonNode> e2e = ReportPages.rows(across, "runs", r -> r.get("metric").asText().equals("E2E mean, ms"));
    assertThat(e2e).extracting(r -> r.get("run").asText()).containsExactly("a", "b", "c", "s");
    assertThat(e2e.get(1).get("observed").asDouble()).isEqualTo(2000.0);
    assertThat(e2e.get(1).get("predicted").asDouble()).isEqualTo(1400.0);
    assertThat(e2e.get(1).get("ape_pct").asDouble()).isEqualTo(30.0);
    assertThat(e2e.get(3).get("group").asText()).isEqualTo("saturated");
    // one panel per metric that has values; each with its own y = x line spanning every value of the panel
    JsonNode panels = across.get("concat");
    assertThat(panels).hasSize(6);
    JsonNode first = panels.get(0);
    assertThat(first.get("title").asText()).isEqualTo("E2E mean, ms");
    double[] line = {first.at("/layer/0/data/values/0/v").asDouble(), first.at("/layer/0/data/values/1/v").asDouble()};
    assertThat(line[0]).isLessThan(500.0);
    assertThat(line[1]).isGreaterThan(115_000.0);
    assertThat(first.at("/layer/0/encoding/x/scale/domain")).isEqualTo(first.at("/layer/0/encoding/y/scale/domain"));
  }

  @Test
  void eachRunWithRequestsGetsItsCdfsAndTimeline() {
    // observed: 6 requests over two stages; predicted: the same, each 10% slower
    List<RequestRecord> obs = new ArrayList<>();
    List<RequestRecord> pred = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      long arrival = i * 2_000_000L + (i >= 3 ? 10_000_000 : 0);
      long ttft = 20_000 + 1_000 * i;
      long e2e = 1_000_000 + 100_000 * i;
      obs.add(TraceFixtures.completed(i, i / 3, arrival, ttft, e2e));
      pred.add(TraceFixtures.completed(i, i / 3, arrival, ttft * 11 / 10, e2e * 11 / 10));
    }
    ExperimentComparison run = new ExperimentComparison("traced", "m", "w", false,
        RunStatsCalculator.summarize(obs, 10), RunStatsCalculator.summarize(pred, 10));
    ValidationReport r = new ValidationReport(List.of(run, report.comparisons().get(3)), "replay", "c");
    List<JsonNode> specs = ReportPages.specs(r.html());
    assertThat(specs).hasSize(3);
    JsonNode cdf = specs.get(1);
    JsonNode observedE2e = ReportPages.rows(cdf, "cdf", x -> x.get("side").asText().equals("observed")
        && x.get("metric").asText().equals("E2E, ms")).get(0);
    assertThat(ReportPages.numbers(observedE2e.get("ms"))).containsExactly(1000, 1100, 1200, 1300, 1400, 1500);
    assertThat(ReportPages.numbers(observedE2e.get("fraction")))
        .containsExactly(new double[] {1 / 6.0, 2 / 6.0, 3 / 6.0, 4 / 6.0, 5 / 6.0, 1.0}, within(1e-4));
    JsonNode predictedTtft = ReportPages.rows(cdf, "cdf", x -> x.get("side").asText().equals("predicted")
        && x.get("metric").asText().equals("TTFT, ms")).get(0);
    assertThat(ReportPages.numbers(predictedTtft.get("ms"))).containsExactly(22, 23.1, 24.2, 25.3, 26.4, 27.5);
    // per output token: (E2E - TTFT) / 9
    JsonNode perToken = ReportPages.rows(cdf, "cdf", x -> x.get("side").asText().equals("observed")
        && x.get("metric").asText().equals("per output token, ms")).get(0);
    assertThat(perToken.get("ms").get(0).asDouble()).isCloseTo((1000 - 20) / 9.0, within(0.01));
    assertThat(cdf.get("hconcat")).hasSize(3);
    JsonNode timeline = specs.get(2);
    assertThat(ReportPages.rows(timeline, "stages")).extracting(x -> x.get("stage").asText())
        .containsExactly("stage 0: 0.500 req/s", "stage 1: 0.500 req/s");
    assertThat(ReportPages.rows(timeline, "stages").get(1).get("start").asDouble()).isEqualTo(16.0);
    JsonNode completed = ReportPages.rows(timeline, "timeline", x -> x.get("metric").asText().equals("completed")
        && x.get("side").asText().equals("predicted")).get(0);
    assertThat(ReportPages.numbers(completed.get("v"))).containsOnly(100.0).hasSize(6);
    assertThat(timeline.get("vconcat")).hasSize(3);
  }
}
