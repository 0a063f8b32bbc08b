package io.blis.cli;

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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@code blis run --autoscaler}: a pool that grows under a burst and shrinks after it. */
class AutoscaleCliTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  /** 2 req/s all along, 30 req/s more from 300 s to 900 s, for 20 simulated minutes. */
  static final String SPEC = """
      seed: 5
      horizon_s: 1200
      clients:
        - id: base
          rate: 2
          input: {type: constant, value: 800}
          output: {type: constant, value: 200}
        - id: burst
          rate: 30
          lifecycle: [{start_s: 300, end_s: 900}]
          input: {type: constant, value: 800}
          output: {type: constant, value: 200}
      """;

  private static BlisCliTest.Outcome run(Path dir, String... extra) throws Exception {
    Path spec = dir.resolve("spec.yaml");
    Files.writeString(spec, SPEC);
    List<String> args = new ArrayList<>(List.of("run", "--model", "llama-3.1-8b", "--workload-spec", spec.toString()));
    args.addAll(List.of(extra));
    return blis(args.toArray(String[]::new));
  }

  @Test
  void aWarmupSlowdownSlowsTheNewReplicasAndAFactorOfOneIsNone(@TempDir Path dir) throws Exception {
    List<String> flags = List.of("--autoscaler", "hpa", "--autoscaler-option", "metric=waiting",
        "--autoscaler-option", "target=2", "--max-replicas", "6", "--provisioning-delay-s", "60",
        "--loading-delay-s", "20", "--warmup-s", "10", "--scale-down-window-s", "60");
    BlisCliTest.Outcome plain = run(dir, flags.toArray(String[]::new));
    List<String> one = new ArrayList<>(flags);
    one.addAll(List.of("--warmup-slowdown", "1"));
    List<String> slow = new ArrayList<>(flags);
    slow.addAll(List.of("--warmup-slowdown", "4", "--warmup-slowdown-s", "120"));
    assertThat(run(dir, one.toArray(String[]::new)).out()).isEqualTo(plain.out());
    BlisCliTest.Outcome slowed = run(dir, slow.toArray(String[]::new));
    assertThat(slowed.code()).as(slowed.err()).isZero();
    double plainE2e = JSON.readTree(plain.out()).path("overall").path("e2e_ms").path("mean").asDouble();
    double slowE2e = JSON.readTree(slowed.out()).path("overall").path("e2e_ms").path("mean").asDouble();
    assertThat(slowE2e).isGreaterThan(plainE2e * 1.05);
  }

  @Test
  void theHpaGrowsThePoolUnderTheBurstAndDrainsItAfterwards(@TempDir Path dir) throws Exception {
    BlisCliTest.Outcome o = run(dir, "--autoscaler", "hpa", "--autoscaler-option", "metric=waiting",
        "--autoscaler-option", "target=2", "--max-replicas", "6", "--provisioning-delay-s", "60",
        "--loading-delay-s", "20", "--warmup-s", "10", "--scale-down-window-s", "60", "--gpus-per-node", "2",
        "--node-cost-per-hour", "10");
    assertThat(o.code()).as(o.err()).isZero();
    JsonNode r = JSON.readTree(o.out());
    JsonNode a = r.path("autoscaling");
    assertThat(a.path("autoscaler").asText()).isEqualTo("hpa");
    assertThat(a.path("peak_replicas").asInt()).isBetween(2, 6);
    assertThat(a.path("scale_ups").asLong()).isPositive();
    assertThat(a.path("scale_downs").asLong()).isPositive();
    // nodes of 2 GPUs at 10 an hour: the cost is the node hours' and the GPU hours twice them
    assertThat(a.path("cost").asDouble()).isCloseTo(10 * a.path("node_hours").asDouble(),
        org.assertj.core.data.Offset.offset(0.01));
    assertThat(a.path("gpu_hours").asDouble()).isCloseTo(2 * a.path("node_hours").asDouble(),
        org.assertj.core.data.Offset.offset(0.001));
    // before the burst one replica; during it more; at the end one again; nothing lost
    JsonNode first = a.path("timeline").get(0);
    assertThat(first.path("ready").asInt()).isEqualTo(1);
    int most = 0;
    for (JsonNode s : a.path("timeline")) {
      most = Math.max(most, s.path("ready").asInt());
    }
    assertThat(most).isGreaterThan(1);
    JsonNode last = a.path("timeline").get(a.path("timeline").size() - 1);
    assertThat(last.path("desired").asInt()).isEqualTo(1);
    JsonNode overall = r.path("overall");
    assertThat(overall.path("completed_requests").asLong()).isEqualTo(overall.path("injected_requests").asLong());
    // the same flags, the same bytes
    assertThat(run(dir, "--autoscaler", "hpa", "--autoscaler-option", "metric=waiting",
        "--autoscaler-option", "target=2", "--max-replicas", "6", "--provisioning-delay-s", "60",
        "--loading-delay-s", "20", "--warmup-s", "10", "--scale-down-window-s", "60", "--gpus-per-node", "2",
        "--node-cost-per-hour", "10").out()).isEqualTo(o.out());
  }

  @Test
  void theScheduleScalerHoldsItsReplicasAndTheFixedPoolHasNoSection(@TempDir Path dir) throws Exception {
    BlisCliTest.Outcome fixed = run(dir, "--num-instances", "2");
    assertThat(JSON.readTree(fixed.out()).has("autoscaling")).isFalse();
    BlisCliTest.Outcome o = run(dir, "--autoscaler", "schedule", "--autoscaler-option", "replicas=0:3",
        "--max-replicas", "3", "--provisioning-delay-s", "0", "--loading-delay-s", "0", "--warmup-s", "0");
    assertThat(o.code()).as(o.err()).isZero();
    JsonNode a = JSON.readTree(o.out()).path("autoscaling");
    // asked for 3 at the first tick (15 s), ready at once
    assertThat(a.path("timeline").get(1).path("ready").asInt()).isEqualTo(3);
  }

  @Test
  void eachPoolOfABundleScalesOnItsOwnWithinItsOwnBounds(@TempDir Path dir) throws Exception {
    Path bundle = dir.resolve("two.yaml");
    Files.writeString(bundle, """
        pools:
          - {name: small, instances: 1, model: llama-3.1-8b, max_replicas: 3}
          - {name: pinned, instances: 2, model: qwen/qwen3-14b, autoscaler: {policy: schedule, replicas: "0:5"},
             min_replicas: 2, max_replicas: 2}
        """);
    Path spec = dir.resolve("spec.yaml");
    Files.writeString(spec, SPEC.replace("id: base", "id: base\n    model: llama-3.1-8b")
        .replace("id: burst", "id: burst\n    model: llama-3.1-8b"));
    BlisCliTest.Outcome o = blis("run", "--workload-spec", spec.toString(), "--policy-config", bundle.toString(),
        "--autoscaler", "schedule", "--autoscaler-option", "replicas=0:3", "--provisioning-delay-s", "0",
        "--loading-delay-s", "0", "--warmup-s", "0", "--gpus-per-node", "1");
    assertThat(o.code()).as(o.err()).isZero();
    JsonNode a = JSON.readTree(o.out()).path("autoscaling");
    JsonNode small = a.path("pools").path("small");
    JsonNode pinned = a.path("pools").path("pinned");
    // the run's schedule asks for 3 at the first tick (15 s); the pinned pool's own asks for 5, held to 2
    assertThat(small.path("timeline").get(1).path("ready").asInt()).isEqualTo(3);
    assertThat(pinned.path("autoscaler").asText()).isEqualTo("schedule");
    assertThat(pinned.path("peak_replicas").asInt()).isEqualTo(2);
    assertThat(a.path("peak_replicas").asInt()).isEqualTo(5);
    assertThat(a.path("timeline").get(1).path("ready").asInt()).isEqualTo(5);
    // both pools are H100s: one node pool of 1-GPU nodes, whose figures each pool's report gives, counted once
    assertThat(small.path("gpu_hours").asDouble()).isEqualTo(pinned.path("gpu_hours").asDouble());
    assertThat(a.path("gpu_hours").asDouble()).isEqualTo(small.path("gpu_hours").asDouble());
    assertThat(a.path("peak_nodes").asInt()).isEqualTo(5);
    assertThat(a.path("replica_gpu_hours").asDouble()).isCloseTo(small.path("replica_gpu_hours").asDouble()
        + pinned.path("replica_gpu_hours").asDouble(), org.assertj.core.data.Offset.offset(2e-4));
    // every request is Llama's: all on the small pool, none on the pinned one
    long finished = 0;
    for (JsonNode h : a.path("hours")) {
      finished += h.path("finished").asLong();
    }
    assertThat(finished).isEqualTo(JSON.readTree(o.out()).path("overall").path("injected_requests").asLong());
    assertThat(pinned.path("hours").size()).isZero();
    // --max-nodes bounds the shared node pool, not each pool: 4 nodes hold the 3 initial replicas and one more
    BlisCliTest.Outcome bounded = blis("run", "--workload-spec", spec.toString(), "--policy-config", bundle.toString(),
        "--autoscaler", "schedule", "--autoscaler-option", "replicas=0:3", "--provisioning-delay-s", "0",
        "--loading-delay-s", "0", "--warmup-s", "0", "--gpus-per-node", "1", "--max-nodes", "4");
    assertThat(bounded.code()).as(bounded.err()).isZero();
    JsonNode b = JSON.readTree(bounded.out()).path("autoscaling");
    assertThat(b.path("peak_nodes").asInt()).isEqualTo(4);
    assertThat(b.at("/pools/small/timeline/1/ready").asInt()).isEqualTo(2);
    // the pools' keys need an autoscaled run, and a pool's bounds hold its instances
    BlisCliTest.Outcome unscaled = blis("run", "--workload-spec", spec.toString(), "--policy-config", bundle.toString());
    assertThat(unscaled.code()).isEqualTo(2);
    assertThat(unscaled.err()).contains("pool 'pinned': min_replicas, max_replicas and autoscaler apply to an"
        + " autoscaled run; give --autoscaler");
    BlisCliTest.Outcome tooFew = blis("run", "--workload-spec", spec.toString(), "--policy-config", bundle.toString(),
        "--autoscaler", "hpa", "--min-replicas", "2");
    assertThat(tooFew.code()).isEqualTo(2);
    assertThat(tooFew.err().strip()).endsWith("pool 'small': autoscaling: the initial replicas (1) must be between"
        + " the minimum (2) and the maximum (3)");
  }

  @Test
  void prefillAndDecodePoolsScaleApartAndADrainedPrefillReplicaLosesNothing(@TempDir Path dir) throws Exception {
    Path bundle = dir.resolve("pd.yaml");
    Files.writeString(bundle, """
        pools:
          - {name: pre, instances: 3, role: prefill, max_replicas: 3, autoscaler: {policy: schedule, replicas: "0:1"}}
          - {name: dec, instances: 1, role: decode, max_replicas: 3}
        disaggregation: {decider: always}
        """);
    BlisCliTest.Outcome o = run(dir, "--policy-config", bundle.toString(), "--autoscaler", "schedule",
        "--autoscaler-option", "replicas=0:3", "--provisioning-delay-s", "0", "--loading-delay-s", "0",
        "--warmup-s", "0", "--gpus-per-node", "1");
    assertThat(o.code()).as(o.err()).isZero();
    JsonNode root = JSON.readTree(o.out());
    long injected = root.path("overall").path("injected_requests").asLong();
    assertThat(root.path("overall").path("completed_requests").asLong()).isEqualTo(injected);
    assertThat(root.path("disaggregation").path("disaggregated").asLong()).isEqualTo(injected);
    JsonNode pre = root.path("autoscaling").path("pools").path("pre");
    JsonNode dec = root.path("autoscaling").path("pools").path("dec");
    // at the first tick (15 s) the prefill pool drains to 1 and the decode pool grows to 3
    assertThat(pre.path("timeline").get(1).path("desired").asInt()).isEqualTo(1);
    assertThat(pre.path("peak_replicas").asInt()).isEqualTo(3);
    assertThat(dec.path("timeline").get(1).path("ready").asInt()).isEqualTo(3);
    // the two drained prefill replicas freed their GPUs once they held nothing: about 15 s each, not the run
    double hours = root.path("simulated_duration_s").asDouble() / 3600;
    assertThat(pre.path("replica_gpu_hours").asDouble()).isBetween(hours + 2 * 15 / 3600.0 - 1e-4, hours + 2 * 20 / 3600.0); // 4 decimals in the JSON
    // and took nothing new: one prefill instance ran the prefill steps of all but the first 15 s's requests
    long busiest = 0;
    long stepsElsewhere = 0;
    for (JsonNode inst : root.path("instances")) {
      if (inst.path("pool").asText().equals("pre")) {
        long n = inst.path("steps").asLong();
        stepsElsewhere += n;
        busiest = Math.max(busiest, n);
      }
    }
    stepsElsewhere -= busiest;
    assertThat(stepsElsewhere).isBetween(1L, 2 * 15 * 2L); // 2 req/s for 15 s, one prefill step each
    assertThat(busiest).isGreaterThan(100 * stepsElsewhere);
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "--max-replicas 4|the autoscaling flags (--min-replicas, --max-replicas, --autoscaler-option, ...) need --autoscaler",
      "--warmup-slowdown 2|the autoscaling flags (--min-replicas, --max-replicas, --autoscaler-option, ...) need --autoscaler",
      "--autoscaler saturation --warmup-slowdown 0.5|--warmup-slowdown must be a factor in [1, 100], got 0.5",
      "--autoscaler saturation --warmup-slowdown-s -1|--warmup-slowdown-s must be in [0, 86400], got -1.0",
      "--autoscaler busy|--autoscaler: unknown AutoscalerProvider 'busy'; available: hpa, saturation, schedule, wva",
      "--autoscaler hpa --autoscaler-option metric=latency|hpa: parameter metric must be one of waiting, running, kv, rate, ttft, got 'latency'",
      "--autoscaler hpa --autoscaler-option target=0|hpa: parameter target must be positive, got 0",
      "--autoscaler hpa --autoscaler-option depth|--autoscaler-option: expected KEY=VALUE, got 'depth'",
      "--autoscaler schedule|schedule: parameter replicas is required, e.g. replicas=0:2,8:6,18:3",
      "--autoscaler schedule --autoscaler-option replicas=25:1|schedule: '25:1': the hour must be 0 to 23 and the replicas >= 0",
      "--autoscaler hpa --min-replicas 2|autoscaling needs 1 <= --min-replicas <= --num-instances (the replicas ready at the start) <= --max-replicas",
      "--autoscaler hpa --trace-level decisions|--trace-level decisions does not apply to an autoscaled pool",
      "--autoscaler hpa --warmup-s -1|--warmup-s must be between 0 and 3600 seconds, got -1.0",
      "--autoscaler hpa --tp 2 --gpus-per-node 1|autoscaling: a node of 1 GPUs cannot hold a replica of 2"})
  void badAutoscalingSettingsAreOneLineAndExitTwo(String flags, String message) {
    List<String> args = new ArrayList<>(List.of("run", "--num-requests", "5"));
    args.addAll(List.of(flags.split(" ")));
    BlisCliTest.Outcome o = blis(args.toArray(String[]::new));
    assertThat(o.code()).as(o.err()).isEqualTo(2);
    assertThat(o.out()).isEmpty();
    assertThat(o.err().strip().lines().findFirst().orElse("")).contains(message);
  }

  /** Go BLIS's docs/configs/phase2-autoscaler.yaml (f90a1e3), its keys and values as written there. */
  private static final String GO_CONFIG = """
      node_pools:
        - name: h100-tp1
          gpu_type: H100
          gpus_per_node: 1
          gpu_memory_gib: 80.0
          initial_nodes: 5
          min_nodes: 0
          max_nodes: 5
          cost_per_hour: 0.0
          provisioning_delay:
            mean: 0.0
            stddev: 0.0
      instance_lifecycle:
        loading_delay:
          mean: 240.0
          stddev: 30.0
        warm_start_initial_instances: true
      autoscaler:
        interval_us: 30000000
        scale_up_stabilization_window_us: 240000000
        scale_down_stabilization_window_us: 240000000
        hpa_scrape_delay:
          mean: 0.0
          stddev: 0.0
        analyzer:
          kv_cache_threshold: 0.8
          scale_up_threshold: 0.8
          scale_down_boundary: 0.4
          avg_input_tokens: 512.0
      """;

  @Test
  void goBlisAutoscalerPolicyConfigRunsTheVariantAutoscalerOnItsNodePool(@TempDir Path dir) throws Exception {
    Path config = dir.resolve("phase2-autoscaler.yaml");
    Files.writeString(config, GO_CONFIG);
    BlisCliTest.Outcome o = run(dir, "--policy-config", config.toString());
    assertThat(o.code()).as(o.err()).isZero();
    assertThat(o.err()).contains("gpu_memory_gib has no meaning here")
        .contains("loading_delay.stddev has no meaning here");
    JsonNode r = JSON.readTree(o.out());
    JsonNode a = r.path("autoscaling");
    assertThat(a.path("autoscaler").asText()).isEqualTo("wva");
    // five one-GPU nodes from the start, one replica on them, at most five
    JsonNode first = a.path("timeline").get(0);
    assertThat(first.path("nodes").asInt()).isEqualTo(5);
    assertThat(first.path("ready").asInt()).isEqualTo(1);
    assertThat(a.path("peak_replicas").asInt()).isBetween(1, 5);
    // the burst asks for more: they load for 240 s (no provisioning: the nodes are there)
    int most = 0;
    for (JsonNode s : a.path("timeline")) {
      most = Math.max(most, s.path("ready").asInt());
      if (s.path("t_s").asDouble() < 240) {
        assertThat(s.path("ready").asInt()).isEqualTo(1);
      }
    }
    assertThat(most).isGreaterThan(1);
    assertThat(r.path("overall").path("completed_requests").asLong())
        .isEqualTo(r.path("overall").path("injected_requests").asLong());
  }

  @Test
  void convertNamesTheFlagsThatSimulateAGoBlisAutoscalingConfigIdentically(@TempDir Path dir) throws Exception {
    Path config = dir.resolve("phase2-autoscaler.yaml");
    Files.writeString(config, GO_CONFIG);
    Path out = dir.resolve("bundle.yaml");
    BlisCliTest.Outcome c = blis("convert", config.toString(), "-o", out.toString());
    assertThat(c.code()).as(c.err()).isZero();
    String note = Files.readAllLines(out).stream().filter(l -> l.contains("give them as flags: ")).findFirst().orElseThrow();
    String flags = note.substring(note.indexOf("give them as flags: ") + "give them as flags: ".length());
    assertThat(flags).startsWith("--autoscaler wva").contains("--initial-nodes 5").contains("--loading-delay-s 240.0");
    BlisCliTest.Outcome viaConfig = run(dir, "--policy-config", config.toString());
    List<String> args = new ArrayList<>(List.of(flags.split(" ")));
    BlisCliTest.Outcome viaFlags = run(dir, args.toArray(String[]::new));
    assertThat(viaFlags.code()).as(viaFlags.err()).isZero();
    assertThat(viaFlags.out()).isEqualTo(viaConfig.out());
  }

  @Test
  void aGoBlisAutoscalerSectionWithAnUnknownKeyIsOneLine(@TempDir Path dir) throws Exception {
    Path config = dir.resolve("bad.yaml");
    Files.writeString(config, "autoscaler:\n  interval_us: 1000000\n  cooldown_s: 5\n");
    BlisCliTest.Outcome o = blis("run", "--num-requests", "5", "--policy-config", config.toString());
    assertThat(o.code()).isEqualTo(2);
    assertThat(o.err().lines().findFirst().orElse("")).contains("bad.yaml, line 3, column 15: unknown key 'cooldown_s' in autoscaler; accepted: interval_us");
  }

  @Test
  void capacityRefusesTheAutoscaler() {
    BlisCliTest.Outcome o = blis("capacity", "--slo", "ttft_p99=500", "--autoscaler", "hpa");
    assertThat(o.code()).isEqualTo(2);
    assertThat(o.err()).contains("--autoscaler does not apply to capacity");
  }
}
