package io.blis.cli;

import static io.blis.cli.BlisCliTest.blis;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Bad input of the deployment and its files: every one is exactly one line on stderr naming the
 * flag or the file (with line and column) and what was expected, exit status 2, nothing on stdout,
 * never a stack trace, an "internal error" or a parser's internals.
 */
class BadInputCliTest {

  private static final String EXPERIMENTS = "src/test/resources/validate/experiments-small.json";

  /** Asserts the outcome is a refusal: exit 2, one line on stderr holding every {@code expected}. */
  static void refused(BlisCliTest.Outcome o, String... expected) {
    assertThat(o.code()).as(o.err()).isEqualTo(2);
    assertThat(o.err().strip().lines().count()).as(o.err()).isEqualTo(1);
    assertThat(o.err()).contains(expected).doesNotContain("Exception").doesNotContain("internal error")
        .doesNotContain("\tat ").doesNotContain("Source: ").doesNotContain("StreamReadFeature")
        .doesNotContain("CoercionConfig").doesNotContain("No content to map").doesNotContain("com.fasterxml")
        .doesNotContain("in 'reader'");
    assertThat(o.out()).isEmpty();
  }

  private static BlisCliTest.Outcome run(String... flags) {
    String[] args = new String[flags.length + 3];
    args[0] = "run";
    args[1] = "--num-requests";
    args[2] = "10";
    System.arraycopy(flags, 0, args, 3, flags.length);
    return blis(args);
  }

  private static Path file(Path dir, String name, String text) throws Exception {
    Path p = dir.resolve(name);
    Files.writeString(p, text);
    return p;
  }

  // ------------------------------------------------------------ 1. instances

  @Test
  void instancesAreBoundedByTheClusterLimitOnTheFlagAndInTheBundle(@TempDir Path dir) throws Exception {
    refused(run("--num-instances", "100000"),
        "--num-instances must be between 1 and 4096 (the cluster limit), got 100000");
    refused(run("--num-instances", "10000"), "between 1 and 4096", "got 10000");
    refused(run("--num-instances", "0"), "between 1 and 4096", "got 0");
    Path pools = file(dir, "pools.yaml", "pools:\n  - {name: a, instances: 4000}\n  - {name: b, instances: 97}\n");
    refused(run("--policy-config", pools.toString()), "pools.yaml, line 3, column 26",
        "at most 4096 instances in all pools (the cluster limit), got 4097");
    Path one = file(dir, "one.yaml", "pools:\n  - {name: a, instances: 2}\nrouter: {policy: least-loaded}\n");
    refused(run("--policy-config", one.toString(), "--num-instances", "4097"), "between 1 and 4096");
  }

  // ------------------------------------------------------------ 2. times

  @ParameterizedTest
  @CsvSource({"--routing-latency-us", "--admission-latency-us", "--snapshot-refresh-us"})
  void controlPlaneLatenciesAreAtMostAnHour(String flag) {
    refused(run(flag, "9223372036854775807"),
        flag + " must be between 0 and 3600000000 (one hour), got 9223372036854775807");
    refused(run(flag, "3600000001"), flag + " must be between 0 and 3600000000");
    refused(run(flag, "-1"), flag + " must be between 0 and 3600000000");
    assertThat(run(flag, "3600000000").code()).isZero();
  }

  @Test
  void theApiServersCostsAreThreeNumbersOfMicroseconds() {
    refused(run("--api-server", "2000:120"), "--api-server: expected REQUEST_US:INPUT_TOKEN_US:CHUNK_US");
    refused(run("--api-server", "2000:0:fast"), "--api-server:", "'fast' is not a number");
    refused(run("--api-server", "-5:0:100"), "--api-server: API server request time must be", "got -5.0");
    refused(run("--api-server", "0:0:1e12"), "--api-server: API server chunk time must be", "[0, 1e9]");
    assertThat(run("--api-server", "2000:0:120").code()).isZero();
  }

  @Test
  void theBundlesLatenciesAreAtMostAnHourToo(@TempDir Path dir) throws Exception {
    Path b = file(dir, "lat.yaml", "cluster: {routing_latency_us: 9223372036854775807}\n");
    refused(run("--policy-config", b.toString()), "lat.yaml, line 1, column 31",
        "routing_latency_us must be at most 3600000000 (one hour), got 9223372036854775807");
    Path r = file(dir, "refresh.yaml", "cluster: {snapshot_refresh_us: 3600000001}\n");
    refused(run("--policy-config", r.toString()), "refresh.yaml, line 1",
        "snapshot_refresh_us must be at most 3600000000 (one hour), got 3600000001");
    Path a = file(dir, "adm.yaml", "cluster:\n  admission_latency_us: 3600000001\n");
    refused(run("--policy-config", a.toString()), "adm.yaml, line 2",
        "admission_latency_us must be at most 3600000000 (one hour)");
  }

  @Test
  void aRateTooLowForTheArrivalsToFitTheSimulatedTimeIsRefusedWithTheLowestThatFits() {
    refused(run("--rate", "1e-300"), "--rate 1.0E-300 req/s spreads --num-requests 10 over 1.00e+301 s",
        "beyond the simulated-time limit of 31536000 s (365 days)", "give --rate at least 3.17e-07");
    refused(blis("run", "--workload", "chatbot", "--num-requests", "1000", "--rate", "1e-5"),
        "spreads --num-requests 1000 over 1.00e+08 s", "at least 3.17e-05");
  }

  @Test
  void theHorizonIsAtMostTheSimulatedTimeLimit() {
    refused(run("--horizon-s", "1e12"),
        "--horizon-s must be between 0 and 31536000 (365 days, the simulated-time limit), got 1.0E12");
    assertThat(run("--horizon-s", "31536000").code()).isZero();
  }

  @Test
  void aLatencyModelTimeAboveAnHourIsBadCoefficientsNotAnInternalError() {
    // per_step_us (beta 11) of 4e9 us: every step would last more than an hour
    refused(run("--coefficients", "beta=2.15,1.48,0.87,1.09,1.12,1.13,1.49,2.0,21.3,9.6,3.9,4e9,0.48,5.2,31.2;"
            + "alpha=8224,0,0,0"),
        "latency model: step time of", "exceeds the limit of 3600000000 us (one hour); check its coefficients");
  }

  // ------------------------------------------------------------ 4. policy bundle

  @Test
  void anUnknownSloClassIsNamedWithTheKnownOnes(@TempDir Path dir) throws Exception {
    Path b = file(dir, "slo.yaml", "slo:\n  critcal: {ttft_ms: 100, e2e_ms: 1000}\n");
    refused(run("--policy-config", b.toString()), "slo.yaml, line 2, column 12",
        "unknown SLO class 'critcal' in slo; known classes: critical, standard, batch, sheddable, background");
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "# every line\n# commented out\n", "~\n", "{}\n", "---\n"})
  void aBundleThatSetsNothingIsRefusedNotRunAsTheDefaults(String text, @TempDir Path dir) throws Exception {
    Path b = file(dir, "empty.yaml", text);
    refused(run("--policy-config", b.toString()), "empty.yaml: the policy bundle sets nothing",
        "give at least one of pools, router, admission, priority, scheduler, cluster, slo",
        "or leave out --policy-config to run the defaults");
  }

  @Test
  void anEmptyPoolListIsRefused(@TempDir Path dir) throws Exception {
    Path b = file(dir, "pools.yaml", "pools: []\n");
    refused(run("--policy-config", b.toString()), "pools.yaml, line 1, column 8", "pools is an empty list",
        "leave out pools for one pool of --num-instances instances");
  }

  @Test
  void aNonPositiveTokenBucketCapacitySaysPositive(@TempDir Path dir) throws Exception {
    refused(run("--token-bucket-capacity", "-1"), "token-bucket: parameter capacity must be positive, got -1");
    refused(run("--token-bucket-capacity", "0"), "capacity must be positive, got 0");
    Path b = file(dir, "tb.yaml", "admission: {policy: token-bucket, capacity: -1, refill_rate: 10}\n");
    refused(run("--policy-config", b.toString()), "capacity must be positive, got -1");
  }

  @Test
  void yamlAnchorsAndAliasesAreRefusedNotReadAsText(@TempDir Path dir) throws Exception {
    Path alias = file(dir, "alias.yaml", "router: &r {policy: least-loaded}\nadmission: *r\n");
    refused(run("--policy-config", alias.toString()), "alias.yaml, line 1, column 9",
        "YAML anchor '&r' is not supported");
    Path undefined = file(dir, "undefined.yaml", "router: {policy: least-loaded}\nadmission: *r\n");
    refused(run("--policy-config", undefined.toString()), "undefined.yaml, line 2, column 12",
        "YAML alias '*r' is not supported");
    Path coeffs = file(dir, "c.yaml", "version: 1\nalpha: &a [1, 2, 3]\nbeta: *a\n");
    refused(run("--coefficients", coeffs.toString()), "c.yaml, line 2, column 8", "YAML anchor '&a'");
    Path only = file(dir, "only-alias.yaml", "version: 1\nalpha: *a\n");
    refused(run("--coefficients", only.toString()), "only-alias.yaml, line 2, column 8", "YAML alias '*a'");
  }

  // ------------------------------------------------------------ 5. experiments files

  @ParameterizedTest
  @CsvSource({"validate", "calibrate"})
  void aMissingOrDirectoryExperimentsFileSaysWhich(String command, @TempDir Path dir) {
    refused(blis(command, "--experiments", dir.resolve("nope.json").toString()),
        "--experiments: no such file '" + dir.resolve("nope.json") + "'");
    refused(blis(command, "--experiments", dir.toString()),
        "--experiments: '" + dir + "' is a directory, expected a file");
  }

  @Test
  void replayAndFitSayWhichToo(@TempDir Path dir) throws Exception {
    Path trace = file(dir, "t.csv", "x\n");
    refused(blis("replay", "--trace", trace.toString(), "--experiments", dir.toString(), "--experiment", "x"),
        "--experiments: '" + dir + "' is a directory, expected a file");
    refused(blis("fit", "--traces", trace.toString(), "--out", dir.resolve("c.yaml").toString(),
        "--experiments", dir.resolve("nope.json").toString()), "--experiments: no such file");
  }

  @Test
  void brokenExperimentsFilesAreOneCleanLineWithTheLocation(@TempDir Path dir) throws Exception {
    refused(blis("validate", "--experiments", file(dir, "empty.json", "").toString()),
        "empty.json: the experiments file is empty; expected a top-level 'experiments' array");
    refused(blis("validate", "--experiments", file(dir, "cut.json", "{\"experiments\": [\n").toString()),
        "cut.json, line 2, column 1: not valid JSON: Unexpected end-of-input",
        "(line 1, column 17)");
    refused(blis("validate", "--experiments", file(dir, "dup.json", "{\"experiments\": [], \"experiments\": []}")
        .toString()), "dup.json, line 1, column 21: duplicate key 'experiments'");
  }

  // ------------------------------------------------------------ 6. output paths

  @Test
  void aResultsPathThatIsADirectoryFailsBeforeSimulatingAndPrintsNothing(@TempDir Path dir) {
    refused(run("--results-path", dir.toString()),
        "--results-path: '" + dir + "' is a directory, expected a file path");
    refused(run("--trace-out", dir.toString()), "--trace-out: '" + dir + "' is a directory");
    refused(run("--otel-out", dir.toString()), "--otel-out: '" + dir + "' is a directory");
  }

  @Test
  void anOutputUnderAFileFailsBeforeAnyWork(@TempDir Path dir) throws Exception {
    Path plain = file(dir, "plain.txt", "x");
    refused(run("--results-path", plain.resolve("r.json").toString()),
        "--results-path: cannot write '" + plain.resolve("r.json") + "': '" + plain + "' is not a directory");
    refused(blis("validate", "--experiments", EXPERIMENTS, "--out", dir.toString()),
        "--out: '" + dir + "' is a directory, expected a file path");
    refused(blis("validate", "--experiments", EXPERIMENTS, "--html", dir.toString()), "--html: '" + dir + "'");
    refused(blis("calibrate", "--experiments", EXPERIMENTS, "--out", dir.toString()), "--out: '" + dir + "'");
  }

  // ------------------------------------------------------------ 7. files without parser internals

  @Test
  void coefficientAndEnsembleFilesGiveLocationsNotParserInternals(@TempDir Path dir) throws Exception {
    refused(run("--coefficients", file(dir, "empty.yaml", "").toString()),
        "empty.yaml: the coefficient file is empty; expected 'version: 1'");
    refused(run("--coefficients", file(dir, "cut.yaml", "version: 1\nalpha: [1, 2\n").toString()),
        "cut.yaml, line 3, column 1: not valid YAML: expected ',' or ']', but got <stream end>"
            + " (while parsing a flow sequence that starts at line 2, column 8)");
    refused(run("--coefficients", file(dir, "dup.yaml", "version: 1\nalpha: [1]\nalpha: [2]\n").toString()),
        "dup.yaml, line 3, column 1: duplicate key 'alpha'");
    refused(run("--coefficients", file(dir, "two.yaml", "version: 1\nalpha: [1]\n---\nbeta: [2]\n").toString()),
        "two.yaml, line 4, column 1: expected a single document");
    refused(run("--ensemble", file(dir, "e.yaml", "").toString()), "e.yaml: the ensemble file is empty");
    refused(run("--ensemble", file(dir, "e2.yaml", "members: [\n").toString()), "e2.yaml, line 2, column 1",
        "not valid YAML");
    refused(run("--ensemble", dir.toString()), "cannot read ensemble file: is a directory, expected a file");
    refused(run("--policy-config", file(dir, "p.yaml", "router: {policy: least-loaded\n").toString()),
        "p.yaml, line 2, column 1: not valid YAML: expected ',' or '}', but got <stream end>");
  }

  /** A spec file is held to the bounds the flags have: the requests' span and the horizon. */
  @Test
  void aSpecFileHasTheFlagsBounds(@TempDir Path dir) throws Exception {
    String spec = Files.readString(Path.of("../docs/examples/cluster-workload.yaml"));
    assertThat(spec).contains("num_requests: 6000");
    Path many = dir.resolve("many.yaml");
    Files.writeString(many, spec.replace("num_requests: 6000", "num_requests: 1000000000000"));
    refused(BlisCliTest.blis("run", "--workload-spec", many.toString()),
        "num_requests 1000000000000 at its clients' 36.0000 req/s", "beyond the simulated-time limit of 31536000 s");
    Path far = dir.resolve("far.yaml");
    Files.writeString(far, spec.replace("num_requests: 6000", "horizon_s: 1e18"));
    refused(BlisCliTest.blis("run", "--workload-spec", far.toString()),
        "horizon_s must be a positive number of seconds up to 31536000 (365 days");
  }

  /** capacity refuses the options of a single run instead of taking them and doing nothing. */
  @ParameterizedTest
  @ValueSource(strings = {"--horizon-s=5", "--results-path=x.json", "--per-request", "--trace-level=decisions",
      "--output-format=go-blis", "--otel-out=x.jsonl", "--fitness-weights=e2e_p99:1", "--max-backlog=10"})
  void capacityRefusesTheOptionsOfASingleRun(String flag) {
    refused(BlisCliTest.blis("capacity", "--slo", "ttft_p99=500ms", "--workload", "chatbot", flag),
        flag.split("=")[0] + " does not apply to capacity");
  }

  /** A deployment that rejects every request of the workload is one line, not "not steady" at every rate. */
  @Test
  void capacityOfADeploymentThatRejectsTheWorkloadIsOneLine() {
    refused(BlisCliTest.blis("capacity", "--slo", "ttft_p99=500ms", "--workload", "chatbot", "--max-model-len", "10"),
        "the deployment rejects every request of the workload (1000 of 1000 at 1.0 req/s:",
        "prompt_exceeds_max_model_len=", "check --max-model-len, --total-kv-blocks and the workload's lengths");
  }

  /** capacity's help offers only what it uses: the options it refuses are not listed. */
  @Test
  void capacityHelpLeavesOutTheOptionsItRefuses() {
    BlisCliTest.Outcome help = BlisCliTest.blis("capacity", "--help");
    assertThat(help.code()).isZero();
    assertThat(help.out()).contains("--slo").contains("--workload").contains("--max-num-seqs");
    for (String refused : List.of("--rate", "--num-requests", "--horizon-s", "--results-path", "--otel-out",
        "--per-request", "--trace-level", "--summarize-trace", "--fitness-weights", "--output-format")) {
      assertThat(BlisCliTest.listsOption(help.out(), refused)).as(refused).isFalse();
    }
    assertThat(BlisCliTest.listsOption(help.out(), "--slo")).isTrue();
  }

  /**
   * A workload that arrives faster than the deployment serves it stops at the backlog limit with one
   * line (2^31 requests at 1e6 req/s ended in an OutOfMemoryError), flags or spec alike; exit 1.
   */
  @Test
  void aBacklogBeyondTheLimitStopsTheRunWithOneLine(@TempDir Path dir) throws Exception {
    Path out = dir.resolve("r.json");
    BlisCliTest.Outcome o = BlisCliTest.blis("run", "--num-requests", "2147483647", "--rate", "1e6",
        "--max-backlog", "2000", "--results-path", out.toString());
    assertThat(o.code()).as(o.err()).isEqualTo(1);
    assertThat(o.err().strip().lines()).singleElement().asString()
        .startsWith("blis run: more than 2,000 requests arrived and not yet finished at simulated time 0.002 s")
        .endsWith("raise --max-backlog (2000) if the memory allows");
    assertThat(o.out()).isEmpty();
    assertThat(out).doesNotExist();
    String spec = Files.readString(Path.of("../docs/examples/cluster-workload.yaml"))
        .replace("num_requests: 6000", "num_requests: 2147483647");
    Path many = file(dir, "many.yaml", spec.replaceAll("rate: [0-9.]+", "rate: 100000"));
    BlisCliTest.Outcome fromSpec = BlisCliTest.blis("run", "--workload-spec", many.toString(), "--max-backlog", "2000");
    assertThat(fromSpec.code()).as(fromSpec.err()).isEqualTo(1);
    assertThat(fromSpec.err()).contains("more than 2,000 requests arrived and not yet finished");
    refused(run("--max-backlog", "0"), "--max-backlog must be at least 1 request, got 0");
  }

  /** A --max-model-len beyond the model's context is refused, as vLLM refuses it (it was accepted). */
  @Test
  void aMaxModelLenBeyondTheModelsContextIsRefused() {
    refused(run("--max-model-len", "8192"),
        "max-model-len 8192 exceeds meta-llama/Llama-2-7b-hf's context of 4096 tokens", "give at most 4096");
    assertThat(run("--max-model-len", "4096").code()).isZero();
  }

  /**
   * An output in a directory that takes no new files (/proc, even for root) is refused before the
   * search, with why; it was found only after the whole search, as "no such file".
   */
  @Test
  void anOutputWhereNoFileCanBeCreatedIsRefusedBeforeTheWork() {
    org.junit.jupiter.api.Assumptions.assumeTrue(Files.isDirectory(Path.of("/proc/self")), "Linux /proc");
    refused(BlisCliTest.blis("capacity", "--slo", "ttft_p99=500ms", "--workload", "chatbot", "--out", "/proc/blis.json"),
        "--out: cannot write '/proc/blis.json': no such file, and '/proc' takes no new files");
    refused(run("--results-path", "/proc/blis.json"), "--results-path: cannot write '/proc/blis.json'");
  }

  /**
   * run says, as convert does, what a Go BLIS policy config's setting means here: its lora-affinity
   * scorer is read as this project's (its prefix-affinity and queue-depth keep Go BLIS's formulas).
   */
  @Test
  void aGoPolicyConfigsReinterpretedScorerIsNotedByRun(@TempDir Path dir) throws Exception {
    Path config = file(dir, "policy.yaml", """
        routing:
          policy: weighted
          scorers:
            - {name: prefix-affinity, weight: 2}
            - {name: queue-depth, weight: 1}
            - {name: lora-affinity, weight: 1}
        """);
    BlisCliTest.Outcome o = BlisCliTest.blis("run", "--num-requests", "10", "--num-instances", "2",
        "--policy-config", config.toString());
    assertThat(o.code()).as(o.err()).isZero();
    assertThat(o.err()).contains("note: " + config + ", line 6, column 14: scorer lora-affinity is read as this project's");
    assertThat(o.err().lines().filter(l -> l.startsWith("note:")).count()).isEqualTo(1);
    assertThat(o.out()).startsWith("{");
  }
}
