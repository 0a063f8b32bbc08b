package io.blis.workload.trace;

import static org.assertj.core.api.Assertions.assertThat;

import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TraceV2WriterTest {

  private static final long T0 = 1_767_225_600_000_000L; // 2026-01-01, epoch microseconds

  private static TraceV2Writer.Row row(long id, long arrival, long send, String status, String error, long deadline) {
    return new TraceV2Writer.Row(id, "", "team-a", "standard", "", 0, "", 0, true, 100, 8, "", deadline, 101,
        arrival, send, send == 0 ? 0 : send + 20_000, send == 0 ? 0 : send + 90_000, 8, status, error, "length", "");
  }

  private static List<RequestSpec> all(NotedSource s) {
    List<RequestSpec> out = new ArrayList<>();
    try (RequestSource src = s.source()) {
      for (RequestSpec r; (r = src.next()) != null; ) {
        out.add(r);
      }
    }
    return out;
  }

  @Test
  void writesGoColumnsAndHeaderAndRebasedEpochTimesReadBack(@TempDir Path dir) throws Exception {
    Path header = dir.resolve("t.yaml");
    Path data = dir.resolve("t.csv");
    TraceV2Writer.writeHeader(header, new TraceV2Writer.Header(3, "2026-01-01T00:00:00Z", "real", 1, 42L,
        "preset:chatbot", "vllm", "qwen/qwen3-14b", 2.5));
    TraceV2Writer.writeData(data, List.of(
        row(1, 100_000, T0 + 100_400, "ok", "", 0),
        row(2, 300_000, T0 + 300_900, "error", "http_error: HTTP 500: \"boom\", then more", 2_300_000)));
    assertThat(Files.readString(header)).isEqualTo("""
        trace_version: 3
        time_unit: us
        created_at: "2026-01-01T00:00:00Z"
        mode: real
        warm_up_requests: 1
        workload_seed: 42
        workload_spec: preset:chatbot
        server:
            type: vllm
            model: qwen/qwen3-14b
        network:
            measured_rtt_ms: 2.5
        """);
    List<String> lines = Files.readAllLines(data);
    assertThat(lines.get(0)).isEqualTo(String.join(",", TraceV2Reader.COLUMNS));
    assertThat(lines.get(2)).endsWith(",error,\"http_error: HTTP 500: \"\"boom\"\", then more\",length");

    // epoch send times are beyond the simulated time: moved back by the first, with a note
    NotedSource read = TraceV2Reader.open(header, data, 7);
    assertThat(read.notes().get(0)).isEqualTo(data + ": send_time_us are wall-clock (Unix epoch) microseconds,"
        + " as Go BLIS's observe writes them: every request is moved back by " + (T0 + 100_400)
        + " us, so that the first is sent at 0");
    List<RequestSpec> requests = all(read);
    assertThat(requests).extracting(RequestSpec::id).containsExactly(1L, 2L);
    assertThat(requests).extracting(RequestSpec::arrivalTimeUs).containsExactly(0L, 200_500L);
    // the deadline keeps its distance from the arrival: 2.3 s - 0.3 s
    assertThat(requests.get(1).timeoutUs()).isEqualTo(2_000_000L);
  }

  @Test
  void aHeaderWithoutRttWritesAnEmptyNetworkAsGoDoes() {
    String yaml = TraceV2Writer.headerYaml(new TraceV2Writer.Header(3, "", "real", 0, null, null, "vllm",
        "a model: yes", 0));
    assertThat(yaml).isEqualTo("""
        trace_version: 3
        time_unit: us
        mode: real
        warm_up_requests: 0
        server:
            type: vllm
            model: "a model: yes"
        network: {}
        """);
  }

  @Test
  void itlRowsAreGoColumns(@TempDir Path dir) throws Exception {
    Path itl = dir.resolve("t.itl.csv");
    TraceV2Writer.writeItl(itl, List.of(new TraceV2Writer.ItlRow(3, 0, T0), new TraceV2Writer.ItlRow(3, 1, T0 + 9)));
    assertThat(Files.readAllLines(itl)).containsExactly("request_id,chunk_index,timestamp_us",
        "3,0," + T0, "3,1," + (T0 + 9));
  }
}
