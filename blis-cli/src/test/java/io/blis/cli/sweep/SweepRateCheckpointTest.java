package io.blis.cli.sweep;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * A sweep of one configuration and many rates checkpoints rate by rate: each rate is appended to
 * {@code points.jsonl} as it is done (a sweep of one configuration and 100,000 rates recorded
 * nothing in 300 s, as a configuration was recorded only when all its rates were done), and a
 * sweep stopped in the middle of the configuration reruns only the rates it had not recorded, with
 * the same bytes in the end.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SweepRateCheckpointTest {

  private static final String GRID = """
      question: rates
      rates: [2, 4, 6, 8]
      slo: "ttft_p99=500ms"
      workload: {preset: chatbot, seed: 5}
      points:
        - {model: llama-2-7b, gpu: H100, max_num_seqs: 32}
      search: {point_duration_s: 20, min_requests: 40, max_requests: 120}
      """;

  private static final List<String> TABLES = List.of(Sweep.CSV, Sweep.JSONL, Sweep.SUMMARY, Sweep.REPORT);

  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path tmp;

  private SweepGrid grid;
  private Path clean;

  @BeforeAll
  void runItWhole(@TempDir Path dir) {
    grid = SweepGrid.parse(GRID, "rates.yaml", dir);
    clean = dir.resolve("clean");
    Sweep.of(grid).threads(2).run(clean);
  }

  private static List<JsonNode> lines(Path dir) throws IOException {
    List<JsonNode> out = new ArrayList<>();
    for (String l : Files.readAllLines(dir.resolve(Sweep.POINTS))) {
      out.add(JSON.readTree(l));
    }
    return out;
  }

  private static long rateLines(List<JsonNode> lines) {
    return lines.stream().filter(l -> l.has("rate_of")).count();
  }

  private static long records(List<JsonNode> lines) {
    return lines.stream().filter(l -> l.has("key")).count();
  }

  @Test
  void eachRateIsRecordedThenTheConfiguration() throws IOException {
    List<JsonNode> lines = lines(clean);
    assertThat(lines).hasSize(5);
    assertThat(rateLines(lines.subList(0, 4))).isEqualTo(4);
    JsonNode rec = lines.get(4);
    assertThat(rec.get("key").asText()).isEqualTo(grid.configs().get(0).key());
    assertThat(rec.get("rates")).hasSize(4);
    // the configuration's record holds the rates' points, in the order of the rates
    for (JsonNode l : lines.subList(0, 4)) {
      assertThat(l.get("fingerprint").asText()).isEqualTo(grid.fingerprint());
      assertThat(l.get("rate_of").asText()).isEqualTo(rec.get("key").asText());
      assertThat(rec.get("rates").get(l.get("rate_index").asInt())).isEqualTo(l.get("point"));
    }
    // and as a run of the configuration's rates one after another records it
    JsonNode whole = JSON.readTree(Sweep.evaluateLine(grid, grid.configs().get(0)));
    ((com.fasterxml.jackson.databind.node.ObjectNode) rec).remove("elapsed_s");
    assertThat(rec).isEqualTo(whole);
  }

  /**
   * A sweep that stops after its second rate (here the progress callback fails, as a kill would stop
   * it) has recorded those rates, and no configuration; run again, it simulates only the others and
   * writes the bytes of the sweep that was never stopped.
   */
  @Test
  void aSweepStoppedInTheMiddleOfAConfigurationResumesFromItsRates() throws IOException {
    Path dir = tmp.resolve("stopped");
    assertThatThrownBy(() -> Sweep.of(grid).threads(1).progress(line -> {
      if (line.startsWith("[2/4]")) {
        throw new IllegalStateException("killed");
      }
    }).run(dir)).hasMessageContaining("killed");
    List<JsonNode> left = lines(dir);
    assertThat(records(left)).isZero();
    long recorded = rateLines(left);
    assertThat(recorded).as("recorded as they were done").isBetween(2L, 3L); // the third may have been under way

    List<String> progress = new ArrayList<>();
    Sweep.Outcome o = Sweep.of(grid).threads(2).progress(progress::add).run(dir);
    assertThat(o.reused()).isZero();
    assertThat(o.simulated()).isEqualTo(1);
    assertThat(progress.get(0)).isEqualTo("0 of 1 configurations already in " + dir.resolve(Sweep.POINTS) + ", and "
        + recorded + " rates of the others; running 1");
    assertThat(progress.stream().filter(l -> l.startsWith("["))).hasSize((int) (4 - recorded))
        .allMatch(l -> l.matches("\\[\\d/" + (4 - recorded) + "\\] #0 .* @ \\d req/s: .*"));
    for (String f : TABLES) {
      assertThat(Files.readString(dir.resolve(f))).as(f).isEqualTo(Files.readString(clean.resolve(f)));
    }
    List<JsonNode> all = lines(dir);
    assertThat(rateLines(all)).isEqualTo(4);
    assertThat(records(all)).isEqualTo(1);
  }

  /** Killed after its last rate, before its record: the record is made from the rates, nothing run. */
  @Test
  void everyRateRecordedButNotTheConfigurationRunsNothing() throws IOException {
    Path dir = tmp.resolve("all-rates");
    Files.createDirectories(dir);
    List<String> text = Files.readAllLines(clean.resolve(Sweep.POINTS));
    Files.write(dir.resolve(Sweep.POINTS), text.subList(0, 4));
    List<String> progress = new ArrayList<>();
    Sweep.of(grid).progress(progress::add).run(dir);
    assertThat(progress).noneMatch(l -> l.startsWith("["));
    for (String f : TABLES) {
      assertThat(Files.readString(dir.resolve(f))).as(f).isEqualTo(Files.readString(clean.resolve(f)));
    }
  }

  /** Records of before (one line per configuration, no rate lines) are still reused. */
  @Test
  void aConfigurationRecordedWholeIsReused() throws IOException {
    Path dir = tmp.resolve("old");
    Files.createDirectories(dir);
    List<String> text = Files.readAllLines(clean.resolve(Sweep.POINTS));
    Files.write(dir.resolve(Sweep.POINTS), text.subList(4, 5));
    Sweep.Outcome o = Sweep.of(grid).run(dir);
    assertThat(o.reused()).isEqualTo(1);
    assertThat(o.simulated()).isZero();
    assertThat(Files.readString(dir.resolve(Sweep.CSV))).isEqualTo(Files.readString(clean.resolve(Sweep.CSV)));
  }

  /** The lines of a points.jsonl, rate lines and all, make the table (a runner elsewhere may send them). */
  @Test
  void theTableOfAPointsFileSkipsItsRateLines() throws IOException {
    List<String> text = Files.readAllLines(clean.resolve(Sweep.POINTS));
    SweepTable t = Sweep.table(grid, PriceTable.bundled(), text);
    assertThat(t.csv()).isEqualTo(Files.readString(clean.resolve(Sweep.CSV)));
  }
}
