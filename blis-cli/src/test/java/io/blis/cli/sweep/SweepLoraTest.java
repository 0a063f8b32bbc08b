package io.blis.cli.sweep;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.blis.engine.lora.LoraSpec;
import io.blis.engine.result.LoraReport;
import io.blis.engine.result.SimulationResult;
import io.blis.workload.RequestSource;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** LoRA GPU slots as a sweep axis: one slot and four over requests naming sixteen adapters. */
class SweepLoraTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  private static final double RATE = 6;

  /** One H100 of Llama-3.1-8B with one and four LoRA slots, at one rate. */
  private static final String GRID = """
      question: rates
      rates: [6]
      workload: {spec: adapters.yaml}
      grid:
        model: llama-3.1-8b
        max_loras: [1, 4]
      search: {point_duration_s: 40, min_requests: 100, max_requests: 400}
      """;

  /** Requests naming 16 adapters, the first the most popular (Zipf 1). */
  private static final String SPEC = """
      seed: 5
      horizon_s: 60
      clients:
        - id: tenants
          rate: 1
          input: {type: gaussian, mean: 600, std: 100, min: 50, max: 2000}
          output: {type: gaussian, mean: 120, std: 30, min: 10, max: 400}
          adapters: {count: 16, zipf: 1.0}
      """;

  /** A LoRA configuration: two slots, eight adapters in host memory, a slow checkpoint read. */
  private static final String LORA = """
      lora:
        max_loras: 2
        max_cpu_loras: 8
        checkpoint_read_latency_ms: 20
      """;

  @Test
  void slotCountsAreConfigurationsWithTheirOwnKeysAndOneSlotWaitsLonger(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("adapters.yaml"), SPEC);
    SweepGrid grid = SweepGrid.parse(GRID, "lora.yaml", dir);
    assertThat(grid.configs()).extracting(SweepConfig::maxLoras).containsExactly(1, 4);
    assertThat(grid.configs().get(0).key()).endsWith(";scheduler=fcfs;max_loras=1");
    assertThat(grid.configs().get(1).key()).endsWith(";scheduler=fcfs;max_loras=4");
    assertThat(SweepReport.labels(grid.configs()).values()).containsExactly("#0 max_loras=1", "#1 max_loras=4");
    // without a LoRA configuration file: vLLM's defaults for the slot count
    assertThat(grid.deployment().lora(grid.configs().get(1))).isEqualTo(LoraSpec.of(4));

    // the factory turns LoRA on with the configuration's slots (with one slot, batches of one adapter load
    // adapters less often than four slots churning through sixteen adapters, so loads are no measure here)
    LoraReport one = lora(grid, grid.configs().get(0));
    LoraReport four = lora(grid, grid.configs().get(1));
    assertThat(one.maxLoras()).isEqualTo(1);
    assertThat(four.maxLoras()).isEqualTo(4);
    assertThat(one.peakResident()).isEqualTo(1);
    assertThat(one.gpuLoads()).isPositive();
    assertThat(four.gpuLoads()).isPositive();
    // one slot: a step serves one adapter, and requests of the others are passed over until their turn
    assertThat(one.passedOver()).as("requests passed over with 1 slot against 4").isGreaterThan(four.passedOver());

    Sweep.of(grid).threads(2).run(dir.resolve("out"));
    List<String> lines = Files.readAllLines(dir.resolve("out").resolve(Sweep.POINTS));
    assertThat(lines).hasSize(2);
    JsonNode r1 = null;
    JsonNode r4 = null;
    for (String line : lines) {
      JsonNode r = JSON.readTree(line);
      assertThat(r.path("status").asText()).as(line).isEqualTo("ok");
      if (r.path("key").asText().endsWith(";max_loras=1")) {
        r1 = r.path("rates").get(0);
      } else {
        r4 = r.path("rates").get(0);
      }
    }
    assertThat(r1).isNotNull();
    assertThat(r4).isNotNull();
    // hence the longer waits for a first token (8.6 s against 0.47 s when written)
    assertThat(r1.path("ttft_mean_ms").asDouble()).as("mean TTFT with 1 slot against 4")
        .isGreaterThan(r4.path("ttft_mean_ms").asDouble());
    String csv = Files.readString(dir.resolve("out").resolve(Sweep.CSV));
    assertThat(csv).contains(";max_loras=1,").contains(";max_loras=4,");
    assertThat(Files.readString(dir.resolve("out").resolve(Sweep.REPORT))).contains("max_loras=1")
        .contains("LoRA adapters");
  }

  @Test
  void withoutLoraKeysAndFingerprintsAreThoseOfBefore(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("adapters.yaml"), SPEC);
    SweepGrid off = SweepGrid.parse(GRID.replace("  max_loras: [1, 4]\n", ""), "off.yaml", dir);
    SweepConfig c = off.configs().get(0);
    assertThat(c.maxLoras()).isZero();
    assertThat(c.lora()).isFalse();
    assertThat(c.key()).doesNotContain("max_loras");
    assertThat(c).isEqualTo(new SweepConfig(c.model(), c.gpu(), 1, 1, 1, false, 1, 256, 2048, "round-robin", "fcfs",
        0, 0, "never"));
    assertThat(off.deployment().lora(c)).isNull();
    assertThat(off.fingerprintText()).doesNotContain("lora");
    assertThat(SweepReport.lora(c)).isEqualTo("max_loras=off");
  }

  @Test
  void aLoraConfigurationFileTurnsLoraOnForEveryConfigurationAtItsSlotsUnlessTheGridGivesThem(@TempDir Path dir)
      throws Exception {
    Files.writeString(dir.resolve("adapters.yaml"), SPEC);
    Files.writeString(dir.resolve("lora-config.yaml"), LORA);
    String withFile = GRID + "deployment: {lora_config: lora-config.yaml}\n";
    // no max_loras anywhere: the file's two slots
    SweepGrid own = SweepGrid.parse(withFile.replace("  max_loras: [1, 4]\n", ""), "own.yaml", dir);
    assertThat(own.configs()).extracting(SweepConfig::maxLoras).containsExactly(2);
    assertThat(own.configs().get(0).key()).endsWith(";max_loras=2");
    LoraSpec spec = own.deployment().lora(own.configs().get(0));
    assertThat(spec.maxLoras()).isEqualTo(2);
    assertThat(spec.maxCpuLoras()).isEqualTo(8);
    assertThat(spec.diskLatencyUs()).isEqualTo(20_000);
    assertThat(own.fingerprintText()).contains("lora_config=file sha256:");

    // an axis and a point replace the file's slot count, keeping its other settings
    SweepGrid axis = SweepGrid.parse(withFile + "points:\n  - {model: llama-3.1-8b, tp: 2}\n", "axis.yaml", dir);
    assertThat(axis.configs()).extracting(SweepConfig::maxLoras).containsExactly(1, 4, 2);
    assertThat(axis.deployment().lora(axis.configs().get(1)).maxCpuLoras()).isEqualTo(8);
    assertThat(axis.deployment().lora(axis.configs().get(1)).diskLatencyUs()).isEqualTo(20_000);
    // the file's contents are part of the fingerprint: its records are not reused for other settings
    String before = axis.fingerprint();
    Files.writeString(dir.resolve("lora-config.yaml"), LORA.replace("20", "30"));
    assertThat(SweepGrid.parse(withFile, "axis.yaml", dir).fingerprint()).isNotEqualTo(before);
  }

  @Test
  void badSlotCountsAndFilesAreOneLine(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("adapters.yaml"), SPEC);
    assertThatThrownBy(() -> SweepGrid.parse(GRID.replace("[1, 4]", "[1, 0]"), "lora.yaml", dir))
        .hasMessage("lora.yaml:6:18: grid.max_loras[1]: must be a whole number in [1, 1000000] (LoRA GPU slots per"
            + " instance; leave max_loras out for no LoRA), got 0");
    assertThatThrownBy(() -> SweepGrid.parse(GRID + "points:\n  - {model: llama-3.1-8b, max_loras: -2}\n",
        "lora.yaml", dir)).hasMessageContaining("points[0].max_loras: must be a whole number in [1, 1000000]")
        .hasMessageContaining("got -2");
    assertThatThrownBy(() -> SweepGrid.parse(GRID.replace("[1, 4]", "[1, 1]"), "lora.yaml", dir))
        .hasMessageContaining("grid.max_loras lists 1 twice");
    assertThatThrownBy(() -> SweepGrid.parse(GRID + "deployment: {lora_config: missing.yaml}\n", "lora.yaml", dir))
        .hasMessage("lora.yaml:8:14: deployment.lora_config: " + dir.resolve("missing.yaml")
            + ": cannot read LoRA configuration: no such file");
    Files.writeString(dir.resolve("no-slots.yaml"), "lora:\n  max_cpu_loras: 8\n");
    assertThatThrownBy(() -> SweepGrid.parse(GRID + "deployment: {lora_config: no-slots.yaml}\n", "lora.yaml", dir))
        .hasMessageContaining("deployment.lora_config: ").hasMessageContaining("give max_loras");
    // a slot count above the host memory's adapters the file sets: vLLM refuses it
    Files.writeString(dir.resolve("lora-config.yaml"), LORA);
    assertThatThrownBy(() -> SweepGrid.parse(GRID.replace("[1, 4]", "[4, 16]")
        + "deployment: {lora_config: lora-config.yaml}\n", "lora.yaml", dir))
        .hasMessageContaining("grid.max_loras[1]: 16 exceeds max_cpu_loras 8 of deployment.lora_config");
    assertThatThrownBy(() -> new SweepConfig("m", "g", 1, 1, 1, false, 1, 1, 1, "r", "s", 0, 0, "never", -1))
        .hasMessageContaining("max_loras must be in [1, 1000000], or 0 for no LoRA, got -1");
  }

  /** One simulation of a configuration as the sweep builds it, at the grid's rate; its LoRA section. */
  private static LoraReport lora(SweepGrid grid, SweepConfig c) {
    try (RequestSource source = grid.workload().at(RATE, 40)) {
      SimulationResult r = grid.deployment().factory(c).builder(0, null).source(source).build().run();
      return r.lora().orElseThrow();
    }
  }
}
