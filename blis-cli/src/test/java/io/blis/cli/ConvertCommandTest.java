package io.blis.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code blis convert}: every Go BLIS example file converted into this project's format simulates
 * exactly as the Go BLIS file read directly (byte-identical result JSON).
 */
class ConvertCommandTest {

  @TempDir Path tmp;

  static Path goblis(String name) {
    try {
      return Path.of(ConvertCommandTest.class.getResource("goblis/" + name).toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * Example, the command that simulates the Go BLIS file (FILE stands for it), the command that
   * simulates the converted one (OUT), and the output's name.
   */
  static Stream<Arguments> examples() {
    return Stream.of(
        Arguments.of("examples/servegen-language.yaml", "run --num-instances 2 --workload-spec FILE",
            "run --num-instances 2 --workload-spec OUT", "spec.yaml"),
        Arguments.of("examples/servegen-language-v1.yaml", "run --workload-spec FILE", "run --workload-spec OUT", "spec.yaml"),
        Arguments.of("examples/multiturn-chat-demo.yaml", "run --workload-spec FILE", "run --workload-spec OUT", "spec.yaml"),
        Arguments.of("examples/inference-perf-shared-prefix.yaml", "run --workload-spec FILE",
            "run --inference-perf OUT --seed 42", "profile.yaml"),
        Arguments.of("examples/policy-config.yaml", "run --num-instances 4 --policy-config FILE",
            "run --num-instances 4 --policy-config OUT", "bundle.yaml"),
        Arguments.of("examples/weighted-routing.yaml", "run --num-instances 3 --policy-config FILE",
            "run --num-instances 3 --policy-config OUT", "bundle.yaml"),
        Arguments.of("tracev2/observed.yaml", "replay --trace FILE", "replay --trace OUT", "trace.csv"),
        Arguments.of("tracev2/observed.csv", "replay --trace-data FILE", "replay --trace OUT", "trace.csv.gz"),
        Arguments.of("traces.csv", "run --workload traces --workload-traces-filepath FILE", "replay --trace OUT",
            "trace.csv"));
  }

  private static String[] args(String command, Path file, Path out) {
    List<String> a = new ArrayList<>();
    for (String w : command.split(" ")) {
      a.add(w.equals("FILE") ? file.toString() : w.equals("OUT") ? out.toString() : w);
    }
    return a.toArray(String[]::new);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("examples")
  void theConvertedFileSimulatesAsTheGoBlisFile(String example, String direct, String converted, String outName)
      throws IOException {
    Path in = goblis(example);
    Path out = tmp.resolve(outName);
    BlisCliTest.Outcome c = BlisCliTest.blis("convert", in.toString(), "-o", out.toString());
    assertThat(c.code()).as(c.err()).isZero();
    assertThat(c.out()).startsWith("wrote " + out);
    BlisCliTest.Outcome a = BlisCliTest.blis(args(direct, in, out));
    BlisCliTest.Outcome b = BlisCliTest.blis(args(converted, in, out));
    assertThat(a.code()).as(a.err()).isZero();
    assertThat(b.code()).as(b.err()).isZero();
    assertThat(a.out()).contains("\"completed_requests\"");
    assertThat(b.out()).isEqualTo(a.out());
    // the notes of the Go BLIS file are printed and kept as comments; the converted file has none
    if (!outName.startsWith("trace")) {
      String text = Files.readString(out);
      assertThat(text).startsWith("# Converted by blis convert from " + in.getFileName());
      for (String line : c.err().lines().toList()) {
        assertThat(text).contains("# " + line);
      }
      assertThat(b.err()).doesNotContain("note:");
    }
  }

  @Test
  void anInferencePerfConfigIsWrittenWithEveryDefault() throws IOException {
    Path in = tmp.resolve("ip.yaml");
    Files.writeString(in, """
        api: completion
        data:
          type: random
          input_distribution: {min: 20, max: 400, mean: 150, std: 60, total_count: 30}
          output_distribution: {min: 5, max: 100, mean: 40, std_dev: 10, total_count: 30}
        load:
          stages: [{rate: 6, duration: 5}]
        """);
    Path out = tmp.resolve("ip-all.yaml");
    assertThat(BlisCliTest.blis("convert", "--from", "inference-perf", in.toString(), "-o", out.toString()).code()).isZero();
    assertThat(Files.readString(out)).contains("interval: 1.0", "request_timeout: 300.0", "type: random",
        "std_dev: 60.0, total_count: 30");
    BlisCliTest.Outcome a = BlisCliTest.blis("run", "--inference-perf", in.toString());
    BlisCliTest.Outcome b = BlisCliTest.blis("run", "--inference-perf", out.toString());
    assertThat(a.code()).as(a.err()).isZero();
    assertThat(b.out()).isEqualTo(a.out());
  }

  @Test
  void filesAlreadyInThisProjectsFormatOrUnknownAreRefusedInOneLine() throws IOException {
    Path spec = tmp.resolve("native.yaml");
    Files.writeString(spec, "aggregate_rate: 1\nnum_requests: 2\nclients:\n  - {id: a, preset: chatbot}\n");
    Path bundle = tmp.resolve("bundle.yaml");
    Files.writeString(bundle, "router: {policy: round-robin}\n");
    Path other = tmp.resolve("other.yaml");
    Files.writeString(other, "colour: blue\n");
    Path out = tmp.resolve("out.yaml");
    BlisCliTest.assertUsageError("convert", BlisCliTest.blis("convert", spec.toString(), "-o", out.toString()),
        spec + ": already in this project's workload spec format; nothing to convert");
    BlisCliTest.assertUsageError("convert", BlisCliTest.blis("convert", bundle.toString(), "-o", out.toString()),
        bundle + ": already in this project's policy bundle format; nothing to convert");
    BlisCliTest.assertUsageError("convert", BlisCliTest.blis("convert", other.toString(), "-o", out.toString()),
        other + ": not a file blis convert knows");
    BlisCliTest.assertUsageError("convert", BlisCliTest.blis("convert", "--from", "servegen", other.toString(), "-o",
        out.toString()), "--from must be one of workload-spec, policy-config, trace, inference-perf, got 'servegen'");
    assertThat(Files.exists(out)).isFalse();
  }

  @Test
  void serveGenDataIsConvertedOrRefusedInOneLine() throws IOException {
    Path data = tmp.resolve("sg");
    Files.createDirectories(data);
    BlisCliTest.assertUsageError("servegen", BlisCliTest.blis("convert", "servegen", "--path", tmp.resolve("none").toString()),
        "--path: " + tmp.resolve("none") + " does not exist or is not a folder");
    BlisCliTest.assertUsageError("servegen", BlisCliTest.blis("convert", "servegen", "--path", data.toString()),
        "--path: no chunk-*-trace.csv files in " + data);
    Files.writeString(data.resolve("chunk-9-trace.csv"), "0,2.5,1.0,Gamma,1.0,0.4\n600,2.5,1.0,Gamma,1.0,0.4\n"
        + "1200,2.5,1.0,Gamma,1.0,0.4\n28800,-1,0,,,\n");
    Files.writeString(data.resolve("chunk-9-dataset.json"),
        "{\"0\": {\"input_tokens\": \"{100: 1}\", \"output_tokens\": \"{20: 1}\"}}");
    BlisCliTest.assertUsageError("servegen", BlisCliTest.blis("convert", "servegen", "--path", data.toString()),
        "--path: " + data.resolve("chunk-9-trace.csv") + ":4: the rate (requests/s) must be a number in [0, 1000000], got '-1'");
    Files.writeString(data.resolve("chunk-9-trace.csv"), "0,2.5,1.0,Gamma,1.0,0.4\n600,2.5,1.0,Gamma,1.0,0.4\n"
        + "1200,2.5,1.0,Gamma,1.0,0.4\n");
    BlisCliTest.assertUsageError("servegen", BlisCliTest.blis("convert", "servegen", "--path", data.toString(),
        "--time", "noon"), "--time must be one of [midnight, morning, afternoon], got 'noon'");
    BlisCliTest.assertUsageError("servegen", BlisCliTest.blis("convert", "servegen", "--path", data.toString(),
        "--time", "morning"), "no chunk is active in the morning period");
    Path out = tmp.resolve("sg.yaml");
    BlisCliTest.Outcome o = BlisCliTest.blis("convert", "servegen", "--path", data.toString(), "--out", out.toString());
    assertThat(o.code()).as(o.err()).isZero();
    String yaml = Files.readString(out);
    assertThat(yaml).contains("  - id: midnight-critical\n    population: 1\n",
        "    arrival: {process: gamma, cv: 1.0, shape: 1.0, scale: 400000.0}\n",
        "    input_distribution: {type: lognormal, params: {mu: " + Math.log(100) + ", sigma: 0.0}}\n",
        "    spike: {start_time_us: 0, duration_us: 600000000, trace_rate: 2.5}\n");
    // bounded by --num-requests (Go BLIS's meaning with a Go spec), the converted spec runs: one gamma
    // client at 1 / (1.0 x 0.4 s) = 2.5 req/s for the 600 s of its period
    BlisCliTest.Outcome run = BlisCliTest.blis("run", "--workload-spec", out.toString(), "--num-requests", "50");
    assertThat(run.code()).as(run.err()).isZero();
    assertThat(run.out()).contains("\"injected_requests\" : 50,");
    BlisCliTest.assertUsageError("run", BlisCliTest.blis("run", "--workload-spec", out.toString()),
        "set num_requests or horizon (microseconds) to bound the workload");
  }
}
