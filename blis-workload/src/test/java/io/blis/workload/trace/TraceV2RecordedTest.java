package io.blis.workload.trace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link TraceV2Reader#recorded} and {@link TraceV2Reader#itl}: the observed side of calibrate. */
class TraceV2RecordedTest {

  @TempDir Path dir;

  private Path write(String name, String text) throws IOException {
    Path p = dir.resolve(name);
    Files.writeString(p, text);
    return p;
  }

  @Test
  void readsEpochTimesTokensAndTheHeaderMeasurements() throws IOException {
    Path h = write("t.yaml", """
        trace_version: 2
        time_unit: us
        mode: real
        warm_up_requests: 2
        network:
          measured_rtt_ms: 1.25
        observed_kv_metrics:
          source: gpu-prefix-cache-fallback
          hit_rate: 0.4
        goodput_slo_targets:
          critical:
            ttft: 100ms
        """);
    long e = 1_700_000_000_000_000L;
    Path d = write("t.csv", GoBlisTracesTest.COLUMNS + "\n"
        + "7,c,,critical,,0,g,10,true,30,5,30,0,0,0,0,m,0,0," + e + "," + (e + 10) + "," + (e + 2_010) + ","
        + (e + 9_010) + ",5,ok,,stop\n"
        + "8,c,,,,0,,0,true,25,3,25,0,0,0,0,,0,40," + e + "," + (e + 20) + ",0,0,0,error,\"reset, by peer\",\n"
        + "9,c,,,,0,,0,true,25,3,25,0,0,0,0,,0,0,500,0,400,900,2,ok,,\n");
    TraceV2Reader.Recorded r = TraceV2Reader.recorded(h, d);
    assertThat(r.mode()).isEqualTo("real");
    assertThat(r.warmUpRequests()).isEqualTo(2);
    assertThat(r.measuredRttMs()).isEqualTo(1.25);
    assertThat(r.observedKv()).isEqualTo(new TraceV2Reader.ObservedKvMetrics("gpu-prefix-cache-fallback", 0.4));
    assertThat(r.goodputTargets()).isTrue();
    assertThat(r.rows()).hasSize(3);
    TraceV2Reader.RecordedRow seven = r.rows().get(0);
    assertThat(seven.ttftUs()).isEqualTo(2_000);
    assertThat(seven.e2eUs()).isEqualTo(9_000);
    assertThat(seven.timed()).isTrue();
    assertThat(seven.promptTokens()).isEqualTo(40); // the group prefix and input_tokens
    assertThat(seven.model()).isEqualTo("m");
    TraceV2Reader.RecordedRow eight = r.rows().get(1);
    assertThat(eight.timed()).isFalse(); // no chunk
    assertThat(eight.promptTokens()).isEqualTo(40); // server_input_tokens
    assertThat(eight.status()).isEqualTo("error");
    // send_time_us 0: measured from the arrival time; a first chunk before it is not usable
    TraceV2Reader.RecordedRow nine = r.rows().get(2);
    assertThat(nine.ttftUs()).isEqualTo(-100);
    assertThat(nine.timed()).isFalse();
  }

  @Test
  void badRowsAndItlFilesAreNamedByLine() throws IOException {
    Path h = write("t.yaml", "trace_version: 2\ntime_unit: us\nobserved_kv_metrics:\n  hit_rate: 1.5\n");
    Path d = write("t.csv", GoBlisTracesTest.COLUMNS + "\n"
        + "1,c,,,,0,,0,true,25,3,25,0,0,0,0,,0,0,0,0,10,20,1,ok,,\n");
    assertThatThrownBy(() -> TraceV2Reader.recorded(h, d)).hasMessageContaining("hit_rate must be a number in [0, 1]");
    Path h2 = write("t2.yaml", "trace_version: 2\ntime_unit: us\n");
    Path dup = write("dup.csv", GoBlisTracesTest.COLUMNS + "\n"
        + "1,c,,,,0,,0,true,25,3,25,0,0,0,0,,0,0,0,0,10,20,1,ok,,\n"
        + "1,c,,,,0,,0,true,25,3,25,0,0,0,0,,0,0,0,0,10,20,1,ok,,\n");
    assertThatThrownBy(() -> TraceV2Reader.recorded(h2, dup)).hasMessageContaining("dup.csv:3:1")
        .hasMessageContaining("request_id 1 appears twice");
    Path neg = write("neg.csv", GoBlisTracesTest.COLUMNS + "\n"
        + "1,c,,,,0,,0,true,25,3,25,0,0,0,0,,0,0,0,0,-10,20,1,ok,,\n");
    assertThatThrownBy(() -> TraceV2Reader.recorded(h2, neg)).hasMessageContaining("first_chunk_time_us");
    Path itl = write("t.itl.csv", "request_id,chunk_index,timestamp_us\n3,0,100\n3,1,250\n");
    assertThat(TraceV2Reader.itl(itl)).containsExactly(new TraceV2Reader.ItlChunk(3, 0, 100),
        new TraceV2Reader.ItlChunk(3, 1, 250));
    Path badItl = write("b.itl.csv", "request_id,chunk_index,timestamp_us\n3,0\n");
    assertThatThrownBy(() -> TraceV2Reader.itl(badItl)).hasMessageContaining("b.itl.csv:2: expected 3 fields");
    Path header = write("h.itl.csv", "id,chunk,ts\n");
    assertThatThrownBy(() -> TraceV2Reader.itl(header)).hasMessageContaining("expected the ITL columns");
  }
}
