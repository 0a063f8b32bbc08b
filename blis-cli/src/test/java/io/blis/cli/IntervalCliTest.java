package io.blis.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.blis.engine.validate.Ensemble;
import io.blis.engine.validate.Metric;
import io.blis.latency.physics.TrainedPhysicsCoefficients;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Prediction intervals from the command line: {@code validate} and {@code run}. */
class IntervalCliTest {

  private static ValidateCommandTest.Run run(String... args) {
    return ValidateCommandTest.run(args);
  }

  private static Path small() throws Exception {
    return Path.of(IntervalCliTest.class.getResource("/validate/experiments-small.json").toURI());
  }

  /** Two members: the defaults with decode_memory and weight_load moved up and down by {@code f}. */
  private static Path ensemble(Path dir, String name, double f) throws Exception {
    List<String> names = TrainedPhysicsCoefficients.names();
    double[] up = TrainedPhysicsCoefficients.defaults();
    double[] down = up.clone();
    for (String k : List.of("decode_memory", "weight_load")) {
      int i = names.indexOf(k);
      up[i] *= 1 + f;
      down[i] = Math.max(1.0, down[i] * (1 - f));
    }
    Ensemble e = new Ensemble("trained-physics", List.of(
        new Ensemble.Member("org/model-a", TrainedPhysicsCoefficients.toCoefficients(up, "up")),
        new Ensemble.Member("org/model-b", TrainedPhysicsCoefficients.toCoefficients(down, "down"))),
        Map.of(Metric.E2E_MEAN, 0.02, Metric.TTFT_MEAN, 0.05), name);
    Path file = dir.resolve(name);
    Files.writeString(file, e.toYaml(List.of("test ensemble")));
    return file;
  }

  @Test
  void validateIntervalsWidenWhenTheMembersDisagree(@TempDir Path dir) throws Exception {
    JsonNode[] intervals = new JsonNode[2];
    double[] spread = {0.02, 0.2};
    for (int k = 0; k < 2; k++) {
      Path json = dir.resolve("v" + k + ".json");
      ValidateCommandTest.Run r = run("validate", "--experiments", small().toString(), "--ensemble",
          ensemble(dir, "e" + k + ".yaml", spread[k]).toString(), "--out", json.toString(), "--threads", "1");
      assertThat(r.code()).as(r.err()).isZero();
      assertThat(r.out()).contains("E2E mean 90% interval ms").contains("90% interval of e2e_mean covers");
      JsonNode root = new ObjectMapper().readTree(json.toFile());
      intervals[k] = root.path("experiments").get(0).path("interval").path("e2e_mean");
      assertThat(root.path("summary").path("interval_coverage").path("non_saturated").path("e2e_mean")
          .path("runs").asInt()).isEqualTo(1);
      double point = root.path("experiments").get(0).path("predicted").path("e2e_mean").asDouble();
      assertThat(intervals[k].path("low").asDouble()).isLessThan(point);
      assertThat(intervals[k].path("high").asDouble()).isGreaterThan(point);
    }
    double narrow = intervals[0].path("high").asDouble() - intervals[0].path("low").asDouble();
    double wide = intervals[1].path("high").asDouble() - intervals[1].path("low").asDouble();
    assertThat(intervals[1].path("member_log_sd").asDouble()).isGreaterThan(3 * intervals[0].path("member_log_sd").asDouble());
    assertThat(wide).isGreaterThan(1.5 * narrow);
  }

  @Test
  void validateSaysWhenTheScalesWereEstimatedOnTheRunsItCovers(@TempDir Path dir) throws Exception {
    String id = io.blis.engine.validate.ExperimentsFile.read(small()).get(0).id();
    Ensemble base = Ensemble.load(ensemble(dir, "base.yaml", 0.02));
    Path listed = dir.resolve("listed.yaml");
    Files.writeString(listed, base.withScales(null, base.residualLogSd(), Map.of(), List.of("elsewhere", id))
        .toYaml(List.of("scales estimated on the small experiment")));
    Path json = dir.resolve("v.json");
    ValidateCommandTest.Run r = run("validate", "--experiments", small().toString(), "--ensemble", listed.toString(),
        "--out", json.toString(), "--threads", "1");
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.out()).containsPattern(
        "90% interval of e2e_mean covers [01] of 1 runs \\(in sample: scales estimated on these runs\\)\n");
    JsonNode cov = new ObjectMapper().readTree(json.toFile()).path("summary").path("interval_coverage");
    assertThat(cov.path("non_saturated").path("e2e_mean").path("scales_estimated_on").asInt()).isEqualTo(1);
    assertThat(cov.path("non_saturated").path("ttft_mean").path("scales_estimated_on").asInt()).isEqualTo(1);
  }

  @Test
  void runAppendsAPredictionIntervalAndLeavesTheRestAsItWas() throws Exception {
    String[] base = {"run", "--num-requests", "60", "--rate", "4", "--output-tokens", "64", "--prompt-tokens", "256"};
    ValidateCommandTest.Run plain = run(base);
    assertThat(plain.code()).as(plain.err()).isZero();
    String[] with = java.util.stream.Stream.concat(java.util.Arrays.stream(base), java.util.stream.Stream.of("--intervals"))
        .toArray(String[]::new);
    ValidateCommandTest.Run r = run(with);
    assertThat(r.code()).as(r.err()).isZero();
    JsonNode root = new ObjectMapper().readTree(r.out());
    JsonNode pi = root.path("prediction_interval");
    assertThat(pi.path("level").asDouble()).isEqualTo(0.9);
    assertThat(pi.path("members").asInt()).isEqualTo(Ensemble.bundled().members().size());
    for (String key : List.of("e2e_mean_ms", "ttft_mean_ms")) {
      assertThat(pi.path(key).fieldNames()).toIterable()
          .containsExactly("point", "low", "high", "member_log_sd", "residual_log_sd", "extrapolation_log_sd");
      assertThat(pi.path(key).path("extrapolation_log_sd").asDouble()).isZero(); // Llama-2-7B on H100: in family
      assertThat(pi.path(key).path("low").asDouble()).isLessThan(pi.path(key).path("point").asDouble());
      assertThat(pi.path(key).path("high").asDouble()).isGreaterThan(pi.path(key).path("point").asDouble());
    }
    assertThat(pi.path("extrapolation")).isEmpty();
    // the point is the run's own mean E2E
    assertThat(pi.path("e2e_mean_ms").path("point").asDouble())
        .isCloseTo(root.path("overall").path("e2e_ms").path("mean").asDouble(),
            org.assertj.core.api.Assertions.within(0.01));
    // without the appended object the output is the plain run's, byte for byte
    ((com.fasterxml.jackson.databind.node.ObjectNode) root).remove("prediction_interval");
    assertThat(root).isEqualTo(new ObjectMapper().readTree(plain.out()));
    assertThat(r.out()).startsWith(plain.out().substring(0, plain.out().stripTrailing().length() - 1).stripTrailing());
  }

  @Test
  void replayOfARunsTraceGivesTheRunsInterval(@TempDir Path dir) throws Exception {
    Path trace = dir.resolve("t.jsonl");
    ValidateCommandTest.Run r = run("run", "--num-requests", "50", "--rate", "5", "--output-tokens", "48",
        "--prompt-tokens", "200", "--intervals", "--trace-out", trace.toString());
    assertThat(r.code()).as(r.err()).isZero();
    ValidateCommandTest.Run replay = run("replay", "--trace", trace.toString(), "--intervals");
    assertThat(replay.code()).as(replay.err()).isZero();
    JsonNode a = new ObjectMapper().readTree(r.out()).path("prediction_interval");
    JsonNode b = new ObjectMapper().readTree(replay.out()).path("prediction_interval");
    assertThat(b.path("e2e_mean_ms").path("low").isNumber()).isTrue();
    // the replay reproduces the run, for the point and for every member
    assertThat(b.path("e2e_mean_ms")).isEqualTo(a.path("e2e_mean_ms"));
    assertThat(b.path("ttft_mean_ms")).isEqualTo(a.path("ttft_mean_ms"));
  }

  @Test
  void badIntervalOptionsAreOneLineErrors(@TempDir Path dir) throws Exception {
    ValidateCommandTest.Run level = run("run", "--num-requests", "5", "--intervals", "--interval-level", "1.5");
    assertThat(level.code()).isEqualTo(2);
    assertThat(level.err().strip()).contains("--interval-level must be in (0, 1), got 1.5").doesNotContain("Exception");
    ValidateCommandTest.Run missing = run("validate", "--experiments", small().toString(), "--ensemble", dir.resolve("no.yaml").toString());
    assertThat(missing.code()).isEqualTo(2);
    assertThat(missing.err()).contains("no.yaml: no such ensemble file");
    ValidateCommandTest.Run model = run("run", "--num-requests", "5", "--intervals", "--latency-model", "roofline");
    assertThat(model.code()).isEqualTo(2);
    assertThat(model.err()).contains("--intervals: the ensemble holds trained-physics coefficients but the latency model is roofline");
    Path bad = dir.resolve("bad.yaml");
    Files.writeString(bad, "version: 1\nresidual_log_sd: {e2e_mean: 0.1}\nmembers: []\n");
    ValidateCommandTest.Run broken = run("run", "--num-requests", "5", "--ensemble", bad.toString());
    assertThat(broken.code()).isEqualTo(2);
    assertThat(broken.err()).contains("bad.yaml: key 'residual_log_sd.ttft_mean' must be a number");
    ValidateCommandTest.Run cvOnly = run("calibrate", "--experiments", small().toString(), "--cv-only");
    assertThat(cvOnly.code()).isEqualTo(2);
    assertThat(cvOnly.err()).contains("--cv-only needs --cross-validate");
  }

  @Test
  void aDeploymentOutsideTheFitSaysSoAndItsIntervalIsWider() throws Exception {
    String[] h100 = {"run", "--num-requests", "40", "--rate", "4", "--output-tokens", "64", "--prompt-tokens", "256",
        "--intervals"};
    String[] a100 = java.util.stream.Stream.concat(java.util.Arrays.stream(h100), java.util.stream.Stream.of("--gpu", "A100-80GB"))
        .toArray(String[]::new);
    ValidateCommandTest.Run in = run(h100);
    ValidateCommandTest.Run out = run(a100);
    assertThat(out.code()).as(out.err()).isZero();
    JsonNode piIn = new ObjectMapper().readTree(in.out()).path("prediction_interval");
    JsonNode piOut = new ObjectMapper().readTree(out.out()).path("prediction_interval");
    assertThat(piOut.path("extrapolation").get(0).asText()).isEqualTo("gpu A100-80GB not in fit (H100), kernel efficiency measured");
    assertThat(piOut.path("e2e_mean_ms").path("extrapolation_log_sd").asDouble())
        .isEqualTo(Ensemble.bundled().extrapolationLogSd(
            List.of(new io.blis.engine.validate.Extrapolation(io.blis.engine.validate.Extrapolation.Kind.GPU, "g")),
            io.blis.engine.validate.Metric.E2E_MEAN), org.assertj.core.api.Assertions.within(1e-5));
    double relIn = piIn.path("e2e_mean_ms").path("high").asDouble() / piIn.path("e2e_mean_ms").path("point").asDouble();
    double relOut = piOut.path("e2e_mean_ms").path("high").asDouble() / piOut.path("e2e_mean_ms").path("point").asDouble();
    assertThat(relOut).isGreaterThan(relIn);
  }
}
