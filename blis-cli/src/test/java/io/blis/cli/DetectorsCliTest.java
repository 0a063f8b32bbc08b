package io.blis.cli;

import static io.blis.cli.BlisCliTest.blis;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Go BLIS's --detectors, --saturation-config, --saturation-report and --saturation-final-window. */
class DetectorsCliTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void theReportsFinalLabelsAreTheResultsAndReplayGivesTheSame(@TempDir Path dir) throws Exception {
    Path report = dir.resolve("sat.json");
    Path trace = dir.resolve("tr");
    BlisCliTest.Outcome run = blis("run", "--model", "qwen/qwen3-14b", "--rate", "20", "--num-requests", "200",
        "--detectors", "all", "--saturation-report", report.toString(), "--trace-output", trace.toString());
    assertThat(run.code()).as(run.err()).isZero();
    JsonNode result = JSON.readTree(run.out());
    JsonNode file = JSON.readTree(report.toFile());
    assertThat(result.get("saturation")).isEqualTo(file.get("final"));
    assertThat(file.get("final").size()).isEqualTo(3);
    // two events per completed request, three detectors each, in roster order
    long completed = result.at("/overall/completed_requests").asLong();
    assertThat(file.get("trace").size()).isEqualTo(2 * 3 * completed);
    assertThat(file.get("trace").get(0).get("detector").asText()).isEqualTo("composite");
    assertThat(file.get("trace").get(1).get("detector").asText()).isEqualTo("threshold");
    assertThat(file.get("trace").get(2).get("detector").asText()).isEqualTo("backlog-drift");
    // the same requests replayed give the same report
    Path again = dir.resolve("sat2.json");
    BlisCliTest.Outcome replay = blis("replay", "--trace", trace + ".yaml", "--model", "qwen/qwen3-14b",
        "--detectors", "all", "--saturation-report", again.toString());
    assertThat(replay.code()).as(replay.err()).isZero();
    assertThat(Files.readString(again)).isEqualTo(Files.readString(report));
    // a subset's records are the full roster's records of those detectors
    Path one = dir.resolve("one.json");
    assertThat(blis("run", "--model", "qwen/qwen3-14b", "--rate", "20", "--num-requests", "200", "--detectors",
        "threshold", "--saturation-report", one.toString()).code()).isZero();
    JsonNode single = JSON.readTree(one.toFile()).get("trace");
    for (int i = 0; i < single.size(); i++) {
      assertThat(single.get(i)).isEqualTo(file.get("trace").get(3 * i + 1));
    }
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "--saturation-report R|--saturation-config, --saturation-report and --saturation-final-window need --detectors",
      "--detectors composite --post-hoc-detector threshold|give --detectors or --post-hoc-detector, not both",
      "--detectors fancy|--detectors: unknown detector 'fancy'; known: composite, threshold, backlog-drift",
      "--detectors composite --saturation-final-window 10|--saturation-final-window '10': expected a duration above 0",
      "--detectors composite --saturation-config C|a threshold block needs the threshold detector among --detectors"})
  void misuseIsOneLine(String flags, String message, @TempDir Path dir) throws Exception {
    Path config = Files.writeString(dir.resolve("c.yaml"), "threshold:\n  threshold_ms: 100\n");
    String[] extra = flags.replace(" R", " " + dir.resolve("r.json")).replace(" C", " " + config).split(" ");
    String[] args = new String[4 + extra.length];
    System.arraycopy(new String[] {"run", "--model", "qwen/qwen3-14b", "--num-requests=5"}, 0, args, 0, 4);
    System.arraycopy(extra, 0, args, 4, extra.length);
    BlisCliTest.Outcome o = blis(args);
    assertThat(o.code()).as(o.out()).isEqualTo(2);
    assertThat(o.out()).isEmpty();
    assertThat(o.err().strip().lines().count()).as(o.err()).isEqualTo(1);
    assertThat(o.err()).contains(message);
  }
}
