package io.blis.workload.trace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GroundTruthTraceTest {

  static final String HEADER = "req,stage,arrival_ms,ok,input_tokens,output_tokens_client,e2e_ms,ttft_ms\n";

  @Test
  void parsesSuccessesAndFailures(@TempDir Path dir) throws Exception {
    Path f = dir.resolve("t.csv");
    Files.writeString(f, HEADER + "0,0,0.000,1,591,140,1943.702,130.224\n"
        + "1,0,53.490,0,,,300000.5,\n");
    var rows = GroundTruthTrace.read(f);
    assertThat(rows).containsExactly(
        new GroundTruthTrace.Row(0, 0, 0.0, true, 591, 140, 1943.702, 130.224),
        new GroundTruthTrace.Row(1, 0, 53.49, false, -1, -1, 300000.5, Double.NaN));
  }

  @Test
  void badRowsFailWithFileLineAndField(@TempDir Path dir) throws Exception {
    Path f = dir.resolve("bad.csv");
    String ok = "0,0,0.000,1,591,140,1943.702,130.224\n";
    Files.writeString(f, HEADER + ok + "1,0,NaN,1,591,140,1943.702,130.224\n");
    assertThatThrownBy(() -> GroundTruthTrace.read(f))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith(f + ":3:").hasMessageContaining("arrival_ms");
    Files.writeString(f, HEADER + ok + "1,0,5,1,591,140,-3,130.224\n");
    assertThatThrownBy(() -> GroundTruthTrace.read(f)).hasMessageContaining("e2e_ms");
    Files.writeString(f, HEADER + ok + "1,0,5,1,591,140,1943.702\n");
    assertThatThrownBy(() -> GroundTruthTrace.read(f)).hasMessageStartingWith(f + ":3:")
        .hasMessageContaining("expected 8 fields");
    Files.writeString(f, HEADER + ok + "1,0,5,1,,140,1943.702,3\n");
    assertThatThrownBy(() -> GroundTruthTrace.read(f)).hasMessageContaining("input_tokens");
    Files.writeString(f, HEADER + ok + "5,0,5,1,591,140,1943.702,3\n");
    assertThatThrownBy(() -> GroundTruthTrace.read(f)).hasMessageContaining("'req'");
    Files.writeString(f, HEADER.replace(",ttft_ms", "") + ok);
    assertThatThrownBy(() -> GroundTruthTrace.read(f)).hasMessageStartingWith(f + ":1:")
        .hasMessageContaining("ttft_ms");
  }
}
