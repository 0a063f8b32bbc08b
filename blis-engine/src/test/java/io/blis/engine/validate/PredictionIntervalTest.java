package io.blis.engine.validate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;
import static org.assertj.core.api.Assertions.withinPercentage;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.blis.api.Coefficients;
import io.blis.latency.physics.TrainedPhysicsCoefficients;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PredictionIntervalTest {

  @Test
  void theIntervalWidensWhenTheFoldsDisagree() {
    PredictionInterval agree = PredictionInterval.of(1000, new double[] {995, 1002, 1004, 998}, 0.03, 0.9);
    PredictionInterval disagree = PredictionInterval.of(1000, new double[] {850, 1150, 1020, 930}, 0.03, 0.9);
    assertThat(disagree.memberLogSd()).isGreaterThan(10 * agree.memberLogSd());
    assertThat(disagree.high() - disagree.low()).isGreaterThan(2 * (agree.high() - agree.low()));
    // symmetric in log space around the point
    assertThat(Math.log(agree.high() / 1000)).isCloseTo(-Math.log(agree.low() / 1000), within(1e-12));
    assertThat(agree.contains(1000)).isTrue();
    assertThat(agree.contains(agree.high() * 1.001)).isFalse();
  }

  @Test
  void widthFollowsTheNormalQuantileOfTheLevel() {
    assertThat(PredictionInterval.z(0.9)).isCloseTo(1.6449, within(1e-4));
    assertThat(PredictionInterval.z(0.5)).isCloseTo(0.6745, within(1e-4));
    // members equal to the point: only the residual is left
    PredictionInterval pi = PredictionInterval.of(200, new double[] {200, 200}, 0.1, 0.9);
    assertThat(pi.memberLogSd()).isZero();
    assertThat(pi.high()).isCloseTo(200 * Math.exp(PredictionInterval.z(0.9) * 0.1), within(1e-9));
    // member spread and residual add in quadrature: ln 1.1 spread and 0.1 residual
    PredictionInterval both = PredictionInterval.of(100, new double[] {110, 100 / 1.1}, 0.1, 0.9);
    double s = Math.sqrt(Math.pow(Math.log(1.1), 2) + 0.01);
    assertThat(both.low()).isCloseTo(100 * Math.exp(-PredictionInterval.z(0.9) * s), within(1e-9));
    assertThatThrownBy(() -> PredictionInterval.of(1, new double[] {1}, 0, 1.0))
        .hasMessageContaining("interval level must be in (0, 1)");
  }

  @Test
  void heldOutResidualAndCoverageAreEstimatedWithoutTheJudgedGroup() {
    // three groups; group c's run is far off: judged with the residual of a and b only, it falls outside
    List<EnsembleRuns.HeldOutRun> runs = List.of(
        new EnsembleRuns.HeldOutRun("a1", "a", false, 1000, 1030, 0.01),
        new EnsembleRuns.HeldOutRun("a2", "a", false, 1000, 980, 0.01),
        new EnsembleRuns.HeldOutRun("b1", "b", false, 500, 510, 0.02),
        new EnsembleRuns.HeldOutRun("c1", "c", false, 800, 1000, 0.01),
        new EnsembleRuns.HeldOutRun("sat", "c", true, 800, 4000, 0.0));
    double residual = EnsembleRuns.residualLogSd(runs);
    // per run, the squared error beyond its own spread; b1's 2% error is within its 0.02 spread
    double expected = Math.sqrt((Math.pow(Math.log(1000 / 1030.0), 2) - 0.0001
        + Math.pow(Math.log(1000 / 980.0), 2) - 0.0001
        + Math.max(0, Math.pow(Math.log(500 / 510.0), 2) - 0.0004)
        + Math.pow(Math.log(0.8), 2) - 0.0001) / 4);
    assertThat(residual).isCloseTo(expected, within(1e-12));
    EnsembleRuns.Coverage c = EnsembleRuns.heldOutCoverage(runs, 0.9);
    assertThat(c.runs()).isEqualTo(4); // the saturated run is not judged
    assertThat(c.inside()).isEqualTo(3);
    assertThat(c.fraction()).isEqualTo(0.75);
  }

  @Test
  void aRunWhoseMembersDisagreeWidelyDoesNotCancelTheOthersErrors() {
    // b's members spread over x0.5 to x2 (log sd 0.7) around a prediction 25% off: its own interval
    // covers it; the 10% errors of a are not explained by any spread and stay in the residual
    List<EnsembleRuns.HeldOutRun> runs = List.of(
        new EnsembleRuns.HeldOutRun("a1", "a", false, 1000, 1100, 0.0),
        new EnsembleRuns.HeldOutRun("a2", "a", false, 1000, 1000 / 1.1, 0.0),
        new EnsembleRuns.HeldOutRun("b1", "b", false, 100, 125, 0.7));
    double e = Math.log(1.1);
    double residual = EnsembleRuns.residualLogSd(runs);
    // (pooled, mean e^2 - mean s^2 = (2 x 0.0091 + 0.0498 - 0.49) / 3 < 0, it would have been 0)
    assertThat(residual).isCloseTo(Math.sqrt(2 * e * e / 3), within(1e-12));
    assertThat(Math.abs(runs.get(2).logError()))
        .as("b1 inside its own interval")
        .isLessThan(PredictionInterval.logHalfWidth(0.7, residual, 0.9));
    assertThat(Math.abs(runs.get(0).logError()))
        .as("a1 outside an interval with no residual, inside one with it")
        .isGreaterThan(PredictionInterval.logHalfWidth(0.0, 0.0, 0.9))
        .isLessThan(PredictionInterval.logHalfWidth(0.0, residual, 0.9));
  }

  @Test
  void ensembleFilesRoundTripAndBadOnesNameTheKey(@TempDir Path dir) throws Exception {
    Ensemble e = new Ensemble("trained-physics", List.of(
        new Ensemble.Member("org/model-a", Coefficients.of("a", Map.of("beta", new double[] {1.5, 2.25}, "alpha",
            new double[] {10}))),
        new Ensemble.Member("org/model-b", Coefficients.of("b", Map.of("beta", new double[] {1.25, 2.5}, "alpha",
            new double[] {12})))),
        Map.of(Metric.E2E_MEAN, 0.031, Metric.TTFT_MEAN, 0.2), "test");
    Path file = dir.resolve("ens.yaml");
    Files.writeString(file, e.toYaml(List.of("made by a test")));
    Ensemble back = Ensemble.load(file);
    assertThat(back.members()).extracting(Ensemble.Member::heldOut).containsExactly("org/model-a", "org/model-b");
    assertThat(back.members().get(1).coefficients().vector("beta")).containsExactly(1.25, 2.5);
    assertThat(back.residual(Metric.TTFT_MEAN)).isEqualTo(0.2);

    String text = Files.readString(file);
    assertThatThrownBy(() -> read(text.replace("residual_log_sd:", "residual_sd:")))
        .hasMessageContaining("x.yaml: unknown key 'residual_sd'");
    assertThatThrownBy(() -> read(text.replace("ttft_mean: 0.2", "ttft_mean: wide")))
        .hasMessageContaining("x.yaml: key 'residual_log_sd.ttft_mean' must be a number");
    assertThatThrownBy(() -> read(text.replace("  - held_out: \"org/model-b\"\n", "  - \n")))
        .hasMessageContaining("x.yaml: members[1]");
    assertThatThrownBy(() -> read(text.replace("[1.25, 2.5]", "[1.25, x]")))
        .hasMessageContaining("members[1]: key 'beta' entry 1 must be a number");
    assertThatThrownBy(() -> Ensemble.load(dir.resolve("missing.yaml"))).hasMessageContaining("no such ensemble file");
  }

  @Test
  void theBundledEnsembleHoldsOneMemberPerHeldOutModel() {
    Ensemble e = Ensemble.bundled();
    assertThat(e.latencyModel()).isEqualTo("trained-physics");
    assertThat(e.members().size()).isGreaterThanOrEqualTo(3);
    assertThat(e.members().stream().map(Ensemble.Member::heldOut).distinct().count()).isEqualTo(e.members().size());
    for (Ensemble.Member m : e.members()) {
      assertThat(m.coefficients().vector("beta")).hasSize(TrainedPhysicsCoefficients.BETA_LENGTH);
    }
  }

  @Test
  void validationJsonHasStableIntervalFields() throws Exception {
    ThreeRuns t = ThreeRuns.make();
    ValidationReport r = t.report(new Ensemble("trained-physics", t.members(),
        Map.of(Metric.E2E_MEAN, 0.05, Metric.TTFT_MEAN, 0.1), "t"));
    JsonNode root = new ObjectMapper().readTree(r.toJson());
    JsonNode iv = root.path("experiments").get(0).path("interval");
    assertThat(iv.path("level").asDouble()).isEqualTo(0.9);
    for (String metric : List.of("e2e_mean", "ttft_mean")) {
      assertThat(iv.path(metric).fieldNames()).toIterable()
          .containsExactly("low", "high", "member_log_sd", "residual_log_sd", "extrapolation_log_sd",
              "extrapolation", "extrapolation_kinds", "observed_inside");
    }
    assertThat(iv.path("e2e_mean").path("observed_inside").asBoolean()).isTrue();
    JsonNode cov = root.path("summary").path("interval_coverage");
    assertThat(cov.fieldNames()).toIterable()
        .containsExactly("level", "ensemble", "non_saturated", "saturated", "held_out");
    assertThat(cov.path("non_saturated").path("e2e_mean").path("runs").asInt()).isEqualTo(3);
    assertThat(cov.path("non_saturated").path("e2e_mean").path("inside").asInt()).isEqualTo(3);
    // runs of m/a and m/b were held out of one member each; m/c of none
    assertThat(cov.path("held_out").path("e2e_mean").path("runs").asInt()).isEqualTo(2);
    assertThat(r.table()).contains("90% interval of e2e_mean covers 3 of 3 runs");
  }

  @Test
  void theRunsTheScalesCameFromRoundTripAndBadListsNameTheEntry(@TempDir Path dir) throws Exception {
    Ensemble plain = new Ensemble("trained-physics", List.of(
        new Ensemble.Member("org/model-a", Coefficients.of("a", Map.of("beta", new double[] {1.5}))),
        new Ensemble.Member("org/model-b", Coefficients.of("b", Map.of("beta", new double[] {1.25})))),
        Map.of(Metric.E2E_MEAN, 0.031, Metric.TTFT_MEAN, 0.2), "test");
    Ensemble e = plain.withScales(null, plain.residualLogSd(), Map.of(), List.of("run-1", "c-2 \"quoted\"", "run-0"));
    Path file = dir.resolve("ens.yaml");
    Files.writeString(file, e.toYaml(List.of("made by a test")));
    assertThat(Ensemble.load(file).scaleRuns()).containsExactly("run-1", "c-2 \"quoted\"", "run-0");
    // a file that does not say has none, and writes no key
    assertThat(read(plain.toYaml(List.of())).scaleRuns()).isEmpty();
    assertThat(plain.toYaml(List.of())).doesNotContain("scales_estimated_on");

    String text = Files.readString(file);
    assertThat(text).contains("scales_estimated_on:\n  - \"run-1\"\n");
    assertThatThrownBy(() -> read(text.replace("  - \"run-0\"\n", "  - \"run-1\"\n")))
        .hasMessageContaining("x.yaml: key 'scales_estimated_on'[2]: run 'run-1' is listed twice");
    assertThatThrownBy(() -> read(text.replace("  - \"run-0\"\n", "  - 7\n")))
        .hasMessageContaining("x.yaml: key 'scales_estimated_on'[2] must be a run id, got 7");
    assertThatThrownBy(() -> read(text.replace("  - \"run-0\"\n", "  - \" \"\n")))
        .hasMessageContaining("x.yaml: key 'scales_estimated_on'[2] must be a run id");
    String scalar = text.substring(0, text.indexOf("scales_estimated_on:")) + "scales_estimated_on: run-1\n"
        + text.substring(text.indexOf("members:"));
    assertThatThrownBy(() -> read(scalar)).hasMessageContaining("x.yaml: key 'scales_estimated_on' must be a list of run ids");
    // still strict about keys
    assertThatThrownBy(() -> read(text.replace("scales_estimated_on:", "scales_estimated_from:")))
        .hasMessageContaining("x.yaml: unknown key 'scales_estimated_from'");
  }

  /** Three runs of models m/a, m/b, m/c; two members, fitted without m/a and without m/b. */
  record ThreeRuns(List<ExperimentComparison> point, List<Experiment> exps, List<Ensemble.Member> members,
      EnsembleRuns runs) {

    static ThreeRuns make() {
      List<ExperimentComparison> point = new ArrayList<>();
      List<List<ExperimentComparison>> memberRuns = List.of(new ArrayList<>(), new ArrayList<>());
      List<Experiment> exps = new ArrayList<>();
      Experiment base = ExperimentsFile.read(TraceFixtures.resource("experiments-small.json")).get(0);
      String[] models = {"m/a", "m/b", "m/c"};
      for (int i = 0; i < models.length; i++) {
        Experiment e = new Experiment("run-" + i, models[i], base.modelConfig(), base.gpu(), 1, 1, 4096, 2048, 128,
            0.9, 16, -1, 0, "w", base.profile(), false, summary(1000, 50), base.trace());
        exps.add(e);
        point.add(ExperimentComparison.of(e, summary(1000 + 20 * i, 48)));
        memberRuns.get(0).add(ExperimentComparison.of(e, summary(1010 + 20 * i, 49)));
        memberRuns.get(1).add(ExperimentComparison.of(e, summary(990 + 20 * i, 51)));
      }
      List<Ensemble.Member> members = List.of(
          new Ensemble.Member("m/a", Coefficients.of("a", Map.of("beta", new double[] {1}))),
          new Ensemble.Member("m/b", Coefficients.of("b", Map.of("beta", new double[] {1}))));
      return new ThreeRuns(point, exps, members, new EnsembleRuns(members, exps, memberRuns));
    }

    ValidationReport report(Ensemble ens) {
      return new ValidationReport(point, "replay", "test", ValidationReport.Intervals.of(point, exps, ens, runs, 0.9));
    }
  }

  @Test
  void coverageOnRunsTheScalesCameFromSaysItIsInSample() throws Exception {
    ThreeRuns t = ThreeRuns.make();
    Ensemble none = new Ensemble("trained-physics", t.members(), Map.of(Metric.E2E_MEAN, 0.05, Metric.TTFT_MEAN, 0.1), "t");
    Map<String, String> lines = new java.util.LinkedHashMap<>();
    Map<String, JsonNode> json = new java.util.LinkedHashMap<>();
    Map<String, List<String>> cases = Map.of("not recorded", List.of(), "all", List.of("run-2", "x", "run-0", "run-1"),
        "two", List.of("run-0", "elsewhere", "run-2"), "other runs", List.of("elsewhere"));
    for (var c : cases.entrySet()) {
      ValidationReport r = t.report(none.withScales(null, none.residualLogSd(), Map.of(), c.getValue()));
      lines.put(c.getKey(), r.table().lines().filter(l -> l.contains("interval of e2e_mean covers")).findFirst().orElseThrow());
      json.put(c.getKey(), new ObjectMapper().readTree(r.toJson()).path("summary").path("interval_coverage"));
    }
    assertThat(lines.get("not recorded")).isEqualTo("  90% interval of e2e_mean covers 3 of 3 runs");
    assertThat(lines.get("other runs")).isEqualTo("  90% interval of e2e_mean covers 3 of 3 runs");
    assertThat(lines.get("all"))
        .isEqualTo("  90% interval of e2e_mean covers 3 of 3 runs (in sample: scales estimated on these runs)");
    assertThat(lines.get("two"))
        .isEqualTo("  90% interval of e2e_mean covers 3 of 3 runs (in sample: scales estimated on 2 of these runs)");
    assertThat(json.get("not recorded").path("non_saturated").path("e2e_mean").path("scales_estimated_on").isNull()).isTrue();
    assertThat(json.get("other runs").path("non_saturated").path("ttft_mean").path("scales_estimated_on").asInt()).isZero();
    assertThat(json.get("all").path("non_saturated").path("ttft_mean").path("scales_estimated_on").asInt()).isEqualTo(3);
    assertThat(json.get("two").path("non_saturated").path("e2e_mean").path("scales_estimated_on").asInt()).isEqualTo(2);
    assertThat(json.get("two").path("saturated").path("e2e_mean").path("scales_estimated_on").asInt()).isZero();
    assertThat(json.get("two").path("non_saturated").path("e2e_mean").fieldNames()).toIterable()
        .containsExactly("runs", "inside", "fraction", "scales_estimated_on");
  }

  @Test
  void aCrossValidationsEnsembleRecordsTheHeldOutRunsItsResidualCameFrom() {
    ThreeRuns t = ThreeRuns.make();
    // run-0 (m/a) and run-1 (m/b) were each held out of one member; run-2 (m/c) of none
    Ensemble e = t.runs().toEnsemble("trained-physics", "cv");
    assertThat(e.scaleRuns()).containsExactly("run-0", "run-1");
    assertThat(t.report(e).table()).contains("covers 3 of 3 runs (in sample: scales estimated on 2 of these runs)");
  }

  private static RunSummary summary(double e2e, double ttft) {
    RunStats s = new RunStats(-1, 100, 0, e2e, e2e, e2e, e2e, ttft, ttft, ttft, ttft, (e2e - ttft) / 99, 1);
    return new RunSummary(s, List.of());
  }

  private static Ensemble read(String text) {
    return Ensemble.read(new ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_8)), "x.yaml");
  }
}
