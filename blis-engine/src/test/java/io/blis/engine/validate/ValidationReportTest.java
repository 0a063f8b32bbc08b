package io.blis.engine.validate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import org.junit.jupiter.api.Test;

class ValidationReportTest {

  static RunStats stats(double e2e, double e2eP90, double e2eP99, double ttft, double ttftP90,
      double decode, long ok, long failed) {
    return new RunStats(-1, ok, failed, e2e, e2e, e2eP90, e2eP99, ttft, ttft, ttftP90, ttftP90 * 2, decode, 10.0);
  }

  static ExperimentComparison cmp(String id, boolean saturated, RunStats observed, RunStats predicted) {
    return new ExperimentComparison(id, "m", "w", saturated, new RunSummary(observed, List.of()),
        new RunSummary(predicted, List.of()));
  }

  /** Four runs, one saturated, with the APEs noted (ValidationChartsTest in blis-cli draws them too). */
  static final ValidationReport REPORT = new ValidationReport(List.of(
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
    ExperimentComparison a = REPORT.comparisons().get(0);
    assertThat(a.ape(Metric.E2E_MEAN)).isCloseTo(10.0, within(1e-9));
    assertThat(a.ape(Metric.E2E_P90)).isCloseTo(20.0, within(1e-9));
    assertThat(a.ape(Metric.E2E_P99)).isCloseTo(5.0, within(1e-9));
    assertThat(a.ape(Metric.TTFT_MEAN)).isCloseTo(50.0, within(1e-9));
    assertThat(a.ape(Metric.TTFT_P90)).isCloseTo(0.0, within(1e-9));
    assertThat(a.ape(Metric.DECODE_MS_PER_TOKEN)).isCloseTo(2.0, within(1e-9));
    assertThat(REPORT.comparisons().get(3).failureFractionDiffPp()).isCloseTo(15.0, within(1e-9));
    assertThat(Metric.ape(1, 0)).isNaN();
    assertThat(Metric.ape(Double.NaN, 3)).isNaN();
  }

  @Test
  void summarySeparatesSaturatedRuns() {
    ValidationReport.Aggregate e2e = REPORT.aggregate(Metric.E2E_MEAN, false);
    assertThat(e2e.count()).isEqualTo(3);
    assertThat(e2e.median()).isCloseTo(10.0, within(1e-9));
    assertThat(e2e.mean()).isCloseTo(14.0, within(1e-9));
    assertThat(e2e.max()).isCloseTo(30.0, within(1e-9));
    assertThat(REPORT.aggregate(Metric.DECODE_MS_PER_TOKEN, false).median()).isCloseTo(4.0, within(1e-9));
    assertThat(REPORT.aggregate(Metric.E2E_MEAN, true).median()).isCloseTo(15.0, within(1e-9));
    assertThat(REPORT.failureDiff(true).max()).isCloseTo(15.0, within(1e-9));
    assertThat(REPORT.above(Metric.E2E_MEAN, 10.0, false)).containsExactly("a", "b");
  }

  @Test
  void jsonHasTheAgreedKeysAndValues() throws Exception {
    JsonNode root = new ObjectMapper().readTree(REPORT.toJson());
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
    assertThat(REPORT.toJson()).isEqualTo(REPORT.toJson());
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
  void theTableSeparatesSaturatedRuns() {
    String table = REPORT.table();
    assertThat(table).contains("non-saturated experiments").contains("saturated experiments");
  }
}
