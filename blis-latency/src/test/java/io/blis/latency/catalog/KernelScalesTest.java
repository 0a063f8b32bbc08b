package io.blis.latency.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Per-GPU kernel scales: what the efficiency table changes, and that the anchor GPU is untouched. */
class KernelScalesTest {

  @TempDir Path dir;

  @Test
  void theAnchorGpuAndAGpuWithoutAnEntryScaleByExactlyOne() {
    assertThat(KernelScales.of(GpuCatalog.byName("H100"), 4, 8192)).isSameAs(KernelScales.ONE);
    GpuSpec bare = new GpuSpec("X", 100e12, 0, 1e12, 80L << 30, 100e9);
    assertThat(bare.efficiency()).isNull();
    assertThat(KernelScales.of(bare, 8, 4096)).isSameAs(KernelScales.ONE);
  }

  @Test
  void theA100ScalesAreRatiosOfTheTwoMeasuredEntries() {
    GpuEfficiency a = GpuCatalog.measuredEfficiency("H100");
    GpuEfficiency e = GpuCatalog.measuredEfficiency("A100-80GB");
    KernelScales s = KernelScales.of(GpuCatalog.byName("A100-80GB"), 4, 8192);
    assertThat(s.weights()).isEqualTo(a.gemmBandwidthFraction() / e.gemmBandwidthFraction());
    assertThat(s.kv()).isEqualTo(a.decodeAttentionFraction() / e.decodeAttentionFraction());
    assertThat(s.prefillFlops()).isEqualTo(a.gemmFlopsFraction() / e.gemmFlopsFraction());
    assertThat(s.decodeFlops()).isEqualTo(e.decodeGemmCost() / a.decodeGemmCost());
    double layer = (4 * e.gemmFixedUs() + e.elementwiseUsPerKiloHidden() * 8.192)
        / (4 * a.gemmFixedUs() + a.elementwiseUsPerKiloHidden() * 8.192);
    assertThat(s.layer()).isCloseTo(layer, within(1e-12));
    assertThat(s.allReduceLatency()).isEqualTo(e.allReduceFor(4).get().latencyUs() / a.allReduceFor(4).get().latencyUs());
    assertThat(s.allReduceBandwidth()).isEqualTo(
        a.allReduceFor(4).get().busBandwidthFraction() / e.allReduceFor(4).get().busBandwidthFraction());
    // the A100 streams its weights at a smaller share of its datasheet than the H100 does
    assertThat(s.weights()).isGreaterThan(1.05);
    assertThat(s.layer()).isGreaterThan(1.0);
    // TP 1 has no all-reduce
    KernelScales one = KernelScales.of(GpuCatalog.byName("A100-80GB"), 1, 8192);
    assertThat(one.allReduceLatency()).isEqualTo(1.0);
    assertThat(one.allReduceBandwidth()).isEqualTo(1.0);
  }

  @Test
  void estimatesNameTheirSourceAndKeepTheAllReduceOnlyOnTheSameLink() {
    GpuSpec l40s = GpuCatalog.byName("L40S");
    assertThat(l40s.efficiency().measured()).isFalse();
    assertThat(l40s.efficiency().source()).startsWith("estimated from A40: ");
    assertThat(l40s.efficiency().gemmBandwidthFraction())
        .isEqualTo(GpuCatalog.measuredEfficiency("A40").gemmBandwidthFraction());
    assertThat(GpuCatalog.byName("H200").efficiency().allReduce()).isNotEmpty(); // the H100's NVLink board
    assertThat(GpuCatalog.byName("A100-80GB-PCIE").efficiency().allReduce()).isEmpty(); // PCIe, not NVLink
    // without measured all-reduce figures, the latency follows the catalog's link latency (PCIe 5 us
    // against NVLink's 3 us)
    assertThat(KernelScales.of(GpuCatalog.byName("A100-80GB-PCIE"), 2, 4096).allReduceLatency())
        .isCloseTo(5.0 / 3.0, within(1e-12));
    for (String name : GpuCatalog.names()) {
      assertThat(GpuCatalog.byName(name).efficiency()).as(name).isNotNull();
    }
    assertThat(GpuCatalog.measuredEfficiencies()).containsExactly("H100", "A100-80GB", "A40");
    assertThat(GpuCatalog.byName("MI300X").efficiency().basis()).isEqualTo(GpuEfficiency.ASSUMED);
    assertThat(GpuCatalog.byName("B200").efficiency().source()).startsWith("assumed from H100: ");
    assertThat(GpuCatalog.byName("H200").efficiency().basis()).isEqualTo(GpuEfficiency.ESTIMATED);
  }

  @Test
  void aGpuFileCarriesItsEfficiencyAndRoundTrips() throws IOException {
    GpuSpec a100 = GpuCatalog.byName("A100-80GB");
    Path f = dir.resolve("mine.json");
    Files.writeString(f, GpuCatalog.toJson(a100.withEfficiency(a100.efficiency())).toString());
    GpuSpec back = GpuCatalog.fromFile(f);
    assertThat(back.efficiency()).isEqualTo(a100.efficiency());
    assertThat(back.peakFlopsBf16()).isEqualTo(a100.peakFlopsBf16());
    assertThat(KernelScales.of(back, 4, 5120)).isEqualTo(KernelScales.of(a100, 4, 5120));

    Files.writeString(f, "{\"bf16_dense_tflops\": 100, \"hbm_bandwidth_tb_s\": 1, \"memory_gib\": 40,"
        + " \"efficiency\": \"A40\"}");
    assertThat(GpuCatalog.fromFile(f).efficiency().source()).startsWith("estimated from A40: its measured entry");
    Files.writeString(f, "{\"bf16_dense_tflops\": 100, \"hbm_bandwidth_tb_s\": 1, \"memory_gib\": 40,"
        + " \"efficiency\": {\"from\": \"H100\", \"source\": \"my reasons\"}}");
    assertThat(GpuCatalog.fromFile(f).efficiency().source()).isEqualTo("estimated from H100: my reasons");
  }

  @Test
  void badEfficiencyEntriesNameTheFileAndTheKey() throws IOException {
    Path f = dir.resolve("bad.json");
    String head = "{\"bf16_dense_tflops\": 100, \"hbm_bandwidth_tb_s\": 1, \"memory_gib\": 40, \"efficiency\": ";
    Files.writeString(f, head + "\"B300\"}");
    assertThatThrownBy(() -> GpuCatalog.fromFile(f))
        .hasMessageContaining("bad.json: efficiency: no measured efficiency entry 'B300' (measured: H100, A100-80GB, A40)");
    Files.writeString(f, head + "{\"from\": \"H100\", \"sauce\": \"x\"}}");
    assertThatThrownBy(() -> GpuCatalog.fromFile(f)).hasMessageContaining("bad.json: efficiency: an estimate is")
        .hasMessageContaining("unknown key 'sauce'");
    String entry = GpuCatalog.measuredEfficiency("A40").toJson().toString();
    Files.writeString(f, head + entry.replace("\"gemm_fixed_us\"", "\"gemm_fixd_us\"") + "}");
    assertThatThrownBy(() -> GpuCatalog.fromFile(f)).hasMessageContaining("bad.json: efficiency: unknown efficiency key 'gemm_fixd_us'");
    // a key with a line break in it (a JSON escape) is shown escaped: the message stays one line
    Files.writeString(f, head + entry.replace("\"gemm_fixed_us\"", "\"gemm_fixed\\n_us\"") + "}");
    assertThatThrownBy(() -> GpuCatalog.fromFile(f)).hasMessageContaining("unknown efficiency key 'gemm_fixed\\u000A_us'")
        .hasMessageNotContaining("\n");
    Files.writeString(f, head + "{\"from\": \"H100\", \"sau\\nce\": \"x\"}}");
    assertThatThrownBy(() -> GpuCatalog.fromFile(f)).hasMessageContaining("unknown key 'sau\\u000Ace'")
        .hasMessageNotContaining("\n");
    // the file's own GPU name, in a datasheet error
    Files.writeString(f, "{\"name\": \"X\\n1\", \"bf16_dense_tflops\": 100, \"hbm_bandwidth_tb_s\": 1,"
        + " \"memory_gib\": 40, \"gpus_per_node\": 0}");
    assertThatThrownBy(() -> GpuCatalog.fromFile(f)).hasMessageContaining("bad.json: X\\u000A1: gpus_per_node must be >= 1")
        .hasMessageNotContaining("\n");
    Files.writeString(f, head + entry.replace("\"gemm_bandwidth_fraction\":0.7879", "\"gemm_bandwidth_fraction\":7.879") + "}");
    assertThatThrownBy(() -> GpuCatalog.fromFile(f))
        .hasMessageContaining("bad.json: efficiency: gemm_bandwidth_fraction must be a share of the datasheet peak in (0, 1.5], got 7.879");
  }
}
