package io.blis.cli;

import static io.blis.cli.BlisCliTest.blis;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The gateway flow-control flags of {@code run}, {@code replay} and {@code capacity}, as Go BLIS names them. */
class FlowControlCliTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  /** An overload of two SLO classes on two instances. */
  private static final String SPEC = """
      seed: 3
      aggregate_rate: 60
      num_requests: 2400
      clients:
        - id: chat
          slo_class: critical
          rate_fraction: 1
          input: {type: constant, value: 300}
          output: {type: constant, value: 150}
        - id: bulk
          slo_class: sheddable
          rate_fraction: 2
          input: {type: constant, value: 1000}
          output: {type: constant, value: 300}
      """;

  private static JsonNode run(Path dir, String... extra) throws Exception {
    Path spec = dir.resolve("spec.yaml");
    Files.writeString(spec, SPEC);
    java.util.List<String> args = new java.util.ArrayList<>(java.util.List.of("run", "--model", "llama-3.1-8b",
        "--num-instances", "2", "--workload-spec", spec.toString()));
    args.addAll(java.util.List.of(extra));
    BlisCliTest.Outcome o = blis(args.toArray(String[]::new));
    assertThat(o.code()).as(o.err()).isZero();
    return JSON.readTree(o.out());
  }

  @Test
  void theGatewayQueueKeepsCriticalRequestsAheadAndReportsEveryEnd(@TempDir Path dir) throws Exception {
    JsonNode plain = run(dir);
    JsonNode gated = run(dir, "--flow-control", "--saturation-detector", "utilization", "--dispatch-order", "priority", "--max-gateway-queue-depth", "100",
        "--queue-shedding");
    assertThat(plain.has("gateway")).isFalse();
    JsonNode g = gated.path("gateway");
    assertThat(g.path("flow_control").asText())
        .isEqualTo("saturation utilization (queue 5, KV 0.8), dispatch priority / global-strict, tick 1000 us, 100 in all, shedding");
    long enqueued = g.path("enqueued").asLong();
    assertThat(enqueued).isEqualTo(2400);
    assertThat(g.path("dispatched").asLong() + g.path("rejected_queue_full").asLong() + g.path("shed").asLong()
        + g.path("expired_ttl").asLong() + g.path("timed_out").asLong() + g.path("still_queued").asLong())
        .isEqualTo(enqueued);
    assertThat(g.path("slo_classes").path("critical").path("shed").asLong()).isZero();
    assertThat(g.path("max_queue_depth").asLong()).isLessThanOrEqualTo(100);
    double plainTtft = plain.path("slo_classes").path("critical").path("ttft_ms").path("p99").asDouble();
    double gatedTtft = gated.path("slo_classes").path("critical").path("ttft_ms").path("p99").asDouble();
    assertThat(gatedTtft).isLessThan(plainTtft / 2);
  }

  @Test
  void aSimulationWithTheGatewayIsDeterministic(@TempDir Path dir) throws Exception {
    assertThat(run(dir, "--flow-control", "--saturation-detector", "concurrency", "--max-concurrency", "8",
        "--fairness-policy", "round-robin", "--dispatch-order", "slo-deadline",
        "--slo-targets", "critical=100000,sheddable=5000000", "--request-ttl", "2000000"))
        .isEqualTo(run(dir, "--flow-control", "--saturation-detector", "concurrency", "--max-concurrency", "8",
            "--fairness-policy", "round-robin", "--dispatch-order", "slo-deadline",
            "--slo-targets", "critical=100000,sheddable=5000000", "--request-ttl", "2000000"));
  }

  @Test
  void anAdmissionPolicyBesideTheGatewayIsNotedAsNotConsulted(@TempDir Path dir) throws Exception {
    Path spec = dir.resolve("spec.yaml");
    Files.writeString(spec, SPEC);
    BlisCliTest.Outcome o = blis("run", "--model", "llama-3.1-8b", "--workload-spec", spec.toString(),
        "--flow-control", "--admission-policy", "reject-all");
    assertThat(o.code()).as(o.err()).isZero();
    assertThat(o.err()).contains("note: --flow-control decides in place of the admission policy: --admission-policy reject-all is not consulted");
    assertThat(JSON.readTree(o.out()).path("overall").path("completed_requests").asLong()).isEqualTo(2400);
  }

  /** The two flow-control command lines of Go BLIS's docs/guide/admission.md (f90a1e3), as written. */
  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "--flow-control --saturation-detector utilization --queue-depth-threshold 5 --kv-cache-util-threshold 0.8"
          + " --per-band-capacity 100 --max-gateway-queue-depth 500"
          + "|saturation utilization (queue 5, KV 0.8), dispatch fifo, tick 1000 us, 100 per band, 500 in all",
      "--flow-control --saturation-detector utilization --queue-depth-threshold 5 --kv-cache-util-threshold 0.8"
          + " --dispatch-order slo-deadline --slo-targets critical=100000,standard=500000"
          + "|saturation utilization (queue 5, KV 0.8), dispatch slo-deadline / global-strict, tick 1000 us"})
  void goBlisDocsCommandLinesRunAsWritten(String flags, String settings) throws Exception {
    String[] f = flags.split(" ");
    String[] args = new String[5 + f.length];
    System.arraycopy(new String[] {"run", "--model", "qwen/qwen3-14b", "--num-requests", "60"}, 0, args, 0, 5);
    System.arraycopy(f, 0, args, 5, f.length);
    BlisCliTest.Outcome o = blis(args);
    assertThat(o.code()).as(o.err()).isZero();
    JsonNode g = JSON.readTree(o.out()).path("gateway");
    assertThat(g.path("flow_control").asText()).isEqualTo(settings);
    assertThat(g.path("dispatched").asLong()).isEqualTo(60);
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "--dispatch-order priority|the gateway queue's flags (--saturation-detector, --dispatch-order, --max-gateway-queue-depth, ...) need --flow-control",
      "--flow-control --saturation-detector busy|--saturation-detector: unknown value 'busy', expected one of utilization, concurrency, never",
      "--flow-control --dispatch-order lifo|--dispatch-order: unknown value 'lifo', expected one of fifo, priority, slo-deadline",
      "--flow-control --fairness-policy random|--fairness-policy: unknown value 'random', expected one of global-strict, round-robin",
      "--flow-control --queue-depth-threshold 0|--flow-control: the queue depth threshold must be a finite number > 0, got 0.0",
      "--flow-control --max-concurrency 0|--flow-control: max concurrency must be at least 1, got 0",
      "--flow-control --max-gateway-queue-depth -1|--flow-control: queue capacities must be >= 0 (0 for no limit), got 0 per band and -1 in all",
      "--flow-control --dispatch-tick-interval -5|--flow-control: the dispatch tick must be 1 to 3600000000 us (one hour), got -5",
      "--flow-control --in-flight-eviction|--in-flight-eviction (Go BLIS's eviction of running sheddable requests) is not modelled here",
      "--flow-control --usage-limit-threshold 0.5|--usage-limit-threshold: only 1.0 (no per-band ceiling) is modelled here, got 0.5",
      "--flow-control --slo-targets critical|--slo-targets: expected CLASS=MICROSECONDS, got 'critical'",
      "--flow-control --slo-targets critical=fast|--slo-targets: critical: expected a whole number of microseconds, got 'fast'",
      "--flow-control --slo-targets critical=0|--slo-targets: critical: the target must be > 0 us, got 0",
      "--flow-control --slo-targets a=1,a=2|--slo-targets: a is given twice",
      "--flow-control --request-ttl 9000000000|--flow-control: the request TTL must be 0 (none) to 3600000000 us (one hour), got 9000000000"})
  void badGatewaySettingsAreOneLineAndExitTwo(String flags, String message) {
    String[] f = flags.split(" ");
    String[] args = new String[2 + f.length];
    args[0] = "run";
    args[1] = "--num-requests=5";
    System.arraycopy(f, 0, args, 2, f.length);
    BlisCliTest.Outcome o = blis(args);
    assertThat(o.code()).isEqualTo(2);
    assertThat(o.out()).isEmpty();
    assertThat(o.err().strip().lines().findFirst().orElse("")).contains(message);
  }
}
