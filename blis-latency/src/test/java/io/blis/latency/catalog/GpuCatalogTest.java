package io.blis.latency.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.blis.api.HardwareSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class GpuCatalogTest {

  @TempDir Path dir;

  @Test
  void bundlesTheThreeGroundTruthGpusWithDenseRates() {
    assertThat(GpuCatalog.names()).startsWith("H100", "A100-80GB", "L40S")
        .contains("H100-PCIE", "H100-NVL", "H200", "A100-40GB", "A100-80GB-PCIE", "A40", "B200", "MI300X");
    GpuSpec h100 = GpuCatalog.byName("H100");
    assertThat(h100.peakFlopsBf16()).isEqualTo(989.4e12); // dense, not the 1979 sparse figure
    assertThat(h100.peakFlopsFp8()).isEqualTo(1979e12);
    assertThat(h100.memoryBandwidthBytesPerS()).isEqualTo(3.35e12);
    assertThat(h100.memoryBytes() / Math.pow(2, 30)).isCloseTo(79.19, within(0.01));
    assertThat(GpuCatalog.byName("A100-80GB").peakFlopsFp8()).isZero();
    assertThat(GpuCatalog.byName("L40S").peakFlopsFp8()).isEqualTo(733e12); // not 1466 sparse
    assertThat(GpuCatalog.byName("L40S").interconnectBandwidthBytesPerS())
        .isLessThan(h100.interconnectBandwidthBytesPerS());
  }

  @Test
  void bundledGpusCarryTheirNodeAndNetwork() {
    GpuSpec h100 = GpuCatalog.byName("H100");
    assertThat(h100.gpusPerNode()).isEqualTo(8);
    assertThat(h100.interNodeBandwidthBytesPerS()).isEqualTo(50e9); // one 400 Gb/s NIC per GPU
    assertThat(h100.interconnectLatencyS()).isEqualTo(3e-6);
    assertThat(h100.interNodeLatencyS()).isEqualTo(10e-6);
    assertThat(GpuCatalog.byName("A100-80GB").interNodeBandwidthBytesPerS()).isEqualTo(25e9); // HDR
    assertThat(GpuCatalog.byName("L40S").interconnectLatencyS()).isEqualTo(5e-6); // PCIe
    for (String name : GpuCatalog.names()) {
      assertThat(GpuCatalog.byName(name).gpusPerNode()).as(name).isEqualTo(8);
    }
  }

  @Test
  void aliasesAreCaseInsensitive() {
    assertThat(GpuCatalog.byName("h100-sxm").name()).isEqualTo("H100");
    assertThat(GpuCatalog.byName("A100").name()).isEqualTo("A100-80GB");
    assertThat(GpuCatalog.byName("a100-80").name()).isEqualTo("A100-80GB");
  }

  @Test
  void deviceDescriptionsNameTheVariantTheyDescribe() {
    assertThat(GpuCatalog.describedBy("NVIDIA H100 80GB HBM3 (SXM)")).get().extracting(GpuSpec::name).isEqualTo("H100");
    assertThat(GpuCatalog.describedBy("NVIDIA H100 PCIe")).get().extracting(GpuSpec::name).isEqualTo("H100-PCIE");
    assertThat(GpuCatalog.describedBy("NVIDIA H100 NVL")).get().extracting(GpuSpec::name).isEqualTo("H100-NVL");
    assertThat(GpuCatalog.describedBy("NVIDIA A100-SXM4-80GB")).get().extracting(GpuSpec::name).isEqualTo("A100-80GB");
    assertThat(GpuCatalog.describedBy("NVIDIA A100-SXM4-40GB")).get().extracting(GpuSpec::name).isEqualTo("A100-40GB");
    assertThat(GpuCatalog.describedBy("NVIDIA A100 80GB PCIe")).get().extracting(GpuSpec::name)
        .isEqualTo("A100-80GB-PCIE");
    assertThat(GpuCatalog.describedBy("NVIDIA L40S")).get().extracting(GpuSpec::name).isEqualTo("L40S");
    assertThat(GpuCatalog.describedBy("NVIDIA H200")).get().extracting(GpuSpec::name).isEqualTo("H200");
    // Not bundled, or a variant the catalog does not have: nothing, rather than a near miss.
    assertThat(GpuCatalog.describedBy("NVIDIA L40")).isEmpty();
    assertThat(GpuCatalog.describedBy("NVIDIA B200")).get().extracting(GpuSpec::name).isEqualTo("B200");
    assertThat(GpuCatalog.describedBy("NVIDIA B100")).isEmpty();
    assertThat(GpuCatalog.describedBy("NVIDIA A100 40GB PCIe")).isEmpty();
    assertThat(GpuCatalog.describedBy("H100 SXM 94GB")).isEmpty();
    assertThat(GpuCatalog.resolve("NVIDIA A100-SXM4-40GB").memoryBandwidthBytesPerS()).isEqualTo(1.555e12);
  }

  @Test
  void readsOneEntryOfAFileOfSeveralGpus() throws IOException {
    Path f = dir.resolve("gpu_specs.json");
    Files.writeString(f, """
        {"_note": "like the ground truth's gpu_specs.json",
         "A100_SXM_80GB": {"bf16_dense_tflops": 312, "fp8_dense_tflops": null, "hbm_bandwidth_tb_s": 2.039,
                           "memory_gb": 80, "nvlink_bandwidth_gb_s": 600},
         "L40S_48GB": {"bf16_dense_tflops": 362.05, "hbm_bandwidth_tb_s": 0.864, "memory_gib": 44.53,
                       "nvlink_bandwidth_gb_s": null}}
        """);
    GpuSpec a100 = GpuCatalog.resolve(f + "#A100_SXM_80GB");
    assertThat(a100.name()).isEqualTo("A100_SXM_80GB");
    assertThat(a100.peakFlopsFp8()).isZero();
    assertThat(a100.interconnectBandwidthBytesPerS()).isEqualTo(300e9);
    assertThat(a100.memoryBytes()).isEqualTo((long) (80 * 0.99 * Math.pow(2, 30)));
    assertThat(GpuCatalog.fromFileEntry(f, "L40S_48GB").interconnectBandwidthBytesPerS()).isEqualTo(32e9);
    assertThatThrownBy(() -> GpuCatalog.resolve(f + "#H100"))
        .hasMessageContaining(f.toString())
        .hasMessageContaining("no GPU entry 'H100' (entries: A100_SXM_80GB, L40S_48GB)");
  }

  @Test
  void readsGoBlisHardwareConfigEntries() throws IOException {
    Path f = dir.resolve("hardware_config.json");
    java.nio.file.Files.writeString(f, """
        {"H100": {"TFlopsPeak": 989.5, "TFlopsFP8": 1979.0, "BwPeakTBs": 3.35, "mfuPrefill": 0.45,
                  "mfuDecode": 0.30, "MemoryGiB": 80},
         "L40": {"TFlopsPeak": 181.0, "BwPeakTBs": 0.864, "MemoryGiB": 48}}
        """);
    GpuSpec h = GpuCatalog.resolve(f + "#H100");
    assertThat(h.name()).isEqualTo("H100");
    assertThat(h.peakFlopsBf16()).isEqualTo(989.5e12);
    assertThat(h.peakFlopsFp8()).isEqualTo(1979e12);
    assertThat(h.memoryBandwidthBytesPerS()).isEqualTo(3.35e12);
    assertThat(h.memoryBytes()).isEqualTo(80L << 30);
    // Go BLIS has no link figure: the bundled H100's NVLink; an unknown GPU gets PCIe Gen4
    assertThat(h.interconnectBandwidthBytesPerS()).isEqualTo(450e9);
    assertThat(GpuCatalog.resolve(f + "#L40").interconnectBandwidthBytesPerS()).isEqualTo(32e9);
    // nor node figures: the bundled GPU's, else the HardwareSpec defaults
    GpuSpec bundled = GpuCatalog.byName("H100");
    assertThat(List.of(h.gpusPerNode(), h.interNodeBandwidthBytesPerS(), h.interconnectLatencyS(),
        h.interNodeLatencyS())).isEqualTo(List.of(bundled.gpusPerNode(),
            bundled.interNodeBandwidthBytesPerS(), bundled.interconnectLatencyS(),
            bundled.interNodeLatencyS()));
    assertThat(GpuCatalog.resolve(f + "#L40").interconnectLatencyS()).isEqualTo(3e-6);
    java.nio.file.Files.writeString(f, "{\"H100\": {\"BwPeakTBs\": 3.35, \"MemoryGiB\": 80}}");
    assertThatThrownBy(() -> GpuCatalog.resolve(f + "#H100"))
        .hasMessage(f + "#H100: missing required field 'bf16_dense_tflops' (Go BLIS's TFlopsPeak)");
  }

  @Test
  void unknownGpuListsNames() {
    assertThatThrownBy(() -> GpuCatalog.byName("B300"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unknown GPU 'B300'")
        .hasMessageContaining("H100")
        .hasMessageContaining("L40S");
  }

  @Test
  void readsAUserGpuFile() throws IOException {
    Path f = dir.resolve("h200.json");
    Files.writeString(f, """
        {"name": "H200", "bf16_dense_tflops": 989.4, "fp8_dense_tflops": 1979,
         "hbm_bandwidth_tb_s": 4.8, "memory_gib": 139.8, "nvlink_bandwidth_gb_s": 900}
        """);
    GpuSpec g = GpuCatalog.fromFile(f);
    assertThat(g.name()).isEqualTo("H200");
    assertThat(g.memoryBandwidthBytesPerS()).isEqualTo(4.8e12);
    assertThat(g.interconnectBandwidthBytesPerS()).isEqualTo(450e9);
    assertThat(g.memoryBytes()).isEqualTo((long) (139.8 * Math.pow(2, 30)));
  }

  @Test
  void userGpuFileNodeFiguresRoundTrip() throws IOException {
    Path f = dir.resolve("pod.json");
    Files.writeString(f, """
        {"bf16_dense_tflops": 100, "hbm_bandwidth_tb_s": 1, "memory_gib": 10, "interconnect_gb_s": 64,
         "gpus_per_node": 4, "inter_node_gb_s": 12.5, "interconnect_latency_us": 5,
         "inter_node_latency_us": 0}
        """);
    GpuSpec g = GpuCatalog.fromFile(f);
    assertThat(g.gpusPerNode()).isEqualTo(4);
    assertThat(g.interNodeBandwidthBytesPerS()).isEqualTo(12.5e9);
    assertThat(g.interconnectLatencyS()).isEqualTo(5e-6);
    assertThat(g.interNodeLatencyS()).isZero();
  }

  @Test
  void absentNodeFiguresAreTheHardwareSpecDefaults() throws IOException {
    Path f = dir.resolve("plain.json");
    Files.writeString(f, "{\"bf16_dense_tflops\": 100, \"hbm_bandwidth_tb_s\": 1, \"memory_gib\": 10}");
    GpuSpec g = GpuCatalog.fromFile(f);
    HardwareSpec defaults = GpuSpec.NODE_DEFAULTS;
    assertThat(g.gpusPerNode()).isEqualTo(defaults.gpusPerNode()).isEqualTo(8);
    assertThat(g.interNodeBandwidthBytesPerS()).isEqualTo(defaults.interNodeBandwidthBytesPerS()).isEqualTo(50e9);
    assertThat(g.interconnectLatencyS()).isEqualTo(defaults.interconnectLatencyS()).isEqualTo(3e-6);
    assertThat(g.interNodeLatencyS()).isEqualTo(defaults.interNodeLatencyS()).isEqualTo(10e-6);
    // the six-argument constructor fills the same defaults
    assertThat(new GpuSpec("x", 1e12, 0, 1e12, 1L << 30, 1e9))
        .isEqualTo(new GpuSpec("x", 1e12, 0, 1e12, 1L << 30, 1e9, 8, 50e9, 3e-6, 10e-6));
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "gpus_per_node         | -1     | field 'gpus_per_node' must not be negative, got -1",
      "gpus_per_node         | 0      | gpus_per_node must be >= 1, got 0",
      "gpus_per_node         | 2.5    | field 'gpus_per_node' must be an integer, got 2.5",
      "gpus_per_node         | \"8\"  | field 'gpus_per_node' must be an integer, got \"8\"",
      "inter_node_gb_s       | -50    | inter_node_gb_s must be a finite number > 0, got -5.0E10",
      "inter_node_gb_s       | \"50\" | field 'inter_node_gb_s' must be a number, got \"50\"",
      "interconnect_latency_us | -3   | interconnect_latency_us must be a finite number >= 0, got -3.0E-6 s",
      "inter_node_latency_us | \"x\"  | field 'inter_node_latency_us' must be a number, got \"x\"",
  })
  void badNodeFigureNamesFileAndKey(String key, String value, String message) throws IOException {
    Path f = dir.resolve("bad-node.json");
    Files.writeString(f, "{\"bf16_dense_tflops\": 100, \"hbm_bandwidth_tb_s\": 1, \"memory_gib\": 10, \""
        + key + "\": " + value + "}");
    assertThatThrownBy(() -> GpuCatalog.fromFile(f))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith(f.toString())
        .hasMessageEndingWith(message);
  }

  @Test
  void resolveAcceptsAFileOrAName() throws IOException {
    Path f = dir.resolve("mine.json");
    Files.writeString(f, "{\"bf16_dense_tflops\": 100, \"hbm_bandwidth_tb_s\": 1, \"memory_gib\": 10}");
    assertThat(GpuCatalog.resolve(f.toString()).name()).isEqualTo("mine");
    assertThat(GpuCatalog.resolve(f.toString()).interconnectBandwidthBytesPerS()).isEqualTo(32e9);
    assertThat(GpuCatalog.resolve("h100").name()).isEqualTo("H100");
  }

  @Test
  void userGpuFileErrorsNameFileAndField() throws IOException {
    Path f = dir.resolve("bad.json");
    Files.writeString(f, "{\"bf16_dense_tflops\": 100, \"memory_gib\": 10}");
    assertThatThrownBy(() -> GpuCatalog.fromFile(f))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(f.toString())
        .hasMessageContaining("hbm_bandwidth_tb_s");
    Path g = dir.resolve("neg.json");
    Files.writeString(g, "{\"bf16_dense_tflops\": -1, \"hbm_bandwidth_tb_s\": 1, \"memory_gib\": 10}");
    assertThatThrownBy(() -> GpuCatalog.fromFile(g))
        .hasMessageContaining(g.toString())
        .hasMessageContaining("bf16_dense_tflops must be a finite number > 0");
  }

  @Test
  void quantizedWeightsComputeAtTheRateOfTheirGemmInputs() {
    io.blis.api.HardwareSpec h100 = GpuCatalog.resolve("H100");
    io.blis.api.HardwareSpec a100 = GpuCatalog.resolve("A100-80GB");
    org.assertj.core.api.Assertions.assertThat(GpuSpec.peakFlopsFor(h100, 1.0)).as("FP8 W8A8").isEqualTo(h100.peakFlopsFp8());
    org.assertj.core.api.Assertions.assertThat(GpuSpec.peakFlopsFor(h100, 0.5)).as("W4A16 widens to bf16")
        .isEqualTo(h100.peakFlopsBf16());
    org.assertj.core.api.Assertions.assertThat(GpuSpec.peakFlopsFor(h100, 2.0)).isEqualTo(h100.peakFlopsBf16());
    org.assertj.core.api.Assertions.assertThat(GpuSpec.peakFlopsFor(a100, 1.0)).as("no fp8 tensor cores")
        .isEqualTo(a100.peakFlopsBf16());
  }
}
