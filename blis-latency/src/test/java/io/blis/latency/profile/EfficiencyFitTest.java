package io.blis.latency.profile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.blis.latency.catalog.GpuCatalog;
import io.blis.latency.catalog.GpuEfficiency;
import io.blis.latency.catalog.GpuSpec;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The efficiency fit recovers what synthetic timings were made from, and the bundled entry of the
 * A100 is what the shipped A100 profiles give.
 */
class EfficiencyFitTest {

  @TempDir Path dir;

  /** A GPU of round numbers: 100 TFLOP/s, 1 TB/s, a 100 GB/s link. */
  static final GpuSpec ROUND = new GpuSpec("ROUND", 100e12, 0, 1e12, 80L << 30, 100e9);

  // what the synthetic timings are made of
  static final double FIXED_US = 5.0;
  static final double BANDWIDTH = 0.8;
  static final double FLOPS = 0.7;
  static final double DECODE_COST = 0.5;
  static final double EW_PER_KHIDDEN = 4.0;
  static final double ATTENTION = 0.6;

  /** A streaming GEMM's time at up to 16 tokens: its fixed time and its bytes at the share. */
  static double streamingUs(int tokens, long k, long n) {
    double bytes = 2.0 * (k * n + (double) tokens * k + (double) tokens * n);
    return FIXED_US + bytes / (ROUND.memoryBandwidthBytesPerS() / 1e6) / BANDWIDTH;
  }

  /** FLOPs of a GEMM at the peak rate, us. */
  static double flopsUs(int tokens, long k, long n) {
    return 2.0 * tokens * k * n / (ROUND.peakFlopsBf16() / 1e6);
  }

  private Path syntheticProfile() throws IOException {
    StringBuilder sb = new StringBuilder("kind,tokens,k,n,hidden,gpus,bytes,batch,context,kv_heads,head_dim,time_us\n");
    // streaming shapes: two token counts each (too few for the decode slope) and prefill sizes
    long[][] streaming = {{4096, 12288}, {4096, 4096}, {4096, 22016}, {11008, 4096}, {8192, 10240}};
    for (long[] s : streaming) {
      for (int t : new int[] {1, 16}) {
        sb.append(String.format(Locale.ROOT, "gemm,%d,%d,%d,,,,,,,,%.9f%n", t, s[0], s[1], streamingUs(t, s[0], s[1])));
      }
      for (int t : new int[] {2048, 4096}) {
        sb.append(String.format(Locale.ROOT, "gemm,%d,%d,%d,,,,,,,,%.9f%n", t, s[0], s[1], flopsUs(t, s[0], s[1]) / FLOPS));
      }
    }
    // decode shapes: three token counts from 32, the time growing by the decode cost per FLOP
    long[][] decode = {{5120, 5120}, {5120, 13824}, {13824, 5120}};
    for (long[] s : decode) {
      for (int t : new int[] {32, 64, 128}) {
        sb.append(String.format(Locale.ROOT, "gemm,%d,%d,%d,,,,,,,,%.9f%n", t, s[0], s[1],
            40 + DECODE_COST * flopsUs(t, s[0], s[1])));
      }
    }
    for (int h : new int[] {2048, 4096, 8192}) {
      sb.append(String.format(Locale.ROOT, "elementwise,16,,,%d,,,,,,,%.9f%n", h, EW_PER_KHIDDEN * h / 1000.0));
    }
    // all-reduce over 4: 30 us up to 1 MiB, then 30 us + bytes / algorithm bandwidth
    double busFraction = 0.75;
    double algBytesPerUs = busFraction * 100e9 / 1e6 / (2.0 * 3 / 4);
    for (long b : new long[] {1024, 65536, 1 << 20}) {
      sb.append(String.format(Locale.ROOT, "allreduce,,,,,4,%d,,,,,30%n", b));
    }
    for (long b : new long[] {16L << 20, 32L << 20, 64L << 20}) {
      sb.append(String.format(Locale.ROOT, "allreduce,,,,,4,%d,,,,,%.9f%n", b, 30 + b / algBytesPerUs));
    }
    for (int ctx : new int[] {512, 1024, 4096}) {
      double bytes = 2.0 * 2 * 64 * ctx * 8 * 128;
      sb.append(String.format(Locale.ROOT, "decode_attention,,,,,,,64,%d,8,128,%.9f%n", ctx,
          10 + bytes / (ROUND.memoryBandwidthBytesPerS() / 1e6) / ATTENTION));
    }
    Path f = dir.resolve("timings.csv");
    Files.writeString(f, sb);
    return f;
  }

  @Test
  void recoversEveryFigureTheTimingsWereMadeFrom() throws IOException {
    GpuEfficiency e = EfficiencyFit.fit(KernelProfile.read(List.of(syntheticProfile())), ROUND, "synthetic");
    assertThat(e.basis()).isEqualTo(GpuEfficiency.MEASURED);
    assertThat(e.source()).startsWith("synthetic (");
    assertThat(e.gemmBandwidthFraction()).isCloseTo(BANDWIDTH, within(1e-3));
    assertThat(e.gemmFixedUs()).isCloseTo(FIXED_US, within(1e-2));
    assertThat(e.gemmFlopsFraction()).isCloseTo(FLOPS, within(1e-3));
    assertThat(e.decodeGemmCost()).isCloseTo(DECODE_COST, within(1e-3));
    assertThat(e.elementwiseUsPerKiloHidden()).isCloseTo(EW_PER_KHIDDEN, within(1e-3));
    assertThat(e.decodeAttentionFraction()).isCloseTo(ATTENTION, within(1e-3));
    assertThat(e.decodeAttentionSource()).startsWith("measured: 3 decode-attention timings (fixed 10.0 us");
    assertThat(e.allReduce()).singleElement().satisfies(a -> {
      assertThat(a.gpus()).isEqualTo(4);
      assertThat(a.latencyUs()).isEqualTo(30.0);
      assertThat(a.busBandwidthFraction()).isCloseTo(0.75, within(1e-3));
    });
  }

  @Test
  void theSameFilesGiveTheSameEntry() throws IOException {
    Path f = syntheticProfile();
    GpuEfficiency a = EfficiencyFit.fit(KernelProfile.read(List.of(f)), ROUND, "s");
    GpuEfficiency b = EfficiencyFit.fit(KernelProfile.read(List.of(f)), ROUND, "s");
    assertThat(a).isEqualTo(b);
    assertThat(a.toJson().toString()).isEqualTo(b.toJson().toString());
  }

  @Test
  void withoutAttentionTimingsAttentionStreamsLikeTheGemms() throws IOException {
    Path f = syntheticProfile();
    List<String> lines = Files.readAllLines(f).stream().filter(l -> !l.startsWith("decode_attention")).toList();
    Files.write(f, lines);
    GpuEfficiency e = EfficiencyFit.fit(KernelProfile.read(List.of(f)), ROUND, "s");
    assertThat(e.decodeAttentionFraction()).isEqualTo(e.gemmBandwidthFraction());
    assertThat(e.decodeAttentionSource()).contains("no decode-attention timings");
  }

  static Path resource(String name) {
    try {
      return Path.of(EfficiencyFitTest.class.getResource(name).toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * The shipped A100 profiles (trimmed to the rows the fit uses by scripts/trim-kernel-profiles.py)
   * give the bundled A100 entry, figure for figure: the table is what its script says.
   */
  @Test
  void theShippedA100ProfilesGiveTheBundledA100Entry() {
    Path a100 = resource("a100");
    GpuSpec gpu = GpuCatalog.byName("A100-80GB");
    GpuEfficiency fitted = EfficiencyFit.fit(KernelProfile.read(List.of(a100)), gpu, "test");
    GpuEfficiency bundled = GpuCatalog.measuredEfficiency("A100-80GB");
    assertThat(fitted.as(bundled.basis(), bundled.source())).isEqualTo(bundled);
    assertThat(bundled.gemmBandwidthFraction()).isBetween(0.75, 0.82);
    assertThat(GpuCatalog.measuredEfficiency("H100").gemmBandwidthFraction()).isBetween(0.85, 0.95);
  }

  @Test
  void badTimingsNameTheFileLineAndColumn() throws IOException {
    Path f = dir.resolve("bad.csv");
    Files.writeString(f, "kind,tokens,k,n,time_us\ngemm,16,4096,x,12\n");
    assertThatThrownBy(() -> KernelProfile.read(List.of(f)))
        .hasMessageContaining("bad.csv:2: column 'n': expected a whole number, got 'x'");
    Files.writeString(f, "kind,tokens,k,n,time_us\nconv,16,4096,4096,12\n");
    assertThatThrownBy(() -> KernelProfile.read(List.of(f)))
        .hasMessageContaining("bad.csv:2: column 'kind': unknown kind 'conv'");
    Files.writeString(f, "kind,tokens,k,n,time_us\ngemm,16,4096,4096,-1\n");
    assertThatThrownBy(() -> KernelProfile.read(List.of(f)))
        .hasMessageContaining("bad.csv:2: column 'time_us': expected a time > 0, got '-1'");
    Files.writeString(f, "kind,tokens,k,time_us\ngemm,16,4096,12\n");
    assertThatThrownBy(() -> KernelProfile.read(List.of(f))).hasMessageContaining("bad.csv:2: missing column 'n'");
    Files.writeString(f, "a,b\n1,2\n");
    assertThatThrownBy(() -> KernelProfile.read(List.of(f))).hasMessageContaining("bad.csv: not a kernel profile");
    assertThatThrownBy(() -> KernelProfile.read(List.of(dir.resolve("nothing"))))
        .hasMessageContaining("nothing: no such file or directory");
  }

  @Test
  void tooFewTimingsSayWhatIsMissing() throws IOException {
    Path f = dir.resolve("few.csv");
    Files.writeString(f, "kind,tokens,k,n,time_us\ngemm,16,4096,4096,40\n");
    assertThatThrownBy(() -> EfficiencyFit.fit(KernelProfile.read(List.of(f)), ROUND, "s"))
        .hasMessageContaining("needs timings of at least two GEMM shapes at up to 16 tokens");
    Files.writeString(f, "kind,tokens,k,n,time_us\ngemm,16,4096,4096,40\ngemm,16,4096,8192,70\n");
    assertThatThrownBy(() -> EfficiencyFit.fit(KernelProfile.read(List.of(f)), ROUND, "s"))
        .hasMessageContaining("GEMM FLOP share needs GEMM timings at 2048 tokens or more");
  }
}
