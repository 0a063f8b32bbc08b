package io.blis.cli;

import static io.blis.cli.BlisCliTest.blis;
import static org.assertj.core.api.Assertions.assertThat;

import io.blis.latency.catalog.GpuCatalog;
import io.blis.latency.catalog.GpuSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The edges of the input files: {@code gpu-profile --from} CSVs (empty, binary, absurd or falling
 * timings, one GEMM shape, an all-reduce faster than its link), {@code --kv-offload-config}
 * ({@code direct_io: false}, one bandwidth beside a device class), ServeGen data (rates, cv,
 * patterns, lengths, empty and missing traces) and Go BLIS specs' length distributions centred
 * beyond the token limit. Each is refused in one line naming the file and what was expected, or
 * accepted with one line saying what it does.
 */
class EdgesInputFilesCliTest {

  @TempDir Path dir;

  // ------------------------------------------------------------ gpu-profile --from

  private static final GpuSpec A100 = GpuCatalog.byName("A100-80GB");
  private static final String HEADER = "kind,tokens,k,n,hidden,gpus,bytes,time_us\n";

  /** A GEMM at up to 16 tokens streaming its bytes at 0.8 of the A100's HBM, 5 us fixed. */
  private static double streamingUs(int tokens, long k, long n) {
    double bytes = 2.0 * (k * n + (double) tokens * k + (double) tokens * n);
    return 5 + bytes / (A100.memoryBandwidthBytesPerS() / 1e6) / 0.8;
  }

  /** A GEMM at 0.7 of the A100's peak FLOP/s. */
  private static double computeUs(int tokens, long k, long n) {
    return 2.0 * tokens * k * n / (A100.peakFlopsBf16() / 1e6) / 0.7;
  }

  /** Timings the fit takes, of a GPU like the A100; the all-reduces' large messages at {@code busShare} of its link. */
  private static String timings(double busShare) {
    StringBuilder sb = new StringBuilder(HEADER);
    long[][] shapes = {{4096, 12288}, {4096, 4096}, {4096, 22016}, {11008, 4096}};
    for (long[] s : shapes) {
      for (int t : new int[] {1, 16}) {
        sb.append(String.format(Locale.ROOT, "gemm,%d,%d,%d,,,,%.4f%n", t, s[0], s[1], streamingUs(t, s[0], s[1])));
      }
      sb.append(String.format(Locale.ROOT, "gemm,4096,%d,%d,,,,%.4f%n", s[0], s[1], computeUs(4096, s[0], s[1])));
    }
    for (int t : new int[] {32, 64, 128}) {
      sb.append(String.format(Locale.ROOT, "gemm,%d,5120,5120,,,,%.4f%n", t, 40 + 0.5 * computeUs(t, 5120, 5120)));
    }
    sb.append("elementwise,16,,,4096,,,17.0\n");
    double algBytesPerUs = busShare * A100.interconnectBandwidthBytesPerS() / 1e6 / (2.0 * 3 / 4);
    sb.append("allreduce,,,,,4,65536,30\n");
    for (long b : new long[] {16L << 20, 32L << 20}) {
      sb.append(String.format(Locale.ROOT, "allreduce,,,,,4,%d,%.4f%n", b, 30 + b / algBytesPerUs));
    }
    return sb.toString();
  }

  private BlisCliTest.Outcome gpuProfile(Path from) {
    return blis("gpu-profile", "--from", from.toString(), "--gpu", "A100-80GB");
  }

  private Path file(String name, String text) throws Exception {
    return Files.writeString(dir.resolve(name), text);
  }

  @Test
  void theSyntheticTimingsFit() throws Exception {
    BlisCliTest.Outcome o = gpuProfile(file("t.csv", timings(0.75)));
    assertThat(o.code()).as(o.err()).isZero();
    assertThat(o.err()).contains("A100-80GB: GEMM bandwidth 0.800 of peak").contains("bus bandwidth 0.750 of the link");
  }

  @Test
  void anEmptyCsvSaysItIsEmptyAndWhatWasExpected() throws Exception {
    Path empty = file("empty.csv", "");
    BadInputCliTest.refused(gpuProfile(empty), empty + ": the file is empty; expected a header line naming the"
        + " columns (the simple format's kind,tokens,k,n,", "a row per timing (docs/gpu-efficiency.md)");
    assertThat(gpuProfile(empty).err()).doesNotContain("line -1");
    BadInputCliTest.refused(gpuProfile(file("blank.csv", "\n  \n")), "blank.csv: the file is empty; expected");
  }

  @Test
  void anAbsurdTimeNamesTheFileLineAndColumn() throws Exception {
    String t = timings(0.75);
    String absurd = t.replaceFirst("(gemm,1,4096,12288,,,,)[0-9.]+", "$11e300");
    BadInputCliTest.refused(gpuProfile(file("absurd.csv", absurd)), "absurd.csv:2: column 'time_us': expected a time"
        + " in (0, 10000000] microseconds (10 s: no kernel of a profile takes longer; is the unit right?), got '1e300'");
    // Vidur's milliseconds: the same bound in its unit
    Path mlp = Files.createDirectories(dir.resolve("vidur")).resolve("mlp.csv");
    Files.writeString(mlp, "n_head,n_kv_head,n_embd,n_expanded_embd,use_gated_mlp,num_tokens,"
        + "num_tensor_parallel_workers,time_stats.attn_pre_proj.median,time_stats.attn_post_proj.median,"
        + "time_stats.mlp_up_proj.median,time_stats.mlp_down_proj.median\n32,8,4096,14336,true,1,1,0.02,0.01,20000,0.03\n");
    BadInputCliTest.refused(gpuProfile(mlp), "mlp.csv:2: column 'time_stats.mlp_up_proj.median': expected a time in"
        + " (0, 10000] milliseconds", "got '20000'");
  }

  @Test
  void gemmTimesFallingAsTheGemmGrowsNameTheRows() throws Exception {
    // the largest shape's streaming GEMMs take less than the smallest's
    StringBuilder sb = new StringBuilder(HEADER);
    long[][] shapes = {{1024, 1024}, {4096, 4096}, {8192, 8192}};
    for (int i = 0; i < shapes.length; i++) {
      for (int t : new int[] {1, 16}) {
        sb.append(String.format(Locale.ROOT, "gemm,%d,%d,%d,,,,%.1f%n", t, shapes[i][0], shapes[i][1], 300.0 - 100 * i
            + t * 0.1));
      }
    }
    Path f = file("falling.csv", sb.toString());
    BadInputCliTest.refused(gpuProfile(f), "kernel profile: GEMM times at up to 16 tokens do not grow with the GEMM's"
        + " bytes, so no GEMM bandwidth can be fitted: 1024x1024 at 16 tokens takes 301.6 us (" + f + ":3), more than"
        + " 8192x8192 at 1 token, 62.08 times the bytes, 100.1 us (" + f + ":6); check the timings");
  }

  @Test
  void oneGemmShapeSaysTwoAreNeeded() throws Exception {
    // one shape at several token counts: its activations differ, its weights (what the fit measures) do not
    StringBuilder sb = new StringBuilder(HEADER);
    for (int t : new int[] {1, 16, 32, 64, 128}) {
      sb.append(String.format(Locale.ROOT, "gemm,%d,4096,4096,,,,%.4f%n", t, streamingUs(t, 4096, 4096)));
    }
    sb.append(String.format(Locale.ROOT, "gemm,4096,4096,4096,,,,%.4f%n", computeUs(4096, 4096, 4096)));
    sb.append("elementwise,16,,,4096,,,17.0\n");
    BadInputCliTest.refused(gpuProfile(file("one.csv", sb.toString())), "kernel profile: the GEMM bandwidth needs"
        + " timings of at least two GEMM shapes at up to 16 tokens, got one: 4096x4096 (k x n), " + dir.resolve("one.csv")
        + ":2");
  }

  @Test
  void aBinaryFileIsNotACsvTextFileEvenInAFolder() throws Exception {
    Path folder = Files.createDirectories(dir.resolve("profiles"));
    Files.writeString(folder.resolve("timings.csv"), timings(0.75));
    byte[] binary = new byte[64];
    for (int i = 0; i < binary.length; i++) {
      binary[i] = (byte) (i % 3 == 0 ? 0 : 'A' + i % 26); // NUL bytes among letters: valid UTF-8, no CSV
    }
    Files.write(folder.resolve("noise.csv"), binary);
    BadInputCliTest.refused(gpuProfile(folder), folder.resolve("noise.csv") + ": line 1, column 1: not a CSV text"
        + " file: it holds the control character U+0000 (is it a binary file?)");
    BadInputCliTest.refused(gpuProfile(folder.resolve("noise.csv")), "noise.csv: line 1, column 1: not a CSV text file");
  }

  @Test
  void anAllReduceFasterThanItsLinkIsRefusedNamingTheRowsAndTheLink() throws Exception {
    Path f = file("fast.csv", timings(3.0));
    BadInputCliTest.refused(gpuProfile(f), String.format(Locale.ROOT, "kernel profile: the all-reduces over 4 GPUs of"
        + " 16 MiB and more (%s:19, %s:20) give a bus bandwidth of 900.0 GB/s, 3.00 times the A100-80GB link's"
        + " 300.0 GB/s, more than an all-reduce can move (at most 1.5 times is taken as the datasheet's slack)", f, f));
    // within the slack, accepted
    assertThat(gpuProfile(file("ok.csv", timings(1.4))).code()).isZero();
  }

  // ------------------------------------------------------------ --kv-offload-config

  private static final String[] RUN = {"run", "--model", "qwen/qwen3-14b", "--total-kv-blocks", "400",
      "--rate", "20", "--num-requests", "60", "--prefix-tokens", "512", "--kv-offload-config"};

  private BlisCliTest.Outcome offload(String tier) throws Exception {
    Path f = file("offload-" + Integer.toHexString(tier.hashCode()) + ".yaml",
        "kv_offload:\n  cpu_bytes_to_use: 262144000\n  secondary_tiers:\n    - " + tier + "\n");
    String[] args = java.util.Arrays.copyOf(RUN, RUN.length + 1);
    args[RUN.length] = f.toString();
    return blis(args);
  }

  @Test
  void directIoFalseWithADeviceClassWarnsInOneLineThatItHasNoEffect() throws Exception {
    BlisCliTest.Outcome buffered = offload("{type: fs, root_dir: /k, direct_io: false, device_class: nvme_gen4}");
    BlisCliTest.Outcome direct = offload("{type: fs, root_dir: /k, direct_io: true, device_class: nvme_gen4}");
    assertThat(buffered.code()).as(buffered.err()).isZero();
    assertThat(buffered.err().lines().filter(l -> l.startsWith("warning: ")).toList()).singleElement().asString()
        .contains("offload-", ".yaml, line 4, column 43: secondary_tiers[0].direct_io: false has no effect: the tier"
            + " takes its read_bandwidth, write_bandwidth and base_latency from device_class nvme_gen4, whose figures are"
            + " for direct I/O (buffered I/O through the page cache is not modelled)");
    assertThat(direct.err()).doesNotContain("warning: ");
    // no effect: the same results
    assertThat(buffered.out()).isEqualTo(direct.out());
    // with the figures given (measured with buffered I/O), nothing to say
    BlisCliTest.Outcome own = offload("{type: fs, root_dir: /k, direct_io: false, read_bandwidth: 3000.0,"
        + " write_bandwidth: 2000.0, base_latency: 90}");
    assertThat(own.code()).as(own.err()).isZero();
    assertThat(own.err()).doesNotContain("warning: ").doesNotContain("note: ");
  }

  @Test
  void aReadBandwidthWithoutAWriteBandwidthSaysWritesKeepTheDeviceClasss() throws Exception {
    BlisCliTest.Outcome o = offload("{type: fs, root_dir: /k, direct_io: true, device_class: nvme_gen4,"
        + " read_bandwidth: 3000}");
    assertThat(o.code()).as(o.err()).isZero();
    assertThat(o.err().lines().filter(l -> l.startsWith("note: ")).toList()).singleElement().asString()
        .contains(".yaml, line 4, column 90: secondary_tiers[0].read_bandwidth replaces device_class nvme_gen4's"
            + " reads alone: writes keep its 5000 bytes per microsecond (as in Go BLIS); give write_bandwidth too");
    BlisCliTest.Outcome w = offload("{type: fs, root_dir: /k, direct_io: true, device_class: sata_ssd,"
        + " write_bandwidth: 300}");
    assertThat(w.err()).contains("write_bandwidth replaces device_class sata_ssd's writes alone: reads keep its 550"
        + " bytes per microsecond");
    BlisCliTest.Outcome cls = offload("{type: fs, root_dir: /k, direct_io: true, device_class: nvme_gen4}");
    assertThat(cls.err()).doesNotContain("note: ");
  }

  // ------------------------------------------------------------ ServeGen data

  private static final String DATASET = "{\"0\": {\"input_tokens\": \"{100: 0.3, 300: 0.5, 900: 0.2}\","
      + " \"output_tokens\": \"{40: 0.6, 160: 0.4}\"}}";

  private Path serveGen(String trace, String dataset) throws Exception {
    Path d = Files.createDirectories(dir.resolve("sg-" + Integer.toHexString((trace + dataset).hashCode())));
    Files.writeString(d.resolve("chunk-1-trace.csv"), trace);
    Files.writeString(d.resolve("chunk-1-dataset.json"), dataset);
    return d;
  }

  /** Rows of the first three 10-minute windows of each period (one of which each period draws) holding {@code rest}. */
  private static String windows(String rest) {
    StringBuilder sb = new StringBuilder();
    for (long period : new long[] {0, 28_800, 50_400}) {
      for (int w = 0; w < 3; w++) {
        sb.append(period + w * 600L).append(',').append(rest).append('\n');
      }
    }
    return sb.toString();
  }

  private BlisCliTest.Outcome convert(Path d) {
    return blis("convert", "servegen", "--path", d.toString());
  }

  @Test
  void serveGenDataWithinBoundsConverts() throws Exception {
    BlisCliTest.Outcome o = convert(serveGen(windows("2.0,0.9,Gamma,1.2,0.4"), DATASET));
    assertThat(o.code()).as(o.err()).isZero();
    assertThat(o.out()).contains("cohorts:").contains("process: gamma");
  }

  @Test
  void serveGenRatesBeyondAMillionPerSecondAreRefused() throws Exception {
    for (String rate : List.of("1e12", "1e308")) {
      Path d = serveGen("0," + rate + ",0.9,Gamma,1.2,0.4\n", DATASET);
      BadInputCliTest.refused(convert(d), d.resolve("chunk-1-trace.csv") + ":1: the rate (requests/s) must be a number"
          + " in [0, 1000000], got '" + rate + "' (expected start_s, rate, cv, pattern[, shape, scale_s])");
    }
  }

  @Test
  void serveGenCvBeyondAHundredIsRefused() throws Exception {
    Path d = serveGen("0,2.0,0.9,Gamma,1.2,0.4\n600,2.0,1e300,Gamma,1.2,0.4\n", DATASET);
    BadInputCliTest.refused(convert(d), d.resolve("chunk-1-trace.csv") + ":2: the cv must be a number in [0, 100] (the"
        + " burstiest arrivals simulated), got '1e300'");
  }

  @Test
  void anUnknownServeGenArrivalPatternIsRefusedRatherThanReadAsPoisson() throws Exception {
    Path d = serveGen("0,2.0,0.9,Pareto,1.2,0.4\n", DATASET);
    BadInputCliTest.refused(convert(d), d.resolve("chunk-1-trace.csv") + ":1: unknown arrival pattern 'Pareto'"
        + " (expected Gamma, Weibull, or none (empty), Poisson or Exponential for Poisson arrivals)");
    // Poisson's names are Poisson: the same cohorts as no pattern
    BlisCliTest.Outcome named = convert(serveGen(windows("2.0,0.0,Poisson"), DATASET));
    BlisCliTest.Outcome none = convert(serveGen(windows("2.0,0.0,"), DATASET));
    assertThat(named.code()).as(named.err()).isZero();
    // the same but for the first line, which names the folder
    assertThat(named.out()).contains("process: poisson");
    assertThat(named.out().substring(named.out().indexOf('\n'))).isEqualTo(none.out().substring(none.out().indexOf('\n')));
  }

  @Test
  void serveGenLengthsBeyondTheTokenLimitAreRefused() throws Exception {
    Path d = serveGen("0,2.0,0.9,Gamma,1.2,0.4\n", "{\"0\": {\"input_tokens\": \"{100: 0.5, 2000000000: 0.5}\","
        + " \"output_tokens\": \"{40: 1.0}\"}}");
    BadInputCliTest.refused(convert(d), d.resolve("chunk-1-dataset.json") + ": window 0: input_tokens: a length must"
        + " be a number of tokens in [0, 10000000] (the most a request may have), got 2.0E9");
  }

  @Test
  void emptyOrMissingServeGenTracesAreRefused() throws Exception {
    Path empty = serveGen("", DATASET);
    BadInputCliTest.refused(convert(empty), empty.resolve("chunk-1-trace.csv") + ": the trace is empty; expected a row"
        + " per 10-minute window: start_s, rate, cv, pattern[, shape, scale_s]");
    Path header = serveGen("start,rate,cv,pattern\n", DATASET);
    BadInputCliTest.refused(convert(header), header.resolve("chunk-1-trace.csv") + ": the trace has no rows; expected a"
        + " row per 10-minute window");
    Path missing = serveGen("0,2.0,0.9,Gamma,1.2,0.4\n", DATASET);
    Files.writeString(missing.resolve("chunk-2-dataset.json"), DATASET);
    BadInputCliTest.refused(convert(missing), missing.resolve("chunk-2-dataset.json") + " has no trace beside it:"
        + " expected " + missing.resolve("chunk-2-trace.csv"));
    Path none = Files.createDirectories(dir.resolve("no-traces"));
    Files.writeString(none.resolve("chunk-1-dataset.json"), DATASET);
    BadInputCliTest.refused(convert(none), "no chunk-*-trace.csv files in " + none);
  }

  @Test
  void aSpecsServeGenDataIsCheckedTheSameWay() throws Exception {
    Path d = serveGen("0,1e12,0.9,Gamma,1.2,0.4\n", DATASET);
    Path spec = file("sg.yaml", "version: \"2\"\nseed: 1\nnum_requests: 10\nservegen_data: {path: " + d + "}\n");
    BadInputCliTest.refused(blis("run", "--workload-spec", spec.toString()), "sg.yaml:4:", d.resolve(
        "chunk-1-trace.csv") + ":1: the rate (requests/s) must be a number in [0, 1000000], got '1e12'");
  }

  // ------------------------------------------------------------ Go BLIS specs' lengths

  private BlisCliTest.Outcome goSpec(String input) throws Exception {
    Path spec = file("go-" + Integer.toHexString(input.hashCode()) + ".yaml", """
        version: "2"
        seed: 7
        aggregate_rate: 5
        num_requests: 20
        clients:
          - id: a
            rate_fraction: 1.0
            arrival: {process: poisson}
            input_distribution: %s
            output_distribution: {type: constant, params: {value: 8}}
        """.formatted(input));
    return blis("run", "--workload-spec", spec.toString());
  }

  @Test
  void exponentialAndLognormalLengthsCentredBeyondTheTokenLimitAreRefusedAsAGaussiansMaxIs() throws Exception {
    BadInputCliTest.refused(goSpec("{type: gaussian, params: {mean: 100, std_dev: 10, min: 1, max: 2000000000}}"),
        ".yaml:9:", "max must be a whole number of tokens in [0, 10000000], got 2.0E9");
    BadInputCliTest.refused(goSpec("{type: exponential, params: {mean: 2000000000}}"), ".yaml:9:",
        "mean must be at most 10000000 tokens (the most tokens a request may have, as for a gaussian's max), got 2.0E9");
    BadInputCliTest.refused(goSpec("{type: lognormal, params: {mu: 21.4, sigma: 0.5}}"), ".yaml:9:",
        "mu must be at most ln(10000000) = 16.1181, a median length exp(mu) of at most 10000000 tokens (the most tokens"
            + " a request may have, as for a gaussian's max), got 21.4");
    BadInputCliTest.refused(goSpec("{type: gaussian, params: {mean: 2000000000, std_dev: 10, min: 1, max: 100}}"),
        "mean must be at most 10000000 tokens");
    BadInputCliTest.refused(goSpec("{type: pareto_lognormal, params: {alpha: 2, xm: 3.0e10, mu: 5, sigma: 1,"
        + " mix_weight: 0.5}}"), "xm must be at most 10000000 tokens");
    // lengths centred within it run as before
    BlisCliTest.Outcome ok = goSpec("{type: exponential, params: {mean: 200}}");
    assertThat(ok.code()).as(ok.err()).isZero();
    assertThat(goSpec("{type: lognormal, params: {mu: 5.3, sigma: 0.5}}").code()).isZero();
  }
}
