package io.blis.latency.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GpuCatalogTest {

  @TempDir Path dir;

  @Test
  void bundlesTheThreeGroundTruthGpusWithDenseRates() {
    assertThat(GpuCatalog.names()).containsExactly("H100", "A100-80GB", "L40S");
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
  void aliasesAreCaseInsensitive() {
    assertThat(GpuCatalog.byName("h100-sxm").name()).isEqualTo("H100");
    assertThat(GpuCatalog.byName("A100").name()).isEqualTo("A100-80GB");
    assertThat(GpuCatalog.byName("a100-80").name()).isEqualTo("A100-80GB");
  }

  @Test
  void unknownGpuListsNames() {
    assertThatThrownBy(() -> GpuCatalog.byName("B200"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unknown GPU 'B200'")
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
}
