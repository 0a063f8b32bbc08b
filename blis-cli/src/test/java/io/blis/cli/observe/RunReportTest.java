package io.blis.cli.observe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import io.blis.engine.validate.RunStats;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RunReportTest {

  /**
   * Two complete requests of stage 0 and a timed-out one of stage 1, figures by hand: request 0
   * sent at 0, chunks at 10, 12 and 15 ms; request 1 sent at 1 ms, chunks 5 and 9 ms after.
   */
  private static final List<Observation> RUN = List.of(
      new Observation(0, 40, 0, -1, 0, 0, 0, 10_000, 15_000, 15_100, 3, 100, 100, 3, 3, 200, "ok", "",
          new long[] {10_000, 12_000, 15_000}),
      new Observation(1, 41, 0, -1, 0, 900, 1_000, 6_000, 10_000, 10_050, 2, 50, 52, 2, 2, 200, "ok", "",
          new long[] {5_000, 9_000}),
      new Observation(2, 42, 1, -1, 0, 2_000, 2_000, -1, -1, 2_002_000, 0, 80, -1, -1, 5, 200, "timeout",
          "no complete answer within 2.0 s (0 chunks)", new long[0]));

  private static Path write(Path dir, List<Observation> observations, String tail) throws IOException {
    StringBuilder b = new StringBuilder();
    com.fasterxml.jackson.core.JsonFactory f = new com.fasterxml.jackson.core.JsonFactory();
    for (Observation o : observations) {
      java.io.StringWriter w = new java.io.StringWriter();
      try (com.fasterxml.jackson.core.JsonGenerator g = f.createGenerator(w)) {
        o.write(g);
      }
      b.append(w).append('\n');
    }
    b.append(tail);
    return Files.writeString(dir.resolve("observations.jsonl"), b);
  }

  @Test
  void statisticsAsInferencePerfComputesThem(@TempDir Path dir) throws IOException {
    RunReport r = RunReport.read(write(dir, RUN, ""));
    RunStats all = r.summary().overall();
    assertThat(all.countSuccess()).isEqualTo(2);
    assertThat(all.countFailed()).isEqualTo(1);
    assertThat(all.e2eMeanMs()).isEqualTo(12.0);  // (15 + 9) / 2
    assertThat(all.e2eP50Ms()).isEqualTo(12.0);
    assertThat(all.ttftMeanMs()).isEqualTo(7.5);  // (10 + 5) / 2
    assertThat(all.decodeMsPerToken()).isEqualTo(3.25);  // ((15-10)/2 + (9-5)/1) / 2
    assertThat(all.throughputRps()).isCloseTo(2 / 2.002, within(1e-9));  // 2 successes over 0 .. 2.002 s
    assertThat(r.failureRate()).isCloseTo(1 / 3.0, within(1e-12));
    assertThat(r.saturated()).isTrue();  // more than 5% failed
    JsonNode observed = r.observedJson();
    JsonNode o = observed.get("overall");
    assertThat(o.get("count_sent").asInt()).isEqualTo(3);
    assertThat(o.get("itl_ms").get("mean").asDouble()).isEqualTo(3.0);  // gaps 2, 3 and 4 ms
    assertThat(o.get("prompt_len_mean").asDouble()).isEqualTo(76.0);  // usage 100 and 52
    assertThat(o.get("output_len_mean").asDouble()).isEqualTo(2.5);
    assertThat(o.get("failures").get("timeout").asInt()).isEqualTo(1);
    assertThat(observed.get("stages")).hasSize(2);
    assertThat(observed.get("stages").get(1).get("count_success").asInt()).isZero();
    assertThat(observed.get("stages").get(1).has("e2e_ms")).isTrue();
    assertThat(observed.get("stages").get(1).get("e2e_ms").has("mean")).isFalse();  // no success: no mean
    JsonNode client = r.clientJson(null);
    assertThat(client.get("prompt_tokens_vs_usage").get("requests_with_usage").asInt()).isEqualTo(2);
    assertThat(client.get("prompt_tokens_vs_usage").get("exact").asInt()).isEqualTo(1);
    assertThat(client.get("prompt_tokens_vs_usage").get("max_abs_diff").asInt()).isEqualTo(2);
    assertThat(client.get("send_lateness_ms").get("max").asDouble()).isEqualTo(0.1);
  }

  @Test
  void aLastLineCutShortIsSkippedAndCountedAnyOtherBadLineFails(@TempDir Path dir) throws IOException {
    RunReport r = RunReport.read(write(dir, RUN, "{\"seq\":3,\"id\":43,\"sta"));
    assertThat(r.observations()).hasSize(3);
    assertThat(r.clientJson(null).get("truncated_lines_skipped").asInt()).isEqualTo(1);
    Path bad = write(dir, RUN, "");
    Files.writeString(bad, "not json\n" + Files.readString(bad));
    assertThatThrownBy(() -> RunReport.read(bad)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("observations.jsonl:1: not a JSON object");
  }

  @Test
  void withoutTokenTimesEachRequestsMeanGapStandsForItsGaps(@TempDir Path dir) throws IOException {
    List<Observation> noTimes = RUN.stream().map(o -> new Observation(o.seq(), o.id(), o.stage(), o.sessionId(),
        o.round(), o.scheduledUs(), o.sendUs(), o.firstTokenUs(), o.lastTokenUs(), o.endUs(), o.chunks(),
        o.promptTokensSent(), o.promptTokensUsage(), o.completionTokensUsage(), o.maxTokens(), o.httpStatus(),
        o.status(), o.reason(), new long[0])).toList();
    RunReport r = RunReport.read(write(dir, noTimes, ""));
    // request 0: 2 gaps of 2.5 ms, request 1: 1 gap of 4 ms
    assertThat(r.observedJson().get("overall").get("itl_ms").get("mean").asDouble()).isEqualTo(3.0);
    assertThat(r.clientJson(null).get("itl_from").asText()).contains("mean gap");
  }
}
