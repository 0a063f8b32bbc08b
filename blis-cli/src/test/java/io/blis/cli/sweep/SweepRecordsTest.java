package io.blis.cli.sweep;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/** The table built from records evaluated one by one (as another process would send them back). */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SweepRecordsTest {

  /** One configuration simulated at one short rate, and one that TP 3 cannot split (skipped). */
  private static final String GRID = """
      question: rates
      rates: [4]
      slo: "ttft_p99=500ms"
      workload: {preset: chatbot, seed: 3}
      grid:
        model: llama-2-7b
        tp: [1, 3]
        max_num_seqs: 32
      search: {point_duration_s: 30, min_requests: 100}
      """;

  @TempDir Path tmp;

  private SweepGrid grid;
  private PriceTable prices;
  private List<String> lines;

  @BeforeAll
  void evaluateEachConfiguration(@TempDir Path dir) {
    grid = SweepGrid.parse(GRID, "records.yaml", dir);
    prices = PriceTable.parse("H100: 2.5", "p.yaml", false);
    lines = new ArrayList<>();
    for (SweepConfig c : grid.configs()) {
      lines.add(Sweep.evaluateLine(grid, c));
    }
  }

  @Test
  void recordsInAnyOrderGiveTheBytesOfTheLocalSweep() throws IOException {
    assertThat(lines).hasSize(2).allMatch(l -> !l.contains("\n") && l.startsWith("{\"fingerprint\":\""));
    Path local = tmp.resolve("local");
    Sweep.of(grid).threads(2).prices(prices).run(local);
    List<String> reversed = new ArrayList<>(lines);
    Collections.reverse(reversed);
    SweepTable t = Sweep.table(grid, prices, reversed);
    assertThat(t.rows()).extracting(r -> r.get("status").asText()).containsExactly("ok", "skipped");
    Path remote = tmp.resolve("remote").resolve("nested");
    Sweep.write(t, remote);
    for (String f : List.of(Sweep.CSV, Sweep.JSONL, Sweep.SUMMARY)) {
      assertThat(Files.readString(remote.resolve(f))).as(f).isEqualTo(Files.readString(local.resolve(f)));
    }
    assertThat(remote.resolve(Sweep.POINTS)).doesNotExist();
    // the local sweep's records, elapsed_s included, give the same table
    List<String> recorded = Files.readAllLines(local.resolve(Sweep.POINTS));
    assertThat(Sweep.table(grid, prices, recorded).csv()).isEqualTo(t.csv());
  }

  @Test
  void missingDuplicateForeignAndBrokenRecordsAreRefused() {
    assertThatThrownBy(() -> Sweep.table(grid, prices, lines.subList(0, 1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("no record of " + grid.configs().get(1).key());
    assertThatThrownBy(() -> Sweep.table(grid, prices, List.of(lines.get(0), lines.get(1), lines.get(0))))
        .hasMessage("record 3: " + grid.configs().get(0).key() + " is recorded twice");
    SweepGrid other = SweepGrid.parse(GRID.replace("seed: 3", "seed: 4"), "other.yaml", tmp);
    assertThatThrownBy(() -> Sweep.table(other, prices, lines))
        .hasMessageStartingWith("record 1 (" + grid.configs().get(0).key() + ") has fingerprint " + grid.fingerprint()
            + ", other.yaml has " + other.fingerprint() + ": it answers another question");
    SweepGrid fewer = SweepGrid.parse(GRID.replace("tp: [1, 3]", "tp: 1"), "fewer.yaml", tmp);
    assertThat(fewer.fingerprint()).isEqualTo(grid.fingerprint());
    assertThatThrownBy(() -> Sweep.table(fewer, prices, lines))
        .hasMessage("a record of " + grid.configs().get(1).key() + ", which is no configuration of fewer.yaml");
    assertThatThrownBy(() -> Sweep.table(grid, prices, List.of(lines.get(0), "{\"key\": 1")))
        .hasMessageStartingWith("record 2: not JSON (");
    assertThatThrownBy(() -> Sweep.table(grid, prices, List.of("[]")))
        .hasMessage("record 1: not a sweep record (needs key, fingerprint and status)");
  }
}
