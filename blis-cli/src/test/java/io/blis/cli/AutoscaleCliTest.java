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
  private static final String SPEC = """
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

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "--max-replicas 4|the autoscaling flags (--min-replicas, --max-replicas, --autoscaler-option, ...) need --autoscaler",
      "--autoscaler busy|--autoscaler: ",
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

  @Test
  void capacityRefusesTheAutoscaler() {
    BlisCliTest.Outcome o = blis("capacity", "--slo", "ttft_p99=500", "--autoscaler", "hpa");
    assertThat(o.code()).isEqualTo(2);
    assertThat(o.err()).contains("--autoscaler does not apply to capacity");
  }
}
