package io.blis.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.blis.cli.report.ReportPages;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code blis validate} end to end on the small experiments file (first 300 requests of a run). */
class ValidateCommandTest {

  private static Path small() throws Exception {
    return Path.of(ValidateCommandTest.class.getResource("/validate/experiments-small.json").toURI());
  }

  /** Exit code and output of one command line (shared by the CLI tests of this package). */
  record Run(int code, String out, String err) {}

  static Run run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = BlisCli.execute(args, new PrintWriter(out), new PrintWriter(err));
    return new Run(code, out.toString(), err.toString());
  }

  @Test
  void writesTableJsonAndHtml(@TempDir Path dir) throws Exception {
    Path json = dir.resolve("results.json");
    Run r = run("validate", "--experiments", small().toString(), "--out", json.toString(), "--threads", "1");
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.out()).contains("test-llama-2-7b-tp1-codegen-first300").contains("non-saturated experiments");
    JsonNode root = new ObjectMapper().readTree(json.toFile());
    JsonNode e = root.get("experiments").get(0);
    assertThat(e.get("id").asText()).isEqualTo("test-llama-2-7b-tp1-codegen-first300");
    assertThat(e.get("saturated").asBoolean()).isFalse();
    for (String block : List.of("observed", "predicted")) {
      for (String key : List.of("e2e_mean", "e2e_p50", "e2e_p90", "e2e_p99", "ttft_mean", "ttft_p90", "ttft_p99",
          "decode_ms_per_token", "throughput_rps", "count_success", "count_failed")) {
        assertThat(e.get(block).has(key)).as(block + "." + key).isTrue();
      }
    }
    // every request of the small run succeeds in the simulation too
    assertThat(e.get("predicted").get("count_success").asInt()).isEqualTo(300);
    assertThat(e.get("observed").get("e2e_mean").asDouble()).isEqualTo(1897.97);
    // the APE in the file is the APE of the file's own observed and predicted values
    for (String key : List.of("e2e_mean", "e2e_p90", "e2e_p99", "ttft_mean", "ttft_p90", "decode_ms_per_token")) {
      double o = e.get("observed").get(key).asDouble();
      double p = e.get("predicted").get(key).asDouble();
      // observed, predicted and APE are each rounded to 3 decimals in the file
      double roundingTolerance = 100 * 0.0005 * (1 + p / o) / o + 0.0005;
      assertThat(e.get("ape_pct").get(key).asDouble()).as(key)
          .isCloseTo(Math.abs(p - o) / o * 100,
              org.assertj.core.api.Assertions.within(roundingTolerance));
    }
    assertThat(e.get("stages")).hasSize(1);
    assertThat(root.get("summary").get("non_saturated").get("experiments").asInt()).isEqualTo(1);
    assertThat(root.get("summary").get("saturated").get("experiments").asInt()).isZero();
    String html = Files.readString(dir.resolve("results.html"));
    assertThat(html).contains("first300");
    // across runs, then the run's CDFs and timeline, observed (from its trace) and predicted
    List<JsonNode> specs = ReportPages.specs(html);
    assertThat(specs).hasSize(3);
    assertThat(ReportPages.rows(specs.get(0), "runs", x -> x.get("metric").asText().equals("E2E mean, ms")).get(0)
        .get("observed").asDouble()).isCloseTo(1897.97, org.assertj.core.api.Assertions.withinPercentage(0.01));
    for (String side : List.of("observed", "predicted")) {
      List<JsonNode> e2e = ReportPages.rows(specs.get(1), "cdf", x -> x.get("side").asText().equals(side)
          && x.get("metric").asText().equals("E2E, ms"));
      assertThat(e2e).as(side).hasSize(1);
      double[] fractions = ReportPages.numbers(e2e.get(0).get("fraction"));
      assertThat(fractions.length).isBetween(100, 200);
      assertThat(fractions[fractions.length - 1]).isEqualTo(1.0);
    }
    // deterministic: a second run writes the same bytes
    Path again = dir.resolve("again.json");
    assertThat(run("validate", "--experiments", small().toString(), "--out", again.toString()).code()).isZero();
    assertThat(Files.readString(again)).isEqualTo(Files.readString(json));
    assertThat(Files.readString(dir.resolve("again.html"))).isEqualTo(html);
  }

  private static Path summaryOnly() throws Exception {
    return Path.of(ValidateCommandTest.class.getResource("/validate/experiments-summary-only.json").toURI());
  }

  @Test
  void combinesFilesAndComparesSummaryOnlyRunsAsWholeRuns(@TempDir Path dir) throws Exception {
    Path json = dir.resolve("both.json");
    Run r = run("validate", "--experiments", small().toString(), "--experiments", summaryOnly().toString(),
        "--out", json.toString(), "--threads", "2", "--max-requests-per-stage", "100");
    assertThat(r.code()).as(r.err()).isZero();
    // replay mode says once which runs it regenerates
    assertThat(r.err()).contains("1 experiment(s) without per_request_trace")
        .contains("test-summary-only-llama-2-7b");
    JsonNode exps = new ObjectMapper().readTree(json.toFile()).get("experiments");
    assertThat(exps).hasSize(2);
    JsonNode e = exps.get(1);
    assertThat(e.get("id").asText()).isEqualTo("test-summary-only-llama-2-7b");
    // counts were not recorded: observed counts and failure fraction are unknown, not 0
    assertThat(e.get("observed").get("count_success").isNull()).isTrue();
    assertThat(e.get("observed").get("failure_fraction").isNull()).isTrue();
    assertThat(e.get("ape_pct").get("success_count").isNull()).isTrue();
    // no trace: the whole run (120 requests) is simulated despite --max-requests-per-stage 100
    assertThat(e.get("predicted").get("count_success").asInt()).isEqualTo(120);
    // the made-up observation's decode time is derived from its means: (800 - 30) / (101 - 1)
    assertThat(e.get("observed").get("decode_ms_per_token").asDouble()).isEqualTo(7.7);
    double p = e.get("predicted").get("e2e_mean").asDouble();
    assertThat(e.get("ape_pct").get("e2e_mean").asDouble())
        .isCloseTo(Math.abs(p - 800.0) / 8.0, org.assertj.core.api.Assertions.within(0.01));
    // the traced run is still compared on its first 100 requests, less the 25 warm-up ones
    assertThat(exps.get(0).get("predicted").get("count_success").asInt()).isEqualTo(75);

    Run excluded = run("validate", "--experiments", small().toString(), "--experiments", summaryOnly().toString(),
        "--exclude", "first300", "--threads", "1");
    assertThat(excluded.code()).as(excluded.err()).isZero();
    assertThat(excluded.out()).contains("test-summary-only-llama-2-7b").doesNotContain("first300");
  }

  @Test
  void badInputGivesOneLineAndExitCode2(@TempDir Path dir) throws Exception {
    Run mode = run("validate", "--experiments", small().toString(), "--mode", "bogus");
    assertThat(mode.code()).isEqualTo(2);
    assertThat(mode.err()).contains("--mode: expected replay or synthetic, got 'bogus'");
    assertThat(mode.err().strip().lines()).hasSize(1);
    Run missing = run("validate", "--experiments", dir.resolve("none.json").toString());
    assertThat(missing.code()).isEqualTo(2);
    assertThat(missing.err()).contains("none.json");
    Run only = run("validate", "--experiments", small().toString(), "--only", "mixtral");
    assertThat(only.code()).isEqualTo(2);
    assertThat(only.err()).contains("--only 'mixtral' leaves no experiment of");
    Run twice = run("validate", "--experiments", small().toString(), "--experiments", small().toString());
    assertThat(twice.code()).isEqualTo(2);
    assertThat(twice.err()).contains("experiment id 'test-llama-2-7b-tp1-codegen-first300' is also in");
    Run none = run("validate", "--experiments", small().toString(), "--exclude", "llama");
    assertThat(none.code()).isEqualTo(2);
    assertThat(none.err()).contains("--exclude 'llama' leaves no experiment of");
    Run badRegex = run("validate", "--experiments", small().toString(), "--exclude", "(");
    assertThat(badRegex.code()).isEqualTo(2);
    assertThat(badRegex.err()).contains("--exclude: invalid regular expression");
    Run coeffs = run("validate", "--experiments", small().toString(), "--coefficients", dir.resolve("c.yaml").toString());
    assertThat(coeffs.code()).isEqualTo(2);
    assertThat(coeffs.err()).contains("--coefficients: no such file");
  }
}
