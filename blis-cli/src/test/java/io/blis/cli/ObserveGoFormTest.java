package io.blis.cli;

import static io.blis.cli.BlisCliTest.blis;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.blis.cli.serve.ServeConfig;
import io.blis.cli.serve.SimulatedServer;
import io.blis.engine.EngineLimits;
import io.blis.engine.LinearTestModel;
import io.blis.engine.Simulation;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import io.blis.workload.trace.NotedSource;
import io.blis.workload.trace.TraceV2Reader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code blis observe} in Go BLIS's form ({@code --server-url --model --trace-header --trace-data},
 * docs/guide/observe-replay-calibrate.md) against {@code blis serve} on loopback: the TraceV2 pair
 * and ITL file it writes, read back by {@link TraceV2Reader} and by {@code blis replay}.
 */
class ObserveGoFormTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  /** 2020-01-01 in epoch microseconds: Go's wall-clock times lie after it. */
  private static final long EPOCH_2020_US = 1_577_836_800_000_000L;

  private static SimulatedServer server(String name) {
    return SimulatedServer.start(Simulation.builder().latencyModel(new LinearTestModel(3000, 10, 0, 0, 0, 0))
        .totalKvBlocks(20_000).limits(new EngineLimits(256, 4096, 0, 8192)), ServeConfig.loopback(0, name));
  }

  /** Go's --server-url: the server's root, without /v1. */
  private static String root(SimulatedServer s) {
    return s.baseUrl().replaceAll("/v1/?$", "");
  }

  /** The data CSV: its column line, then one map per row. */
  private static List<Map<String, String>> rows(Path data, List<String> columns) throws IOException {
    List<String> lines = Files.readAllLines(data);
    columns.addAll(List.of(lines.get(0).split(",", -1)));
    List<Map<String, String>> out = new ArrayList<>();
    for (String line : lines.subList(1, lines.size())) {
      String[] f = line.split(",", -1);
      assertThat(f).as(line).hasSize(columns.size());
      Map<String, String> row = new HashMap<>();
      for (int i = 0; i < f.length; i++) {
        row.put(columns.get(i), f[i]);
      }
      out.add(row);
    }
    return out;
  }

  private static long num(Map<String, String> row, String column) {
    return Long.parseLong(row.get(column));
  }

  @Test
  @Timeout(120)
  void goFormWritesTheTraceV2PairAndItlThatReaderAndReplayRead(@TempDir Path dir) throws Exception {
    Path header = dir.resolve("trace.yaml");
    Path data = dir.resolve("trace.csv");
    try (SimulatedServer s = server("qwen/qwen3-14b")) {
      BlisCliTest.Outcome o = blis("observe", "--server-url", root(s), "--model", "qwen/qwen3-14b",
          "--rate", "20", "--num-requests", "6", "--prompt-tokens", "32", "--prompt-tokens-stdev", "0",
          "--output-tokens", "4", "--output-tokens-stdev", "0", "--warmup-requests", "2", "--record-itl",
          "--trace-header", header.toString(), "--trace-data", data.toString(), "--progress-interval-s", "0");
      assertThat(o.code()).as(o.err()).isZero();
      assertThat(o.out()).contains("observed 4 request(s): 4 ok, 0 failed")
          .contains("wrote " + header + " and " + data + ": 4 request(s), the first 2 sent left out as warm-up")
          .contains("wrote " + dir.resolve("trace.itl.csv") + ": 16 chunk(s)");
    }
    assertThat(Files.list(dir).map(p -> p.getFileName().toString()).toList())
        .containsExactlyInAnyOrder("trace.yaml", "trace.csv", "trace.itl.csv"); // no run folder
    String yaml = Files.readString(header);
    assertThat(yaml).startsWith("trace_version: 3\ntime_unit: us\ncreated_at: ")
        .contains("\nmode: real\nwarm_up_requests: 2\nworkload_seed: 42\n")
        .contains("server:\n    type: vllm\n    model: qwen/qwen3-14b\n").endsWith("network: {}\n");
    List<String> columns = new ArrayList<>();
    List<Map<String, String>> rows = rows(data, columns);
    assertThat(columns).isEqualTo(TraceV2Reader.COLUMNS);
    assertThat(rows).extracting(r -> r.get("request_id")).containsExactly("2", "3", "4", "5");
    long previousSend = 0;
    for (Map<String, String> r : rows) {
      assertThat(r.get("status")).isEqualTo("ok");
      assertThat(r.get("error_message")).isEmpty();
      assertThat(r.get("finish_reason")).isEqualTo("length");
      assertThat(r.get("streaming")).isEqualTo("true");
      assertThat(num(r, "input_tokens")).isEqualTo(32);
      assertThat(num(r, "server_input_tokens")).isEqualTo(32);
      assertThat(num(r, "output_tokens")).isEqualTo(4);
      assertThat(num(r, "num_chunks")).isEqualTo(4);
      assertThat(num(r, "arrival_time_us")).isBetween(0L, 10_000_000L); // the workload's clock
      assertThat(num(r, "send_time_us")).isGreaterThan(EPOCH_2020_US); // the wall clock
      assertThat(num(r, "send_time_us")).isGreaterThanOrEqualTo(previousSend);
      assertThat(num(r, "first_chunk_time_us")).isGreaterThan(num(r, "send_time_us"));
      assertThat(num(r, "last_chunk_time_us")).isGreaterThan(num(r, "first_chunk_time_us"));
      previousSend = num(r, "send_time_us");
    }
    // ITL: one row per chunk, its first and last the row's first and last chunk times
    List<String> itl = Files.readAllLines(dir.resolve("trace.itl.csv"));
    assertThat(itl.get(0)).isEqualTo("request_id,chunk_index,timestamp_us");
    assertThat(itl).hasSize(1 + 16);
    for (int i = 0; i < rows.size(); i++) {
      Map<String, String> r = rows.get(i);
      for (int k = 0; k < 4; k++) {
        String[] f = itl.get(1 + 4 * i + k).split(",");
        assertThat(f[0]).isEqualTo(r.get("request_id"));
        assertThat(f[1]).isEqualTo(Integer.toString(k));
        if (k == 0) {
          assertThat(f[2]).isEqualTo(r.get("first_chunk_time_us"));
        } else if (k == 3) {
          assertThat(f[2]).isEqualTo(r.get("last_chunk_time_us"));
        }
      }
    }
    // the reader moves the epoch times back, the first request to 0
    long shiftUs = num(rows.get(0), "send_time_us");
    NotedSource read = TraceV2Reader.open(header, data, 42);
    List<RequestSpec> requests = new ArrayList<>();
    try (RequestSource src = read.source()) {
      for (RequestSpec r; (r = src.next()) != null; ) {
        requests.add(r);
      }
    }
    assertThat(requests).extracting(RequestSpec::id).containsExactly(2L, 3L, 4L, 5L);
    assertThat(requests.get(0).arrivalTimeUs()).isZero();
    assertThat(requests.get(3).arrivalTimeUs()).isEqualTo(num(rows.get(3), "send_time_us") - shiftUs);
    assertThat(requests).allSatisfy(r -> assertThat(r.inputTokens()).isEqualTo(32))
        .allSatisfy(r -> assertThat(r.outputTokens()).isEqualTo(4));
    // blis replay as Go BLIS's docs run it
    BlisCliTest.Outcome replay = blis("replay", "--trace-header", header.toString(), "--trace-data", data.toString(),
        "--model", "qwen/qwen3-14b");
    assertThat(replay.code()).as(replay.err()).isZero();
    assertThat(replay.err()).contains(data + ": send_time_us are wall-clock (Unix epoch) microseconds")
        .contains("moved back by " + shiftUs + " us");
    JsonNode result = JSON.readTree(replay.out());
    assertThat(result.findValue("completed_requests").asInt()).isEqualTo(4);
  }

  @Test
  @Timeout(120)
  void noStreamingChatWithAModelOfNoCatalogGivesOneChunkPerRequestAndRecordsTheRtt(@TempDir Path dir)
      throws Exception {
    Path header = dir.resolve("t.yaml");
    Path data = dir.resolve("t.csv");
    try (SimulatedServer s = server("my-org/custom-7b")) {
      BlisCliTest.Outcome o = blis("observe", "--server-url", root(s), "--model", "my-org/custom-7b",
          "--api-format", "chat", "--no-streaming", "--rtt-ms", "2.5", "--rate", "20", "--num-requests", "3",
          "--prompt-tokens", "24", "--prompt-tokens-stdev", "0", "--output-tokens", "5", "--output-tokens-stdev", "0",
          "--trace-header", header.toString(), "--trace-data", data.toString(), "--progress-interval-s", "0",
          "--detectors", "composite,threshold", "--saturation-report", dir.resolve("sat.json").toString());
      assertThat(o.code()).as(o.err()).isZero();
      assertThat(o.out()).contains("observed 3 request(s): 3 ok, 0 failed");
      // Go BLIS's detectors over the answers: 3 sends and 3 ends, two detectors
      JsonNode sat = JSON.readTree(dir.resolve("sat.json").toFile());
      assertThat(sat.get("trace").size()).isEqualTo(2 * 3 * 2);
      assertThat(o.out()).contains("saturation: composite " + sat.at("/final/composite").asText() + " threshold "
          + sat.at("/final/threshold").asText());
      assertThat(sat.at("/final/threshold").asText()).isEqualTo("STABLE"); // answers in milliseconds, not 5 s
    }
    assertThat(Files.readString(header)).contains("    model: my-org/custom-7b\n")
        .endsWith("network:\n    measured_rtt_ms: 2.5\n");
    List<Map<String, String>> rows = rows(data, new ArrayList<>());
    assertThat(rows).extracting(r -> r.get("request_id")).containsExactly("0", "1", "2");
    for (Map<String, String> r : rows) {
      assertThat(r.get("status")).isEqualTo("ok");
      assertThat(r.get("streaming")).isEqualTo("false");
      assertThat(num(r, "num_chunks")).isEqualTo(1);
      assertThat(num(r, "output_tokens")).isEqualTo(5);
      assertThat(r.get("finish_reason")).isEqualTo("length");
      assertThat(num(r, "server_input_tokens")).isPositive();
      assertThat(num(r, "last_chunk_time_us")).isGreaterThanOrEqualTo(num(r, "first_chunk_time_us"));
      assertThat(num(r, "first_chunk_time_us")).isGreaterThan(num(r, "send_time_us"));
    }
  }

  @Test
  @Timeout(120)
  void prewarmRequestsAreSentFirstAndNeverRecorded(@TempDir Path dir) throws Exception {
    Path header = dir.resolve("t.yaml");
    Path data = dir.resolve("t.csv");
    Path out = dir.resolve("run");
    try (SimulatedServer s = server("m")) {
      BlisCliTest.Outcome o = blis("observe", "--server-url", root(s), "--model", "m", "--prewarm-duration", "300ms",
          "--rate", "20", "--num-requests", "3", "--prompt-tokens", "16", "--prompt-tokens-stdev", "0",
          "--output-tokens", "3", "--output-tokens-stdev", "0", "--trace-header", header.toString(),
          "--trace-data", data.toString(), "--out", out.toString(), "--progress-interval-s", "0");
      assertThat(o.code()).as(o.err()).isZero();
      assertThat(o.err()).contains("blis observe: prewarming for 300ms (4 requests at a time, 256 prompt and 64"
          + " output tokens, not recorded)").containsPattern("blis observe: prewarm: [1-9]\\d* request\\(s\\) sent, 0 failed");
      assertThat(o.out()).contains("observed 3 request(s): 3 ok, 0 failed").contains("blis validate --experiments");
    }
    // neither the trace nor the run folder (given too) holds a prewarm request
    assertThat(rows(data, new ArrayList<>())).extracting(r -> r.get("request_id")).containsExactly("0", "1", "2");
    assertThat(Files.readAllLines(out.resolve("observations.jsonl"))).hasSize(3);
    assertThat(Files.readString(header)).contains("warm_up_requests: 0\n");
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "--trace-header,H|--trace-header FILE goes with --trace-data FILE",
      "--trace-data,D|--trace-data FILE goes with --trace-header FILE",
      "--trace-header,H,--trace-data,D,--record-itl,--no-streaming|--record-itl and --no-streaming are mutually exclusive",
      "--out,OUT,--record-itl|--record-itl records the chunks of the TraceV2 trace's requests",
      "--trace-header,H,--trace-data,D,--warmup-requests,-1|--warmup-requests must be >= 0, got -1",
      "--out,OUT,--warmup-requests,3|--warmup-requests N leaves the first N requests out of the TraceV2 trace",
      "--trace-header,H,--trace-data,D,--prewarm-duration,60|--prewarm-duration: expected a duration such as 60s",
      "--trace-header,H,--trace-data,D,--prewarm-duration,-5s|--prewarm-duration must be >= 0, got -5s",
      "--trace-header,H,--trace-data,D,--rtt-ms,-1|--rtt-ms must be a finite value >= 0, got -1.0",
      "--trace-header,H,--trace-data,D,--endpoint,http://127.0.0.1:9/v1|give --endpoint URL or Go BLIS's --server-url URL, not both",
      "--trace-header,H,--trace-data,H|--trace-header and --trace-data must be two files",
      "--trace-header,H,--trace-data,D,--api-format,grpc|--api: expected completions or chat, got 'grpc'",
      "--model,m|--out DIR is required (the folder of the run), or Go BLIS's --trace-header FILE --trace-data FILE"})
  void badGoFlagCombinationsAreOneLineAndExitTwo(String flags, String message, @TempDir Path dir) {
    List<String> args = new ArrayList<>(List.of("observe", "--server-url", "http://127.0.0.1:9", "--served-model", "m"));
    for (String f : flags.split(",")) {
      args.add(switch (f) {
        case "H" -> dir.resolve("t.yaml").toString();
        case "D" -> dir.resolve("t.csv").toString();
        case "OUT" -> dir.resolve("out").toString();
        default -> f;
      });
    }
    BlisCliTest.Outcome o = blis(args.toArray(String[]::new));
    assertThat(o.code()).as(o.err()).isEqualTo(2);
    assertThat(o.err().strip().lines()).as(o.err()).hasSize(1);
    assertThat(o.err()).contains(message).doesNotContain("Exception").doesNotContain("\tat ");
    assertThat(dir.resolve("t.csv")).doesNotExist();
    assertThat(dir.resolve("out")).doesNotExist();
  }

  @Test
  void aServerUrlThatIsNotAUrlIsOneLine() {
    BlisCliTest.Outcome o = blis("observe", "--server-url", "ftp://host:8000", "--model", "m", "--trace-header", "t.yaml",
        "--trace-data", "t.csv");
    assertThat(o.code()).isEqualTo(2);
    assertThat(o.err().strip().lines()).hasSize(1);
    assertThat(o.err().strip()).startsWith("blis observe: --server-url must be an http:// or https:// URL with a host"
        + " (e.g. http://127.0.0.1:8000), got 'ftp://host:8000'");
  }
}
