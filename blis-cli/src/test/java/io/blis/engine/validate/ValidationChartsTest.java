package io.blis.engine.validate;

import static io.blis.engine.validate.ValidationReportTest.REPORT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.assertj.core.api.Assertions.withinPercentage;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.blis.cli.report.ReportPages;
import io.blis.cli.report.ValidationCharts;
import io.blis.engine.result.RequestRecord;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The HTML page of a validation report (blis-cli draws it; the reports and their fixtures are the
 * engine's, from its test jar, hence this package).
 */
class ValidationChartsTest {

  @Test
  void thePageShowsEveryExperimentAndItsTable() {
    String table = REPORT.table();
    String html = ValidationCharts.html(REPORT);
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
    JsonNode across = ReportPages.specs(ValidationCharts.html(REPORT)).get(0);
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
    ValidationReport r = new ValidationReport(List.of(run, REPORT.comparisons().get(3)), "replay", "c");
    List<JsonNode> specs = ReportPages.specs(ValidationCharts.html(r));
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

  @Test
  void theAcrossRunsChartDrawsEachIntervalAsAnErrorBar() throws Exception {
    PredictionIntervalTest.ThreeRuns t = PredictionIntervalTest.ThreeRuns.make();
    ValidationReport r = t.report(new Ensemble("trained-physics", t.members(),
        Map.of(Metric.E2E_MEAN, 0.05, Metric.TTFT_MEAN, 0.1), "t"));
    JsonNode root = new ObjectMapper().readTree(r.toJson());
    // the chart across runs draws each interval as an error bar around the prediction
    JsonNode across = ReportPages.specs(ValidationCharts.html(r)).get(0);
    List<JsonNode> bars = ReportPages.rows(across, "runs", x -> x.get("metric").asText().equals("E2E mean, ms"));
    assertThat(bars).hasSize(3);
    for (int i = 0; i < bars.size(); i++) {
      JsonNode json = root.path("experiments").get(i).path("interval").path("e2e_mean");
      assertThat(bars.get(i).get("low").asDouble()).isCloseTo(json.get("low").asDouble(), withinPercentage(0.01));
      assertThat(bars.get(i).get("high").asDouble()).isCloseTo(json.get("high").asDouble(), withinPercentage(0.01));
      assertThat(bars.get(i).get("low").asDouble()).isLessThan(bars.get(i).get("predicted").asDouble());
      assertThat(bars.get(i).get("observed_inside").asText()).isEqualTo("yes");
    }
    // p99 has no interval: no bars there
    assertThat(ReportPages.rows(across, "runs", x -> x.get("metric").asText().equals("E2E p99, ms")))
        .allMatch(x -> !x.has("low"));
    assertThat(across.at("/concat/0/layer").size()).isEqualTo(3);
    assertThat(across.at("/concat/1/layer").size()).isEqualTo(2);
  }
}
