package io.blis.cli;

import static io.blis.cli.BlisCliTest.assertUsageError;
import static io.blis.cli.BlisCliTest.blis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.blis.cli.BlisCliTest.Outcome;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/** The three workload kinds through {@link BlisCli#execute}: run, trace, replay, bad input. */
class WorkloadCliTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  /** A two-client spec: sessions with accumulated context and a shared prefix, plus a batch client. */
  static final String SPEC = """
      seed: 7
      aggregate_rate: 20
      num_requests: 60
      clients:
        - id: chat
          tenant: acme
          slo_class: critical
          rate_fraction: 3
          arrival: {process: gamma, cv: 2.0}
          input: {type: gaussian, mean: 300, std: 50, min: 10, max: 1000}
          output: {type: exponential, mean: 60, min: 1, max: 400}
          prefix_group: sys-a
          prefix_length: 32
          timeout_s: 30
          session: {rounds: 3, think_time_s: 0.5, accumulate_context: true}
        - id: batch
          slo_class: batch
          rate_fraction: 1
          arrival: {process: constant}
          input: {type: empirical, probabilities: {100: 0.25, 200: 0.75}}
          output: {type: constant, value: 7}
      """;

  /** Two short constant-rate stages of a shared-prefix profile: 20 + 30 requests. */
  static final String PROFILE = """
      load:
        type: constant
        interval: 1
        stages:
        - rate: 4
          duration: 5
        - rate: 6
          duration: 5
      api:
        type: completion
        streaming: true
      server:
        type: vllm
        ignore_eos: true
      data:
        type: shared_prefix
        shared_prefix:
          num_groups: 2
          num_prompts_per_group: 5
          system_prompt_len: 100
          question_len: 200
          output_len: 40
      """;

  static Outcome ok(String... args) {
    Outcome o = blis(args);
    assertThat(o.err()).as(String.join(" ", args)).isEmpty();
    assertThat(o.code()).isZero();
    return o;
  }

  static String[] concat(String[] a, String... b) {
    String[] r = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, r, a.length, b.length);
    return r;
  }

  static Path write(Path dir, String name, String text) throws IOException {
    Path p = dir.resolve(name);
    Files.writeString(p, text, StandardCharsets.UTF_8);
    return p;
  }

  static List<String> lines(Path file) throws IOException {
    try (BufferedReader r = new BufferedReader(new InputStreamReader(
        file.toString().endsWith(".gz") ? new GZIPInputStream(Files.newInputStream(file))
            : Files.newInputStream(file), StandardCharsets.UTF_8))) {
      return r.lines().toList();
    }
  }

  /** Workload flags of each kind (files are created by {@link #workloadArgs}). */
  static Stream<Arguments> kinds() {
    return Stream.of(
        Arguments.of("poisson-gaussian", "trace.csv", false, true),
        Arguments.of("preset", "trace.csv.gz", false, false),
        Arguments.of("spec", "trace.csv", false, true),
        Arguments.of("spec", "trace.csv.gz", true, true),
        Arguments.of("inference-perf", "trace.csv.gz", false, true),
        Arguments.of("inference-perf", "trace.csv", true, true));
  }

  static String[] workloadArgs(String kind, Path dir) throws IOException {
    return switch (kind) {
      case "poisson-gaussian" -> new String[] {"--rate", "20", "--num-requests", "40",
          "--prefix-tokens", "64", "--prompt-tokens", "300", "--output-tokens", "50"};
      case "preset" -> new String[] {"--workload", "chatbot", "--rate", "20", "--num-requests", "40"};
      case "spec" -> new String[] {"--workload-spec", write(dir, "spec.yaml", SPEC).toString()};
      case "inference-perf" -> new String[] {"--inference-perf",
          write(dir, "profile.yaml", PROFILE).toString()};
      default -> throw new IllegalArgumentException(kind);
    };
  }

  /** Small deployment so that queueing, preemption and prefix hits all happen. */
  static final String[] DEPLOYMENT = {"--total-kv-blocks", "400", "--max-num-seqs", "8",
      "--per-request"};

  @ParameterizedTest(name = "{0} -> {1}, token ids {2}")
  @MethodSource("kinds")
  void runThenReplayOfItsTraceGivesByteIdenticalResults(String kind, String traceName,
      boolean tokenIds, boolean sharedPrefixes, @TempDir Path dir) throws IOException {
    Path trace = dir.resolve("out/" + traceName);
    Path a = dir.resolve("a.json");
    Path b = dir.resolve("b.json");
    String[] run = concat(concat(new String[] {"run"}, workloadArgs(kind, dir)), DEPLOYMENT);
    run = concat(run, "--trace-out", trace.toString(), "--results-path", a.toString());
    if (tokenIds) {
      run = concat(run, "--trace-token-ids");
    }
    Outcome simulated = ok(run);
    Outcome replayed = ok(concat(concat(new String[] {"replay", "--trace", trace.toString()},
        DEPLOYMENT), "--results-path", b.toString()));

    assertThat(replayed.out()).isEqualTo(simulated.out());
    assertThat(Files.readString(b)).isEqualTo(Files.readString(a)).isEqualTo(simulated.out());

    JsonNode root = JSON.readTree(simulated.out());
    long injected = root.path("overall").path("injected_requests").asLong();
    assertThat(injected).isPositive();
    assertThat(root.path("overall").path("completed_requests").asLong()).isEqualTo(injected);
    List<String> rows = lines(trace);
    assertThat(rows.get(0)).startsWith("# blis-trace ").contains("\"token_ids\":" + tokenIds);
    assertThat(rows.size() - 2).as("one trace row per injected request").isEqualTo(injected);
    long cached = 0;
    for (JsonNode r : root.path("requests")) {
      cached += r.path("cached_prompt_tokens").asLong();
    }
    if (sharedPrefixes) {
      assertThat(cached).as("the replay must preserve prefix-cache hits, so the run must have some")
          .isPositive();
    }
  }

  @Test
  void aHorizonRunReplaysIdenticallyUnderTheSameHorizon(@TempDir Path dir) throws IOException {
    Path spec = write(dir, "spec.yaml", SPEC);
    Path trace = dir.resolve("t.csv");
    Outcome run = ok("run", "--workload-spec", spec.toString(), "--horizon-s", "2",
        "--trace-out", trace.toString(), "--per-request");
    Outcome same = ok("replay", "--trace", trace.toString(), "--horizon-s", "2", "--per-request");
    Outcome unbounded = ok("replay", "--trace", trace.toString(), "--per-request");
    assertThat(same.out()).isEqualTo(run.out());
    long injected = JSON.readTree(run.out()).path("overall").path("injected_requests").asLong();
    long rows = lines(trace).size() - 2;
    assertThat(rows).as("pulled requests include ones arriving after the horizon")
        .isGreaterThan(injected);
    assertThat(JSON.readTree(unbounded.out()).path("overall").path("injected_requests").asLong())
        .isEqualTo(rows);
  }

  @Test
  void presetLengthsFollowThePreset() throws IOException {
    JsonNode r = JSON.readTree(ok("run", "--workload", "summarization", "--rate", "2",
        "--num-requests", "30", "--max-model-len", "0").out());
    JsonNode o = r.path("overall");
    assertThat(o.path("injected_requests").asLong()).isEqualTo(30);
    assertThat(o.path("completed_requests").asLong()).isEqualTo(30);
    double meanInput = o.path("total_input_tokens").asDouble() / 30;
    double meanOutput = o.path("total_output_tokens").asDouble() / 30;
    assertThat(meanInput).isBetween(4096 - 3 * 500 / Math.sqrt(30), 4096 + 3 * 500 / Math.sqrt(30));
    assertThat(meanOutput).isBetween(512 - 3 * 150 / Math.sqrt(30), 512 + 3 * 150 / Math.sqrt(30));
  }

  @Test
  void specSessionsAddFollowUpRoundsAndTheFileSeedIsTheDefault(@TempDir Path dir) throws IOException {
    Path spec = write(dir, "spec.yaml", SPEC);
    Path trace = dir.resolve("t.csv");
    Outcome fileSeed = ok("run", "--workload-spec", spec.toString(), "--trace-out", trace.toString());
    Outcome sameSeed = ok("run", "--workload-spec", spec.toString(), "--seed", "7");
    Outcome otherSeed = ok("run", "--workload-spec", spec.toString(), "--seed", "8");
    assertThat(sameSeed.out()).isEqualTo(fileSeed.out());
    assertThat(otherSeed.out()).isNotEqualTo(fileSeed.out());

    List<String> rows = lines(trace).subList(2, lines(trace).size());
    long openLoop = rows.stream().filter(l -> l.split(",")[8].equals("0")).count();
    long followUps = rows.size() - openLoop;
    assertThat(openLoop).isEqualTo(60);
    assertThat(followUps).as("session rounds 2 and 3 of the chat client").isPositive();
    assertThat(JSON.readTree(fileSeed.out()).path("overall").path("injected_requests").asLong())
        .isEqualTo(rows.size());
    assertThat(lines(trace).get(0)).contains("\"token_seed\":7");
  }

  @Test
  void inferencePerfProfileRunsItsStagesInOrder(@TempDir Path dir) throws IOException {
    Path profile = write(dir, "profile.yaml", PROFILE);
    JsonNode root = JSON.readTree(ok("run", "--inference-perf", profile.toString(),
        "--per-request").out());
    assertThat(root.path("overall").path("injected_requests").asLong()).isEqualTo(20 + 30);
    assertThat(root.path("overall").path("total_output_tokens").asLong()).isEqualTo(50 * 40);
    double lastStage0 = 0;
    double firstStage1 = Double.MAX_VALUE;
    for (JsonNode r : root.path("requests")) {
      double endS = r.path("arrival_s").asDouble() + r.path("e2e_ms").asDouble() / 1000;
      if (r.path("stage").asInt() == 0) {
        lastStage0 = Math.max(lastStage0, endS);
      } else {
        firstStage1 = Math.min(firstStage1, r.path("arrival_s").asDouble());
      }
    }
    assertThat(firstStage1).as("stage 1 starts after stage 0 ended plus the 1 s interval")
        .isGreaterThanOrEqualTo(lastStage0 + 1.0 - 1e-6);
  }

  /** A ground-truth CSV written by the test: seeded arrivals and prompt lengths. */
  @ParameterizedTest(name = "seed {0}")
  @CsvSource({"1", "2", "3"})
  void groundTruthCsvReplaysRecordedArrivalsAndLengths(long seed, @TempDir Path dir)
      throws IOException {
    SplittableRandom rnd = new SplittableRandom(seed);
    Path csv = dir.resolve("run.csv.gz");
    List<Long> arrivalsMs = new ArrayList<>();
    long inputSum = 0;
    int n = 25;
    try (Writer w = new OutputStreamWriter(new GZIPOutputStream(Files.newOutputStream(csv)),
        StandardCharsets.UTF_8)) {
      w.write("req,stage,arrival_ms,ok,input_tokens,output_tokens_client,e2e_ms,ttft_ms\n");
      long t = 0;
      for (int i = 0; i < n; i++) {
        t += rnd.nextLong(10, 400);
        int input = 300 + rnd.nextInt(-5, 6);
        arrivalsMs.add(t);
        inputSum += input;
        w.write(i + ",0," + t + ",1," + input + ",40,1000.0,20.0\n");
      }
    }
    Path profile = write(dir, "profile.yaml", PROFILE);
    JsonNode root = JSON.readTree(ok("replay", "--trace", csv.toString(), "--inference-perf",
        profile.toString(), "--per-request").out());
    assertThat(root.path("overall").path("injected_requests").asLong()).isEqualTo(n);
    assertThat(root.path("overall").path("total_input_tokens").asLong()).isEqualTo(inputSum);
    assertThat(root.path("overall").path("total_output_tokens").asLong()).isEqualTo(40L * n);
    List<Double> replayedS = new ArrayList<>();
    for (JsonNode r : root.path("requests")) {
      replayedS.add(r.path("arrival_s").asDouble());
    }
    replayedS.sort(Double::compare);
    for (int i = 0; i < n; i++) {
      assertThat(replayedS.get(i)).isCloseTo(arrivalsMs.get(i) / 1000.0,
          org.assertj.core.data.Offset.offset(1e-6));
    }
  }

  @Test
  void groundTruthReplayWithTheExperimentsFile(@TempDir Path dir) throws IOException {
    Path gt = Path.of("/work/shared/groundtruth");
    String id = "20260217-155451-llama-2-7b-tp1-codegen";
    Path full = gt.resolve("requests/" + id + ".csv.gz");
    assumeTrue(Files.isRegularFile(full), "ground truth not available");
    Path head = dir.resolve("head.csv.gz");
    List<String> rows = lines(full).subList(0, 201);
    try (Writer w = new OutputStreamWriter(new GZIPOutputStream(Files.newOutputStream(head)),
        StandardCharsets.UTF_8)) {
      w.write(String.join("\n", rows) + "\n");
    }
    String[] args = {"replay", "--trace", head.toString(), "--experiments",
        gt.resolve("experiments.json").toString(), "--experiment", id, "--max-num-seqs", "128"};
    Outcome a = ok(args);
    assertThat(ok(args).out()).isEqualTo(a.out());
    JsonNode o = JSON.readTree(a.out()).path("overall");
    assertThat(o.path("injected_requests").asLong()).isEqualTo(200);
    assertThat(o.path("total_output_tokens").asLong()).isEqualTo(200L * 247);
    long recordedInput = 0;
    for (String row : rows.subList(1, rows.size())) {
      recordedInput += Long.parseLong(row.split(",")[4]);
    }
    assertThat(o.path("total_input_tokens").asLong()).isEqualTo(recordedInput);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
      "two kinds|run --workload chatbot --workload-spec SPEC|give at most one workload kind",
      "three kinds|run --workload chatbot --workload-spec SPEC --inference-perf PROFILE|--workload-spec and --workload and --inference-perf",
      "missing spec|run --workload-spec DIR/nope.yaml|--workload-spec: no such file",
      "missing profile|run --inference-perf DIR/nope.yaml|--inference-perf: no such file",
      "malformed spec|run --workload-spec BAD|unknown key 'tenat'",
      "spec is not a profile|run --inference-perf SPEC|missing 'data' section",
      "rate with a spec|run --workload-spec SPEC --rate 3|--rate does not apply to --workload-spec",
      "lengths with a preset|run --workload chatbot --prompt-tokens 9|--prompt-tokens does not apply to --workload",
      "unknown preset|run --workload tweets|unknown workload preset 'tweets'",
      "token ids without trace|run --trace-token-ids|--trace-token-ids needs --trace-out",
      "missing trace|replay --trace DIR/nope.csv|--trace: no such file",
      "no trace flag|replay|give --trace FILE, or Go BLIS's --trace-header/--trace-data",
      "csv without profile|replay --trace CSV|is not a BLIS trace",
      "profile with blis trace|replay --trace BLIS --inference-perf PROFILE|is a BLIS trace",
      "experiment without file|replay --trace CSV --experiment x|--experiments and --experiment go together",
      "bad deployment flag|replay --trace BLIS --max-num-seqs 0|--max-num-seqs must be at least 1"})
  void badInputPrintsOneLineAndExitsWithUsageError(String name, String args, String expected,
      @TempDir Path dir) throws IOException {
    Path spec = write(dir, "spec.yaml", SPEC);
    Path bad = write(dir, "bad.yaml", SPEC.replace("    tenant: acme", "    tenat: acme"));
    Path profile = write(dir, "profile.yaml", PROFILE);
    Path csv = write(dir, "gt.csv",
        "req,stage,arrival_ms,ok,input_tokens,output_tokens_client,e2e_ms,ttft_ms\n0,0,5,1,300,40,1000.0,20.0\n");
    Path blisTrace = dir.resolve("t.csv");
    ok("run", "--num-requests", "3", "--trace-out", blisTrace.toString());
    String[] argv = Arrays.stream(args.split(" ")).map(a -> switch (a) {
      case "SPEC" -> spec.toString();
      case "BAD" -> bad.toString();
      case "PROFILE" -> profile.toString();
      case "CSV" -> csv.toString();
      case "BLIS" -> blisTrace.toString();
      default -> a.replace("DIR", dir.toString());
    }).toArray(String[]::new);
    assertUsageError(name, blis(argv), expected);
  }

  @Test
  void replayTakesTheSameDeploymentFlagsAsRun(@TempDir Path dir) throws IOException {
    Path trace = dir.resolve("t.csv");
    String[] deployment = {"--num-instances", "2", "--routing-policy", "least-loaded",
        "--max-num-seqs", "4", "--kv-cpu-blocks", "100", "--latency-model", "blackbox",
        "--coefficients", "beta=6000,2,80"};
    Outcome run = ok(concat(new String[] {"run", "--rate", "30", "--num-requests", "40",
        "--trace-out", trace.toString()}, deployment));
    Outcome same = ok(concat(new String[] {"replay", "--trace", trace.toString()}, deployment));
    Outcome oneInstance = ok("replay", "--trace", trace.toString(), "--max-num-seqs", "4");
    assertThat(same.out()).isEqualTo(run.out());
    JsonNode engine = JSON.readTree(same.out()).path("engine");
    assertThat(engine.path("instances").asInt()).isEqualTo(2);
    assertThat(engine.path("kv_cpu_tier_blocks").asLong()).as("summed over the instances")
        .isEqualTo(2 * 100);
    assertThat(oneInstance.out()).isNotEqualTo(run.out());
  }

  @Test
  void helpListsReplay() {
    Outcome o = ok("--help");
    assertThat(o.out()).contains("replay");
    assertThat(ok("replay", "--help").out()).contains("--trace", "--model", "--results-path",
        "--per-request", "--experiment");
  }
}
