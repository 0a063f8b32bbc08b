package io.blis.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.blis.api.Coefficients;
import io.blis.latency.coeff.CoefficientFiles;
import io.blis.latency.physics.TrainedPhysicsCoefficients;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code blis calibrate} end to end with a tiny budget on the small experiments file. */
class CalibrateCommandTest {

  private static String small() throws Exception {
    return Path.of(CalibrateCommandTest.class.getResource("/validate/experiments-small.json").toURI()).toString();
  }

  private static int run(StringWriter out, StringWriter err, String... args) {
    return BlisCli.execute(args, new PrintWriter(out), new PrintWriter(err));
  }

  @Test
  void writesALoadableCoefficientFileWithinTheBounds(@TempDir Path dir) throws Exception {
    Path coeffs = dir.resolve("fit.yaml");
    Path report = dir.resolve("fit.json");
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = run(out, err, "calibrate", "--experiments", small(), "--out", coeffs.toString(), "--report",
        report.toString(), "--budget", "0.02", "--subsample", "0", "--joint-subsample", "0", "--threads", "1");
    assertThat(code).as(err.toString()).isZero();
    assertThat(out.toString()).contains("Fitted coefficients written to").contains("test-llama-2-7b-tp1-codegen-first300");
    assertThat(Files.readString(coeffs)).startsWith("# Fitted by: blis calibrate --experiments")
        .contains(" --subsample 0 --joint-subsample 0 ");
    Coefficients c = CoefficientFiles.load(coeffs);
    double[] v = TrainedPhysicsCoefficients.toArray(c);
    double[] lo = TrainedPhysicsCoefficients.lowerBounds();
    double[] hi = TrainedPhysicsCoefficients.upperBounds();
    for (int i = 0; i < v.length; i++) {
      assertThat(v[i]).as(TrainedPhysicsCoefficients.names().get(i)).isBetween(lo[i], hi[i]);
    }
    assertThat(Files.readString(report)).contains("\"ape_pct\"");
    // the fitted file is usable by validate
    StringWriter out2 = new StringWriter();
    assertThat(run(out2, new StringWriter(), "validate", "--experiments", small(), "--coefficients", coeffs.toString()))
        .isZero();
  }

  @Test
  void fixedCoefficientsKeepTheirStartValue(@TempDir Path dir) throws Exception {
    Path coeffs = dir.resolve("fit.yaml");
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    double[] start = TrainedPhysicsCoefficients.defaults();
    List<String> names = TrainedPhysicsCoefficients.names();
    start[names.indexOf("weight_load")] = 1.4321;
    start[names.indexOf("scheduling_us")] = 0;
    Path startFile = dir.resolve("start.yaml");
    Files.writeString(startFile, CoefficientFiles.toYaml("trained-physics", "start",
        TrainedPhysicsCoefficients.toCoefficients(start, "start")));
    int code = run(out, err, "calibrate", "--experiments", small(), "--out", coeffs.toString(), "--start",
        startFile.toString(), "--fix", "weight_load,scheduling_us", "--budget", "0.03", "--subsample", "0",
        "--joint-subsample", "0", "--threads", "1");
    assertThat(code).as(err.toString()).isZero();
    double[] v = TrainedPhysicsCoefficients.toArray(CoefficientFiles.load(coeffs));
    assertThat(v[names.indexOf("weight_load")]).isEqualTo(1.4321);
    assertThat(v[names.indexOf("scheduling_us")]).isZero();
    assertThat(Files.readString(coeffs)).contains(" --fix weight_load,scheduling_us");
    StringWriter bad = new StringWriter();
    assertThat(run(new StringWriter(), bad, "calibrate", "--experiments", small(), "--fix", "warp_speed"))
        .isEqualTo(2);
    assertThat(bad.toString()).contains("--fix: unknown coefficient 'warp_speed'; expected one of [prefill_compute");
  }

  @Test
  void aTiedCoefficientTakesTheValueItFollows(@TempDir Path dir) throws Exception {
    Path coeffs = dir.resolve("fit.yaml");
    StringWriter err = new StringWriter();
    int code = run(new StringWriter(), err, "calibrate", "--experiments", small(), "--out", coeffs.toString(),
        "--tie", "decode_memory=weight_load", "--budget", "0.03", "--subsample", "0", "--joint-subsample", "0",
        "--threads", "1");
    assertThat(code).as(err.toString()).isZero();
    List<String> names = TrainedPhysicsCoefficients.names();
    double[] v = TrainedPhysicsCoefficients.toArray(CoefficientFiles.load(coeffs));
    assertThat(v[names.indexOf("decode_memory")]).isEqualTo(v[names.indexOf("weight_load")]);
    assertThat(Files.readString(coeffs)).contains(" --tie decode_memory=weight_load");
    for (String bad : List.of("decode_memory", "decode_memory=warp", "weight_load=weight_load")) {
      StringWriter e = new StringWriter();
      assertThat(run(new StringWriter(), e, "calibrate", "--experiments", small(), "--tie", bad)).isEqualTo(2);
      assertThat(e.toString()).contains("--tie: expected NAME=OTHER with two different coefficients").contains(bad);
      assertThat(e.toString().strip().lines().count()).isEqualTo(1);
    }
  }

  @Test
  void badOptionsAreOneLineErrors() throws Exception {
    StringWriter err = new StringWriter();
    assertThat(run(new StringWriter(), err, "calibrate", "--experiments", small(), "--cross-validate", "sometimes"))
        .isEqualTo(2);
    assertThat(err.toString()).contains("--cross-validate: expected none, model, workload or both");
    StringWriter err2 = new StringWriter();
    assertThat(run(new StringWriter(), err2, "calibrate", "--experiments", small(), "--budget", "-1")).isEqualTo(2);
    assertThat(err2.toString()).contains("--budget must be a positive number");
    StringWriter err3 = new StringWriter();
    assertThat(run(new StringWriter(), err3, "calibrate", "--experiments", small(), "--joint-subsample", "-5"))
        .isEqualTo(2);
    assertThat(err3.toString()).contains("--joint-subsample must be >= 0, got -5");
  }
}
