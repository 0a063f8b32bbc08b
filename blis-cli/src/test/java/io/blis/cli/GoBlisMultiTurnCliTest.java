package io.blis.cli;

import static io.blis.cli.BlisCliTest.blis;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Go BLIS spec's num_requests counts the rounds of multi-turn sessions: Go BLIS's
 * examples/multiturn-chat-demo.yaml (sessions at 500/s, 5 rounds, num_requests 500) runs 200
 * sessions, 1,000 requests, in Go BLIS and here; converted, the spec says 200 and runs the same.
 */
class GoBlisMultiTurnCliTest {

  private static final String SPEC = """
      version: "2"
      seed: 42
      aggregate_rate: 500.0
      num_requests: 500
      clients:
        - id: "multi-turn-chat"
          slo_class: "standard"
          rate_fraction: 1.0
          arrival:
            process: poisson
          input_distribution:
            type: gaussian
            params: {mean: 128, std_dev: 30, min: 32, max: 512}
          output_distribution:
            type: gaussian
            params: {mean: 64, std_dev: 20, min: 16, max: 256}
          reasoning:
            reason_ratio_distribution:
              type: constant
              params: {value: 0}
            multi_turn:
              max_rounds: 5
              think_time_us: 500000
              context_growth: accumulate
      """;

  @Test
  void theRoundsCountAsInGoBlisAndConvertKeepsTheSessions(@TempDir Path dir) throws Exception {
    Path go = dir.resolve("demo.yaml");
    Files.writeString(go, SPEC);
    ObjectMapper json = new ObjectMapper();
    BlisCliTest.Outcome run = blis("run", "--model", "meta-llama/llama-3.1-8b-instruct", "--num-instances", "4",
        "--workload-spec", go.toString());
    assertThat(run.code()).as(run.err()).isZero();
    assertThat(json.readTree(run.out()).at("/overall/injected_requests").asLong()).isEqualTo(1_000);

    Path converted = dir.resolve("ours.yaml");
    BlisCliTest.Outcome conv = blis("convert", go.toString(), "--out", converted.toString());
    assertThat(conv.code()).as(conv.err()).isZero();
    assertThat(Files.readString(converted)).contains("\nnum_requests: 200\n");
    BlisCliTest.Outcome again = blis("run", "--model", "meta-llama/llama-3.1-8b-instruct", "--num-instances", "4",
        "--workload-spec", converted.toString());
    assertThat(json.readTree(again.out()).at("/overall/injected_requests").asLong()).isEqualTo(1_000);
  }

  @Test
  void sessionsGetGoBlisSessionSectionAndTheResultTheSameFigures(@TempDir Path dir) throws Exception {
    Path go = dir.resolve("demo.yaml");
    Files.writeString(go, SPEC);
    String[] args = {"run", "--model", "meta-llama/llama-3.1-8b-instruct", "--num-instances", "4", "--workload-spec",
        go.toString()};
    BlisCliTest.Outcome own = blis(args);
    assertThat(own.code()).as(own.err()).isZero();
    com.fasterxml.jackson.databind.JsonNode s = new ObjectMapper().readTree(own.out()).path("sessions");
    // 200 sessions of 5 rounds: 200 first rounds, 800 later ones, every session spanned
    assertThat(s.path("sessions").asLong()).isEqualTo(200);
    assertThat(s.at("/ttft_cold_ms/count").asLong()).isEqualTo(200);
    assertThat(s.at("/ttft_warm_ms/count").asLong()).isEqualTo(800);
    assertThat(s.at("/duration_ms/count").asLong()).isEqualTo(200);
    // a session spans its 4 think times of 0.5 s at least
    assertThat(s.at("/duration_ms/p50").asDouble()).isGreaterThan(2000);
    String[] goArgs = java.util.Arrays.copyOf(args, args.length + 2);
    goArgs[args.length] = "--output-format";
    goArgs[args.length + 1] = "go-blis";
    BlisCliTest.Outcome goOut = blis(goArgs);
    assertThat(goOut.code()).as(goOut.err()).isZero();
    String section = goOut.out().substring(goOut.out().indexOf("=== Session Metrics ===\n"));
    assertThat(section).startsWith("=== Session Metrics ===\n  Sessions: 200\n");
    assertThat(section).contains(String.format(java.util.Locale.ROOT,
        "  TTFT cold (round 0): mean=%.2f p50=%.2f p95=%.2f p99=%.2f ms (n=200)\n", s.at("/ttft_cold_ms/mean").asDouble(),
        s.at("/ttft_cold_ms/p50").asDouble(), s.at("/ttft_cold_ms/p95").asDouble(), s.at("/ttft_cold_ms/p99").asDouble()));
    assertThat(section).contains("  TTFT warm (round\u22651): mean=").contains("ms (n=800)\n")
        .contains("  Session duration:    mean=").contains("ms (n=200)\n");
  }
}
