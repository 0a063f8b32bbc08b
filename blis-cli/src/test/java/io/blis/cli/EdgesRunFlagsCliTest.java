package io.blis.cli;

import static io.blis.cli.BadInputCliTest.refused;
import static io.blis.cli.BlisCliTest.blis;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Edges of the run-level flags (prefill/decode disaggregation, LoRA, flow control and SLO targets,
 * the horizon, Go BLIS's node pools, {@code day --out}): an out-of-range value or a flag that
 * cannot change the run is one line naming it (exit 2, nothing on stdout), a run whose requests
 * the deployment refused says how many and why, and a huge count bounded by the horizon runs.
 */
class EdgesRunFlagsCliTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  /** {@code blis run --num-requests 10} and {@code flags}. */
  private static BlisCliTest.Outcome run(String... flags) {
    List<String> args = new ArrayList<>(List.of("run", "--num-requests", "10"));
    args.addAll(List.of(flags));
    return blis(args.toArray(String[]::new));
  }

  /** As {@link #run} on two instances split into one prefill and one decode instance. */
  private static BlisCliTest.Outcome split(String... flags) {
    List<String> args = new ArrayList<>(List.of("--num-instances", "2", "--prefill-instances", "1",
        "--decode-instances", "1"));
    args.addAll(List.of(flags));
    return run(args.toArray(String[]::new));
  }

  private static Path file(Path dir, String name, String text) throws Exception {
    Path p = dir.resolve(name);
    Files.writeString(p, text);
    return p;
  }

  private static JsonNode json(BlisCliTest.Outcome o) throws Exception {
    assertThat(o.code()).as(o.err()).isZero();
    return JSON.readTree(o.out());
  }

  // ------------------------------------------------------------ 1. the transfer bandwidth

  @Test
  void aTransferBandwidthBelowTenMegabytesASecondIsRefusedNotAnOverflowedClock(@TempDir Path dir) throws Exception {
    refused(split("--pd-decider", "always", "--pd-transfer-bandwidth", "1e-300"),
        "--pd-transfer-bandwidth must be in [0.01, 1e6) GB/s (from 10 MB/s", "got 1.0E-300");
    refused(split("--pd-decider", "always", "--pd-transfer-bandwidth", "0.005"), "[0.01, 1e6) GB/s", "got 0.005");
    Path b = file(dir, "pd.yaml", "pools:\n  - {name: p, instances: 1, role: prefill}\n"
        + "  - {name: d, instances: 1, role: decode}\n"
        + "disaggregation: {decider: always, transfer_bandwidth_gb_s: 1e-300}\n");
    refused(run("--policy-config", b.toString()), "pd.yaml, line 4, column 60",
        "transfer_bandwidth_gb_s must be in [0.01, 1e6) GB/s", "got 1e-300");
    // the lowest bandwidth runs, its transfers far slower than the links'
    JsonNode slow = json(split("--pd-decider", "always", "--pd-transfer-bandwidth", "0.01"));
    JsonNode links = json(split("--pd-decider", "always"));
    assertThat(slow.at("/overall/completed_requests").asLong()).isEqualTo(10);
    assertThat(slow.at("/disaggregation/transfer_ms/mean").asDouble())
        .isGreaterThan(100 * links.at("/disaggregation/transfer_ms/mean").asDouble());
  }

  @Test
  void aTransferLongerThanAnHourStopsTheRunInOneLine() {
    // 120,000 tokens of Llama-3.1-70B's KV (327,680 bytes a token) at 10 MB/s: 3,932 s
    refused(blis("run", "--model", "llama-3.1-70b", "--tp", "4", "--num-instances", "2", "--prefill-instances", "1",
            "--decode-instances", "1", "--pd-decider", "always", "--pd-transfer-bandwidth", "0.01", "--num-requests", "1",
            "--prompt-tokens", "120000", "--prompt-tokens-stdev", "0", "--prompt-tokens-max", "130000",
            "--output-tokens", "4", "--output-tokens-stdev", "0"),
        "prefill/decode KV transfer: 39321272320 bytes at 0.01000 GB/s would take 3932 s, beyond the limit of 3600 s"
            + " (one hour) for one transfer; give a higher --pd-transfer-bandwidth");
  }

  // ------------------------------------------------------------ 2, 3. LoRA memory

  @Test
  void loraSlotsThatLeaveNoRoomAtAnyTensorParallelismSaySoInsteadOfNamingOne() {
    refused(run("--enable-lora", "--max-loras", "100000"), "meta-llama/Llama-2-7b-hf does not fit on 1 x H100",
        "the LoRA adapter slots (max_loras 100000 x max_lora_rank 16) take 7446.29 GiB per GPU at tensor parallelism 1"
            + " and still 2881.62 GiB at 32, where 65.81 GiB are left after the weights: no tensor parallelism up to 64"
            + " leaves room for the KV cache");
    BlisCliTest.Outcome rank = run("--max-lora-rank", "100000");
    refused(rank, "the LoRA adapter slots (max_loras 1 x max_lora_rank 100000) take 465.39 GiB per GPU",
        "no tensor parallelism up to 64 leaves room for the KV cache");
    assertThat(rank.err()).doesNotContain("minimum tensor parallelism that fits");
    // slots that do fit at a higher degree still name it
    refused(run("--max-loras", "1000"), "does not fit on 1 x H100", "the minimum tensor parallelism that fits is 2");
  }

  @Test
  void theFootprintPerRankIsBoundedOnTheFlagAndInTheFileAndTheSlotsCannotOverflow(@TempDir Path dir)
      throws Exception {
    refused(run("--lora-footprint-bytes-per-rank", "1e18", "--max-loras", "2"),
        "--lora-footprint-bytes-per-rank must be in (0, 1e10] bytes (10 GB per unit of rank), got 1.0E18");
    Path f = file(dir, "lora.yaml", "lora:\n  max_loras: 2\n  footprint_bytes_per_rank: 1e18\n");
    refused(run("--lora-config", f.toString()), "lora.yaml, line 3, column 29",
        "footprint_bytes_per_rank must be in (0, 1e10] bytes (10 GB per unit of rank), got 1e18");
    // the largest footprint, rank and slot count: more bytes than a long holds, said as not fitting
    BlisCliTest.Outcome most = run("--lora-footprint-bytes-per-rank", "1e10", "--max-loras", "1000000",
        "--max-lora-rank", "1000000");
    refused(most, "no tensor parallelism up to 64 leaves room for the KV cache");
    assertThat(most.err()).doesNotContain("reserved memory must be >= 0");
    assertThat(json(run("--lora-footprint-bytes-per-rank", "2e6", "--max-loras", "2")).at("/lora/max_loras").asInt())
        .isEqualTo(2);
  }

  // ------------------------------------------------------------ 4. YAML's .nan and .inf

  @Test
  void notANumberOrInfinityInALoraFileIsAFiniteNumberExpectedAtItsPlace(@TempDir Path dir) throws Exception {
    refused(run("--lora-config", file(dir, "nan.yaml", "lora:\n  max_loras: 2\n  footprint_bytes_per_rank: .nan\n")
        .toString()), "nan.yaml, line 3, column 29: footprint_bytes_per_rank must be a finite number, got .nan");
    refused(run("--lora-config", file(dir, "inf.yaml", "lora:\n  max_loras: 2\n  copy_latency_us: -.Inf\n")
        .toString()), "inf.yaml, line 3, column 20: copy_latency_us must be a finite number, got -.Inf");
    refused(run("--lora-config", file(dir, "pinf.yaml", "lora:\n  max_loras: 2\n  host_to_gpu_gb_s: .inf\n")
        .toString()), "pinf.yaml, line 3, column 21: host_to_gpu_gb_s must be a finite number, got .inf");
  }

  // ------------------------------------------------------------ 5. day --out

  @Test
  void dayOutNamingAFileSaysSo(@TempDir Path dir) throws Exception {
    Path plan = file(dir, "plan.yaml",
        "run: --num-requests 5 --autoscaler schedule\npoints:\n  - {name: a, flags: --autoscaler-option replicas=0:1}\n");
    Path taken = file(dir, "results.txt", "not a directory\n");
    refused(blis("day", "--plan", plan.toString(), "--out", taken.toString()),
        "--out: '" + taken + "' is a file, expected a directory");
    refused(blis("day", "--plan", plan.toString(), "--out", taken.resolve("sub").toString()),
        "--out: '" + taken + "' is a file, expected a directory");
    assertThat(blis("day", "--plan", plan.toString(), "--out", dir.resolve("out").toString(), "--quiet").code())
        .isZero();
  }

  // ------------------------------------------------------------ 6. a count bounded by the horizon

  @Test
  void aHugeRequestCountRunsWhenTheHorizonBoundsTheArrivals() throws Exception {
    for (String[] horizon : new String[][] {{"--horizon-s", "60"}, {"--horizon", "60000000"}}) {
      JsonNode r = json(blis("run", "--num-requests", "2147483647", "--rate", "10", horizon[0], horizon[1]));
      assertThat(r.at("/simulated_duration_s").asDouble()).isEqualTo(60.0);
      assertThat(r.at("/overall/injected_requests").asLong()).isBetween(500L, 700L);
    }
    // neither bounds them: refused for the rate, as before
    refused(blis("run", "--num-requests", "2147483647", "--rate", "10"),
        "--rate 10.0 req/s spreads --num-requests 2147483647 over 2.15e+08 s", "give --rate at least 68.1");
    refused(blis("run", "--num-requests", "2147483647", "--rate", "10", "--horizon-s", "31536000"),
        "spreads --num-requests 2147483647 over 2.15e+08 s");
  }

  // ------------------------------------------------------------ 7. PD flags that cannot apply

  @Test
  void prefillDecodeFlagsWithoutASplitOrWithoutTheirDeciderAreRefused(@TempDir Path dir) throws Exception {
    String noSplit = "has no effect without a prefill/decode split: give --prefill-instances and --decode-instances";
    refused(run("--pd-decider", "always"), "--pd-decider always " + noSplit);
    refused(run("--pd-decider", "prefix-threshold"), "--pd-decider prefix-threshold " + noSplit);
    refused(run("--pd-transfer-bandwidth", "10"), "--pd-transfer-bandwidth " + noSplit);
    refused(run("--pd-prefix-threshold", "8"), "--pd-prefix-threshold " + noSplit);
    refused(run("--pd-transfer-base-latency", "0.1"), "--pd-transfer-base-latency " + noSplit);
    refused(split("--pd-decider", "never", "--pd-prefix-threshold", "5"),
        "--pd-prefix-threshold applies to --pd-decider prefix-threshold only; the decider is never");
    refused(split("--pd-prefix-threshold", "5"), "the decider is never (the default)");
    refused(split("--pd-decider", "always", "--pd-prefix-threshold", "5"), "the decider is always");
    refused(split("--pd-transfer-bandwidth", "10"),
        "--pd-transfer-bandwidth has no effect with --pd-decider never (the default): no request is disaggregated");
    refused(split("--pd-decider", "always", "--pd-transfer-contention"),
        "--pd-transfer-contention has no effect without --pd-transfer-bandwidth");
    // what applies runs, the decider never on one pool too (it is the default)
    assertThat(json(split("--pd-decider", "prefix-threshold", "--pd-prefix-threshold", "5"))
        .at("/disaggregation/decider").asText()).isEqualTo("prefix-threshold");
    assertThat(json(split("--pd-decider", "always", "--pd-transfer-bandwidth", "10", "--pd-transfer-contention"))
        .at("/overall/completed_requests").asLong()).isEqualTo(10);
    assertThat(run("--pd-decider", "never").code()).isZero();
    // a bundle's roles are a split; its decider is the flags' default
    Path roles = file(dir, "roles.yaml", "pools:\n  - {name: p, instances: 1, role: prefill}\n"
        + "  - {name: d, instances: 1, role: decode}\ndisaggregation: {decider: prefix-threshold}\n");
    assertThat(json(run("--policy-config", roles.toString(), "--pd-prefix-threshold", "5"))
        .at("/disaggregation/decider").asText()).isEqualTo("prefix-threshold");
    Path whole = file(dir, "whole.yaml", "pools:\n  - {name: a, instances: 2}\n");
    refused(run("--policy-config", whole.toString(), "--pd-decider", "always"), "--pd-decider always " + noSplit);
  }

  @Test
  void aSweepConfigurationWithADeciderAndNoSplitIsRefusedAtItsPlace(@TempDir Path dir) throws Exception {
    String head = "question: rates\nrates: [2]\nworkload: {preset: chatbot, seed: 42}\n";
    Path grid = file(dir, "grid.yaml", head + "grid:\n  model: llama-3.1-8b\n  replicas: 2\n"
        + "  prefill_replicas: [0, 1]\n  decode_replicas: [0, 1]\n  pd_decider: [always]\n");
    refused(blis("sweep", "--grid", grid.toString(), "--out", dir.resolve("a").toString()),
        "grid.yaml:4:1: pd_decider always has no effect without a prefill/decode split (prefill_replicas and"
            + " decode_replicas 0)", "list those configurations under points");
    Path point = file(dir, "points.yaml", head
        + "points:\n  - {model: llama-3.1-8b, replicas: 2, pd_decider: prefix-threshold}\n");
    refused(blis("sweep", "--grid", point.toString(), "--out", dir.resolve("b").toString()),
        "points.yaml:5:5: pd_decider prefix-threshold has no effect without a prefill/decode split");
    assertThat(Files.exists(dir.resolve("a"))).isFalse();
  }

  // ------------------------------------------------------------ 8. requests the deployment refused

  @Test
  void everyRequestRefusedForItsLengthIsARefusalNotAnEmptyResult() {
    String why = "every request was refused, nothing was served: 10 prompt_exceeds_max_model_len (a prompt longer"
        + " than the max-model-len); check --max-model-len";
    refused(run("--max-model-len", "10"), why);
    refused(split("--decode-max-model-len", "10"), why);
  }

  @Test
  void someRequestsRefusedAreOneWarningLineWithTheirCount() throws Exception {
    BlisCliTest.Outcome o = blis("run", "--num-requests", "40", "--max-model-len", "600");
    JsonNode r = json(o);
    long tooLong = r.at("/overall/rejected_by_reason/prompt_exceeds_max_model_len").asLong()
        + r.at("/overall/rejected_by_reason/prompt_plus_output_exceeds_max_model_len").asLong();
    assertThat(tooLong).isBetween(1L, 39L);
    assertThat(o.err().strip().lines().toList()).singleElement().asString()
        .startsWith("warning: " + tooLong + " of 40 requests were refused: ")
        .contains("prompt_exceeds_max_model_len (a prompt longer than the max-model-len)")
        .contains("check --max-model-len").endsWith("the result counts them in rejected_by_reason");
    // nothing refused, nothing said
    assertThat(run("--max-model-len", "4096").err()).isEmpty();
  }

  @Test
  void requestsNamingAdaptersNobodyServesAreCountedAndSaid(@TempDir Path dir) throws Exception {
    Path registry = file(dir, "lora.yaml", "lora:\n  max_loras: 2\n  adapters:\n    - {id: sql, rank: 8}\n");
    refused(run("--lora-adapters", "3", "--lora-config", registry.toString()),
        "every request was refused, nothing was served: 10 adapter_not_served (a LoRA adapter the registry does not"
            + " list); add the adapters to the --lora-config registry");
    refused(run("--lora-adapters", "3"), "10 adapter_not_served (a LoRA adapter, and LoRA is off); give --enable-lora,"
        + " --max-loras or --lora-config");
    BlisCliTest.Outcome some = blis("run", "--num-requests", "40", "--lora-adapters", "3", "--lora-base-share", "0.5");
    long notServed = json(some).at("/overall/rejected_by_reason/adapter_not_served").asLong();
    assertThat(notServed).isBetween(1L, 39L);
    assertThat(some.err().strip().lines().toList()).singleElement().asString()
        .startsWith("warning: " + notServed + " of 40 requests were refused: " + notServed + " adapter_not_served");
  }

  @Test
  void replayOfATraceWhoseRequestsAreAllRefusedIsARefusalToo(@TempDir Path dir) throws Exception {
    Path trace = dir.resolve("t.csv");
    assertThat(run("--trace-out", trace.toString()).code()).isZero();
    refused(blis("replay", "--trace", trace.toString(), "--max-model-len", "10"),
        "every request was refused, nothing was served: 10 prompt_exceeds_max_model_len");
  }

  // ------------------------------------------------------------ 9. LoRA settings that change nothing

  @Test
  void loraSettingsThatCannotApplyAreRefused(@TempDir Path dir) throws Exception {
    refused(run("--lora-scorer-weight", "1"), "--lora-scorer-weight has no effect with LoRA off",
        "give --enable-lora, --max-loras or --lora-config");
    assertThat(run("--max-loras", "2", "--routing-policy", "weighted", "--lora-scorer-weight", "1").code()).isZero();
    Path spec = file(dir, "spec.yaml", "seed: 7\nnum_requests: 20\nclients:\n  - id: chat\n    rate: 14\n"
        + "    adapter: ''\n    input: {type: constant, value: 100}\n    output: {type: constant, value: 10}\n");
    refused(blis("run", "--workload-spec", spec.toString(), "--enable-lora"), "spec.yaml:6:5", "client chat: adapter is empty; name the LoRA adapter its requests use, or leave adapter out");
    Path lora = file(dir, "lora.yaml", "lora:\n  max_loras: 2\n  adapters:\n    - {id: '', rank: 8}\n");
    refused(run("--lora-config", lora.toString()), "lora.yaml, line 4, column 12", "id must be a name, got ''");
    refused(blis("serve", "--enable-lora", "--lora-modules", "a,a"), "--lora-modules: adapter 'a' is given twice");
    refused(blis("serve", "--enable-lora", "--lora-modules", "sql=/adapters/sql,sql"),
        "--lora-modules: adapter 'sql' is given twice");
  }

  // ------------------------------------------------------------ 10, 11. flow control

  @Test
  void kvThresholdsAreFractionsOfTheCache(@TempDir Path dir) throws Exception {
    refused(run("--flow-control", "--kv-cache-util-threshold", "1.5"),
        "--kv-cache-util-threshold must be in (0, 1] (a fraction of the KV cache), got 1.5");
    refused(run("--flow-control", "--kv-cache-util-threshold", "0"), "--kv-cache-util-threshold must be in (0, 1]");
    assertThat(run("--flow-control", "--saturation-detector", "utilization", "--kv-cache-util-threshold", "1")
        .code()).isZero();
    refused(run("--autoscaler", "saturation", "--autoscaler-option", "kv_threshold=5"),
        "saturation: kv_threshold must be in (0, 1] (a fraction of the KV cache), got 5.0");
    Path go = file(dir, "gaie.yaml", "admission: {policy: gaie-legacy, gaie_kv_threshold: 5}\n");
    refused(run("--policy-config", go.toString()), "gaie.yaml, line 1, column 53",
        "gaie_kv_threshold must be in (0, 1] (a fraction of the KV cache), got 5");
    Path bundle = file(dir, "bundle.yaml", "admission: {policy: gaie-legacy, kv_threshold: 5}\n");
    refused(run("--policy-config", bundle.toString()), "kv_threshold in (0, 1]");
  }

  @Test
  void sloTargetsNameKnownClassesAndNeedTheDeadlineOrder() {
    refused(run("--flow-control", "--dispatch-order", "slo-deadline", "--slo-targets", "critcal=1000"),
        "--slo-targets: unknown SLO class 'critcal'; known classes: critical, standard, batch, sheddable, background");
    refused(run("--flow-control", "--slo-targets", "critical=1000"),
        "--slo-targets has no effect with --dispatch-order fifo (the default): only slo-deadline orders the queue");
    refused(run("--flow-control", "--dispatch-order", "priority", "--slo-targets", "critical=1000"),
        "--slo-targets has no effect with --dispatch-order priority");
    assertThat(run("--flow-control", "--dispatch-order", "slo-deadline", "--slo-targets", "critical=1000").code())
        .isZero();
  }

  // ------------------------------------------------------------ 12. Go BLIS's node pools

  private static String nodePools(String gpu, String kv, String up, String down) {
    return "node_pools:\n  - name: p\n    gpu_type: " + gpu + "\n    gpus_per_node: 1\n    initial_nodes: 2\n"
        + "    max_nodes: 4\nautoscaler:\n  interval_us: 30000000\n  analyzer:\n    kv_cache_threshold: " + kv
        + "\n    scale_up_threshold: " + up + "\n    scale_down_boundary: " + down + "\n";
  }

  @Test
  void goNodePoolsNameAKnownGpuAndThresholdsInRange(@TempDir Path dir) throws Exception {
    refused(run("--policy-config", file(dir, "gpu.yaml", nodePools("Z100", "0.8", "0.8", "0.4")).toString()),
        "gpu.yaml, line 3, column 15: unknown GPU 'Z100' in gpu_type; bundled GPUs: H100, ");
    refused(run("--policy-config", file(dir, "kv.yaml", nodePools("H100", "5", "0.8", "0.4")).toString()),
        "kv.yaml, line 10, column 25: kv_cache_threshold must be in (0, 1] (a fraction of the KV cache; 0 for the"
            + " default 0.8), got 5");
    refused(run("--policy-config", file(dir, "band.yaml", nodePools("H100", "0.8", "0.4", "0.8")).toString()),
        "band.yaml, line 12, column 26: scale_down_boundary (0.8) must be below scale_up_threshold (0.4)");
    // left out (0), scale_down_boundary is 0.4: at or above it, scale_up_threshold is refused at its place
    refused(run("--policy-config", file(dir, "up.yaml", nodePools("H100", "0.8", "0.3", "0")).toString()),
        "up.yaml, line 11, column 25: scale_down_boundary (0.4) must be below scale_up_threshold (0.3)");
    assertThat(run("--policy-config", file(dir, "ok.yaml", nodePools("h100", "0.8", "0.9", "0.85")).toString())
        .code()).isZero();
  }

  // ------------------------------------------------------------ 13. a client's empty model

  @Test
  void aClientWithAnEmptyModelIsRefusedAtItsPlace(@TempDir Path dir) throws Exception {
    Path spec = file(dir, "spec.yaml", "seed: 7\nnum_requests: 20\nclients:\n  - id: chat\n    rate: 14\n"
        + "    model: \"\"\n    input: {type: constant, value: 100}\n    output: {type: constant, value: 10}\n");
    refused(blis("run", "--workload-spec", spec.toString()), "spec.yaml:6:5",
        "client chat: model is empty; name the model its requests are for, or leave model out for the deployment's model");
  }
}
