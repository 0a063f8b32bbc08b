package io.blis.cli.sweep;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Prefill/decode splits as sweep axes: the same GPUs whole and split, each row's rates. */
class SweepDisaggregationTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  /** Four H100s whole and split four ways, at two rates of long prompts. */
  private static final String GRID = """
      question: rates
      rates: [4, 8]
      workload: {spec: long.yaml}
      grid:
        model: llama-3.1-8b
        replicas: 4
        prefill_replicas: [0, 1]
        decode_replicas: [0, 3]
      points:
        - {model: llama-3.1-8b, replicas: 4, prefill_replicas: 1, decode_replicas: 1, pd_decider: prefix-threshold}
      search: {point_duration_s: 30, min_requests: 60, max_requests: 400}
      """;

  private static final String SPEC = """
      seed: 3
      horizon_s: 60
      clients:
        - id: long
          rate: 1
          input: {type: gaussian, mean: 3000, std: 300, min: 100, max: 6000}
          output: {type: gaussian, mean: 150, std: 30, min: 10, max: 400}
      """;

  @Test
  void splitsAreConfigurationsWithTheirOwnKeysAndRows(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("long.yaml"), SPEC);
    // 0+0 is whole; 1+3 splits all four; 0+3 and 1+0 leave one and three instances doing both
    SweepGrid grid = SweepGrid.parse(GRID, "pd.yaml", dir);
    assertThat(grid.configs()).extracting(SweepReport::split)
        .containsExactly("pd=none", "pd=0+3 always", "pd=1+0 always", "pd=1+3 always", "pd=1+1 prefix-threshold");
    assertThat(grid.configs().get(0).key()).doesNotContain("prefill_replicas");
    assertThat(grid.configs().get(3).key()).endsWith(";prefill_replicas=1;decode_replicas=3;pd_decider=always");
    assertThat(grid.configs()).allSatisfy(c -> assertThat(c.gpus()).isEqualTo(4));

    Sweep.of(grid).threads(1).run(dir.resolve("out"));
    // the configurations' records (each rate of theirs has a line of its own before them)
    List<String> lines = Files.readAllLines(dir.resolve("out").resolve("points.jsonl")).stream()
        .filter(l -> l.contains("\"key\":")).toList();
    assertThat(lines).hasSize(5);
    JsonNode whole = JSON.readTree(lines.get(0));
    JsonNode split = JSON.readTree(lines.get(3));
    assertThat(whole.path("status").asText()).as(lines.get(0)).isEqualTo("ok");
    assertThat(split.path("status").asText()).as(lines.get(3)).isEqualTo("ok");
    assertThat(split.toString()).isNotEqualTo(whole.toString().replace(grid.configs().get(0).key(),
        grid.configs().get(3).key()));
  }

  @Test
  void badSplitsAreOneLine(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("long.yaml"), SPEC);
    assertThatThrownBy(() -> SweepGrid.parse(GRID.replace("[0, 3]", "[4]").replace("[0, 1]", "[1]"), "pd.yaml", dir))
        .hasMessageContaining("pd.yaml").hasMessageContaining("exceed replicas 4");
    assertThatThrownBy(() -> SweepGrid.parse(GRID.replace("[0, 1]", "[-1]"), "pd.yaml", dir))
        .hasMessageContaining("grid.prefill_replicas[0]: must be a whole number of at least 0, got -1");
    assertThatThrownBy(() -> SweepGrid.parse(GRID.replace("prefix-threshold", "sometimes"), "pd.yaml", dir))
        .hasMessageContaining("points[0].pd_decider").hasMessageContaining("never, always or prefix-threshold");
    assertThatThrownBy(() -> SweepGrid.parse(GRID.replace("[0, 3]", "[0]").replace("[0, 1]", "[4]"), "pd.yaml", dir))
        .hasMessageContaining("give both some");
  }
}
