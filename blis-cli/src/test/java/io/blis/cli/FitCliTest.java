package io.blis.cli;

import static io.blis.cli.BlisCliTest.blis;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code blis run --otel-out}, then {@code blis fit}, then {@code blis run --coefficients}. */
class FitCliTest {

  private static final String[] WORKLOAD = {"--num-requests", "800", "--rate", "8",
      "--prompt-tokens", "1500", "--prompt-tokens-stdev", "1000", "--output-tokens", "100",
      "--output-tokens-stdev", "60"};

  private static String[] with(String first, String[] middle, String... last) {
    String[] out = new String[1 + middle.length + last.length];
    out[0] = first;
    System.arraycopy(middle, 0, out, 1, middle.length);
    System.arraycopy(last, 0, out, 1 + middle.length, last.length);
    return out;
  }

  @Test
  void fitLearnsFromATracedRunAndTheResultIsUsable(@TempDir Path dir) throws Exception {
    Path trace = dir.resolve("t.jsonl.gz");
    assertThat(blis(with("run", WORKLOAD, "--otel-out", trace.toString(), "--otel-request-snapshots"))
        .code()).isZero();
    Path coeffs = dir.resolve("fit/coeffs.yaml");
    Path report = dir.resolve("fit/report.json");
    BlisCliTest.Outcome fit = blis("fit", "--traces", trace.toString(), "--out", coeffs.toString(),
        "--report", report.toString());
    assertThat(fit.code()).as(fit.err()).isZero();
    assertThat(fit.out()).contains("test MAPE 0.0").contains("prefill_compute").contains("fitted")
        .contains("with request snapshots, 0 rebuilt from journeys");
    assertThat(Files.readString(report)).contains("\"test_mape_pct\"").contains("decode_only")
        .contains("\"test_abs_error_pct\"");
    // every coefficient written is either fitted or named, in the file, the report and the
    // printout, as kept at its start with the reason the trace does not determine it
    String yaml = Files.readString(coeffs);
    var json = BlisCliTest.JSON.readTree(Files.readString(report)).path("coefficients");
    assertThat(json.size()).isEqualTo(io.blis.latency.physics.TrainedPhysicsCoefficients.terms().size());
    int kept = 0;
    for (var c : json) {
      String name = c.path("name").asText();
      if (c.path("fitted").asBoolean()) {
        assertThat(c.has("not_identified")).as(name).isFalse();
        assertThat(yaml).as(name).doesNotContain("#   " + name + ":");
      } else {
        kept++;
        String why = c.path("not_identified").asText();
        assertThat(why).as(name).isNotBlank();
        assertThat(yaml).contains("#   " + name + ": " + why);
        assertThat(fit.out()).containsPattern(java.util.regex.Pattern.quote(name) + " +[-0-9.]+ kept: "
            + java.util.regex.Pattern.quote(why));
      }
    }
    assertThat(kept).isPositive();
    assertThat(yaml).startsWith("# fitted from the trace: ")
        .contains("# kept at their starting values (not determined by this trace):")
        .contains("#   per_layer_us: a constant per step within one deployment: not separable from per_step_us");
    // the same trace fitted for the wrong deployment (70B on 4 GPUs) is rejected, not accepted
    BlisCliTest.Outcome wrong = blis("fit", "--traces", trace.toString(), "--model",
        "meta-llama/Llama-2-70b-hf", "--tp", "4", "--out", dir.resolve("wrong.yaml").toString());
    assertThat(wrong.code()).as(wrong.out()).isEqualTo(2);
    assertThat(wrong.err()).contains("step fit rejected").contains("outside its physical bounds");
    assertThat(dir.resolve("wrong.yaml")).doesNotExist();
    // fitted on a noise-free trace of the default coefficients: the same predictions within 1%
    assertPredictsAsTheDefaults(coeffs);
  }

  /** Coefficients fitted from a noise-free trace of the defaults predict the workload within 1%. */
  private static void assertPredictsAsTheDefaults(Path coeffs) throws Exception {
    BlisCliTest.Outcome base = blis(with("run", WORKLOAD));
    BlisCliTest.Outcome again = blis(with("run", WORKLOAD, "--coefficients", coeffs.toString()));
    assertThat(again.code()).as(again.err()).isZero();
    double e2eBase = BlisCliTest.JSON.readTree(base.out()).path("overall").path("e2e_ms").path("mean").asDouble();
    double e2eFit = BlisCliTest.JSON.readTree(again.out()).path("overall").path("e2e_ms").path("mean").asDouble();
    assertThat(e2eFit / e2eBase).isBetween(0.99, 1.01);
  }

  @Test
  void fitLearnsFromJourneysAndStepSummariesWithoutSnapshots(@TempDir Path dir) throws Exception {
    // vLLM's --enable-journey-tracing with plain step tracing: no step.REQUEST_SNAPSHOT
    Path trace = dir.resolve("journeys.jsonl.gz");
    assertThat(blis(with("run", WORKLOAD, "--otel-out", trace.toString(), "--otel-step-sample-rate",
        "0.5")).code()).isZero();
    Path coeffs = dir.resolve("coeffs.yaml");
    Path report = dir.resolve("report.json");
    BlisCliTest.Outcome fit = blis("fit", "--traces", trace.toString(), "--out", coeffs.toString(),
        "--report", report.toString());
    assertThat(fit.code()).as(fit.err()).isZero();
    assertThat(fit.out()).contains("(0 with request snapshots, ").contains("rebuilt from journeys")
        .contains("test MAPE 0.0");
    var json = BlisCliTest.JSON.readTree(Files.readString(report));
    assertThat(json.path("steps_from_snapshots").asInt()).isZero();
    assertThat(json.path("steps_from_journeys").asInt()).isEqualTo(json.path("steps_with_batch").asInt())
        .isGreaterThan(1000);
    assertThat(json.path("steps_left_out").isObject()).isTrue();
    // the coefficients fitted from a noise-free trace of the defaults predict as the defaults do
    assertPredictsAsTheDefaults(coeffs);
  }

  @Test
  void halfTheJourneysFitWhatCanBeRebuiltAndWarnWithTheCounts(@TempDir Path dir) throws Exception {
    Path trace = dir.resolve("half.jsonl");
    assertThat(blis(with("run", WORKLOAD, "--otel-out", trace.toString(), "--otel-journey-sample-rate",
        "0.5")).code()).isZero();
    Path report = dir.resolve("report.json");
    BlisCliTest.Outcome fit = blis("fit", "--traces", trace.toString(), "--out",
        dir.resolve("c.yaml").toString(), "--report", report.toString());
    assertThat(fit.code()).as(fit.err()).isZero();
    var json = BlisCliTest.JSON.readTree(Files.readString(report));
    long untraced = json.path("steps_left_out").path("untraced_requests").asLong();
    assertThat(untraced).isPositive();
    assertThat(json.path("steps_without_batch").asLong()).isEqualTo(untraced);
    assertThat(fit.err()).contains("warning: " + untraced + " of "
        + (untraced + json.path("steps_with_batch").asLong()) + " traced steps left out")
        .contains("untraced_requests");
  }

  @Test
  void tracesWithoutTheirBatchOrMissingAreClearErrors(@TempDir Path dir) {
    Path trace = dir.resolve("summary-only.jsonl");
    assertThat(blis(with("run", WORKLOAD, "--otel-out", trace.toString(), "--otel-journey-sample-rate",
        "0")).code()).isZero();
    BlisCliTest.Outcome o = blis("fit", "--traces", trace.toString(), "--out", dir.resolve("c.yaml").toString());
    assertThat(o.code()).isEqualTo(2);
    assertThat(o.err()).contains("0 of ").contains("0 rebuilt from 0 request journeys")
        .contains("at least 20 are needed").contains("Turn on journey tracing")
        .contains("REQUEST_SNAPSHOT").doesNotContain("Exception");
    assertThat(dir.resolve("c.yaml")).doesNotExist();
    BlisCliTest.Outcome missing = blis("fit", "--traces", dir.resolve("nope").toString(), "--out", "c.yaml");
    assertThat(missing.code()).isEqualTo(2);
    assertThat(missing.err()).contains("--traces: no such file or directory");
  }
}
