package io.blis.engine.validate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.blis.api.Coefficients;
import io.blis.workload.inferenceperf.InferencePerfProfile;
import io.blis.workload.inferenceperf.LoadStage;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Parameter recovery with an analytic stand-in for the simulator: observations are produced by
 * the same model with known coefficients, and the calibration must find them again.
 */
class CalibratorTest {

  /** decode = a + b x (requests in decode), ttft = c + 2 x decode, e2e = ttft + (out - 1) x decode. */
  static final RunSimulator ANALYTIC = (e, c, limit) -> {
    double[] p = c.vector("p");
    double rate = e.profile().stages().get(0).rateRps();
    int out = e.outputLen();
    // Little's law fixed point: batch = rate x decode x out / 1000
    double decode = p[0] / (1 - p[1] * rate * out / 1000.0);
    double ttft = p[2] + 2 * decode;
    double e2e = ttft + (out - 1) * decode;
    RunStats s = new RunStats(-1, 100, 0, e2e, e2e, e2e * 1.1, e2e * 1.2, ttft, ttft, ttft * 1.2, ttft * 1.5,
        decode, rate);
    return new RunSummary(s, List.of());
  };

  static final double[] TRUTH = {6.0, 0.12, 9.0};

  static ParameterSpace space() {
    return new ParameterSpace(List.of("a", "b", "c"), new double[] {1, 0.01, 0}, new double[] {20, 0.5, 50},
        new double[] {10, 0.3, 25}, x -> Coefficients.of("test", Map.of("p", x)));
  }

  static List<Experiment> experiments() {
    Experiment base = ExperimentsFile.read(TraceFixtures.resource("experiments-small.json")).get(0);
    List<Experiment> out = new ArrayList<>();
    double[] rates = {2, 5, 10, 15};
    for (int i = 0; i < rates.length; i++) {
      InferencePerfProfile prof = new InferencePerfProfile(base.profile().data(),
          List.of(new LoadStage(rates[i], 60)), 1.0, 300.0);
      Experiment e = new Experiment("exp-" + i, i % 2 == 0 ? "model-x" : "model-y", base.modelConfig(), base.gpu(),
          1, 1, 4096, 2048, 128, 0.9, 16, -1, 0, i < 2 ? "w1" : "w2", prof, false, base.observed(),
          base.trace());
      RunSummary truth = ANALYTIC.simulate(e, Coefficients.of("truth", Map.of("p", TRUTH)), 0);
      out.add(new Experiment(e.id(), e.model(), e.modelConfig(), e.gpu(), 1, 1, 4096, 2048, 128, 0.9, 16, -1, 0,
          e.workloadName(), prof, false, truth, e.trace()));
    }
    return out;
  }

  static List<CalibrationStage> stages() {
    return List.of(
        new CalibrationStage("decode", List.of("a", "b"), 0, 0, 1, 0, 300, 200),
        new CalibrationStage("all", List.of("a", "b", "c"), 1, 1, 1, 0, 300, 300));
  }

  @Test
  void recoversKnownCoefficients() {
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    try (Calibrator cal = new Calibrator(ANALYTIC, space(), new Calibrator.Settings(42, 2, 0, 0.3),
        new PrintStream(log, true, StandardCharsets.UTF_8))) {
      Calibrator.Result r = cal.fit(experiments(), stages());
      for (int i = 0; i < TRUTH.length; i++) {
        assertThat(r.values()[i]).as("parameter %d", i).isCloseTo(TRUTH[i], within(0.02 * TRUTH[i]));
      }
      assertThat(r.loss()).isLessThan(0.5);
      assertThat(r.comparisons()).hasSize(4);
      assertThat(r.evaluations()).isGreaterThan(10).isLessThanOrEqualTo(1102);
    }
    String progress = log.toString(StandardCharsets.UTF_8);
    assertThat(progress).contains("calibrate [decode] eval 1:").contains("calibrate [all] done");
  }

  @Test
  void sameSeedGivesTheSameFit() {
    double[] first;
    double[] second;
    PrintStream quiet = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
    List<CalibrationStage> short1 = List.of(new CalibrationStage("s", List.of("a", "b", "c"), 1, 1, 1, 0, 60, 30));
    try (Calibrator cal = new Calibrator(ANALYTIC, space(), new Calibrator.Settings(7, 2, 0, 0.3), quiet)) {
      first = cal.fit(experiments(), short1).values();
    }
    try (Calibrator cal = new Calibrator(ANALYTIC, space(), new Calibrator.Settings(7, 1, 0, 0.3), quiet)) {
      second = cal.fit(experiments(), short1).values();
    }
    assertThat(second).containsExactly(first);
  }

  @Test
  void valuesNeverLeaveTheBounds() {
    // truth outside the bounds of 'a': the fit must stop at the bound, not go past it
    ParameterSpace tight = new ParameterSpace(List.of("a", "b", "c"), new double[] {7, 0.01, 0},
        new double[] {20, 0.5, 50}, new double[] {10, 0.3, 25}, x -> Coefficients.of("t", Map.of("p", x)));
    PrintStream quiet = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
    try (Calibrator cal = new Calibrator(ANALYTIC, tight, new Calibrator.Settings(3, 2, 0, 0.3), quiet)) {
      double[] v = cal.fit(experiments(), stages()).values();
      assertThat(v[0]).isGreaterThanOrEqualTo(7.0);
      assertThat(v[1]).isBetween(0.01, 0.5);
      assertThat(v[2]).isBetween(0.0, 50.0);
    }
  }

  @Test
  void unexercisedParametersAreNotSearchedAndTakeTheirTie() {
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    List<CalibrationStage> quick = List.of(new CalibrationStage("s", List.of("a", "b", "c"), 1, 1, 1, 0, 120, 60));
    try (Calibrator cal = new Calibrator(ANALYTIC, space(), new Calibrator.Settings(11, 2, 0, 0.3),
        new PrintStream(log, true, StandardCharsets.UTF_8))) {
      // pretend no training run exercises 'c' when the set has fewer than 4 runs
      cal.onUnexercised(training -> training.size() < 4 ? List.of(new Calibrator.Tie("c", null, 3.5)) : List.of());
      double[] all = cal.fit(experiments(), quick).values();
      assertThat(all[2]).as("fitted when exercised").isCloseTo(TRUTH[2], within(0.1 * TRUTH[2]));
      double[] three = cal.fit(experiments().subList(0, 3), quick).values();
      assertThat(three[2]).isEqualTo(3.5);
      // a tie to another parameter takes its fitted value, clamped to its own bounds
      cal.onUnexercised(training -> List.of(new Calibrator.Tie("b", "a", 0)));
      double[] tied = cal.fit(experiments(), quick).values();
      assertThat(tied[1]).isEqualTo(0.5); // 'a' is fitted near 6; 'b' is bounded by 0.5
    }
    assertThat(log.toString(StandardCharsets.UTF_8))
        .contains("c is not searched (fixed, or no training run exercises it); it takes 3.5")
        .contains("b is not searched (fixed, or no training run exercises it); it takes the fitted a");
  }

  @Test
  void leaveOneGroupOutHoldsOutEachGroup() {
    PrintStream quiet = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
    List<CalibrationStage> quick = List.of(new CalibrationStage("s", List.of("a", "b", "c"), 1, 1, 1, 0, 200, 200));
    try (Calibrator cal = new Calibrator(ANALYTIC, space(), new Calibrator.Settings(5, 2, 0, 0.3), quiet)) {
      List<Calibrator.Fold> folds = cal.crossValidate(experiments(), Experiment::model, quick);
      assertThat(folds).extracting(Calibrator.Fold::heldOut).containsExactly("model-x", "model-y");
      assertThat(folds.get(0).comparisons()).extracting(ExperimentComparison::id).containsExactly("exp-0", "exp-2");
      for (Calibrator.Fold f : folds) {
        for (ExperimentComparison c : f.comparisons()) {
          // the stand-in model is exact, so held-out runs are predicted well
          assertThat(c.ape(Metric.E2E_MEAN)).isLessThan(2.0);
        }
      }
    }
  }

  @Test
  void invalidSpacesAndSettingsAreRejected() {
    assertThatThrownBy(() -> new ParameterSpace(List.of("a"), new double[] {1}, new double[] {0}, new double[] {0.5},
        x -> Coefficients.empty())).hasMessageContaining("parameter a: bounds");
    assertThatThrownBy(() -> new ParameterSpace(List.of("a"), new double[] {0}, new double[] {1}, new double[] {2},
        x -> Coefficients.empty())).hasMessageContaining("initial value 2.0 outside");
    assertThatThrownBy(() -> new Calibrator.Settings(1, 0, 0, 0.3)).hasMessageContaining("threads");
    assertThatThrownBy(() -> space().indexOf("zz")).hasMessageContaining("no calibration parameter 'zz'");
  }

  @Test
  void writesAYamlCoefficientFile(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("sub/coeffs.yaml");
    Coefficients c = Coefficients.of("fit", Map.of("alpha", new double[] {1.5, 2.25e-3}));
    CoefficientWriter.yaml("trained-physics").write(c, file, List.of("fitted by a test", "loss 1.0"));
    JsonNode n = new ObjectMapper(new YAMLFactory()).readTree(file.toFile());
    assertThat(n.get("version").asInt()).isEqualTo(1);
    assertThat(n.get("latency_model").asText()).isEqualTo("trained-physics");
    assertThat(n.get("alpha").get(0).asDouble()).isEqualTo(1.5);
    assertThat(n.get("alpha").get(1).asDouble()).isEqualTo(2.25e-3);
  }
}
