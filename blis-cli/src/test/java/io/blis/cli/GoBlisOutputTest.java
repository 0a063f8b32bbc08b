package io.blis.cli;

import static io.blis.cli.BlisCliTest.blis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code --output-format go-blis} prints Go BLIS's stdout: its objects and sections. */
class GoBlisOutputTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String HEADER = "=== Simulation Metrics ===\n";

  /** The objects after each {@code === Simulation Metrics ===} line, in order. */
  private static List<JsonNode> objects(String out) throws IOException {
    List<JsonNode> all = new ArrayList<>();
    for (int at = out.indexOf(HEADER); at >= 0; at = out.indexOf(HEADER, at + 1)) {
      all.add(JSON.readTree(out.substring(at + HEADER.length())));
    }
    return all;
  }

  /** The lines of section {@code name}, up to the next section. */
  private static List<String> section(String out, String name) {
    List<String> lines = new ArrayList<>();
    boolean in = false;
    for (String l : out.split("\n")) {
      if (l.startsWith("=== ")) {
        in = l.equals("=== " + name + " ===");
        continue;
      }
      if (in) {
        lines.add(l);
      }
    }
    return lines;
  }

  private static double number(List<String> lines, String label) {
    for (String l : lines) {
      if (l.strip().startsWith(label + ":")) {
        return Double.parseDouble(l.strip().substring(label.length() + 1).strip());
      }
    }
    throw new AssertionError(label + " not in " + lines);
  }

  @Test
  void severalInstancesPrintAnObjectEachThenTheClusterThenFitnessAndTraceSummaryOnStdout() throws IOException {
    String[] args = {"run", "--model", "qwen/qwen3-14b", "--num-instances", "3", "--rate", "40", "--num-requests",
        "240", "--trace-level", "decisions", "--summarize-trace", "--fitness-weights",
        "p99_ttft:3,mean_e2e:1,throughput:2"};
    BlisCliTest.Outcome go = blis(concat(args, "--output-format", "go-blis"));
    assertThat(go.code()).as(go.err()).isZero();
    assertThat(go.err()).doesNotContain("fitness").doesNotContain("Trace Summary");
    List<JsonNode> objects = objects(go.out());
    assertThat(objects).extracting(n -> n.get("instance_id").asText())
        .containsExactly("instance_0", "instance_1", "instance_2", "cluster");
    JsonNode cluster = objects.get(3);
    long completed = 0;
    long output = 0;
    for (JsonNode n : objects.subList(0, 3)) {
      completed += n.get("completed_requests").asLong();
      output += n.get("total_output_tokens").asLong();
      assertThat(n.get("itl_mean_ms").asDouble()).as("per-instance inter-token latencies kept").isPositive();
    }
    assertThat(completed).isEqualTo(cluster.get("completed_requests").asLong()).isEqualTo(240);
    assertThat(output).isEqualTo(cluster.get("total_output_tokens").asLong());

    // Go's score is the weighted sum of the components; this project's own the weighted mean
    List<String> fitness = section(go.out(), "Fitness Evaluation");
    assertThat(fitness).hasSize(4);
    double ttft = number(fitness, "p99_ttft");
    double e2e = number(fitness, "mean_e2e");
    double throughput = number(fitness, "throughput");
    double score = number(fitness, "Score");
    assertThat(score).isCloseTo(3 * ttft + e2e + 2 * throughput, within(2e-6));
    BlisCliTest.Outcome own = blis(args);
    Matcher m = Pattern.compile("fitness: ([0-9.]+)").matcher(own.err());
    assertThat(m.find()).as(own.err()).isTrue();
    // the same metrics; the rates over the duration from time 0 here, from the first arrival there
    assertThat(score).isCloseTo(6 * Double.parseDouble(m.group(1)), within(1e-4));
    assertThat(throughput).isCloseTo(cluster.get("responses_per_sec").asDouble()
        / (cluster.get("responses_per_sec").asDouble() + 100), within(1e-6));

    List<String> trace = section(go.out(), "Trace Summary");
    assertThat(number(trace, "Total Decisions")).isEqualTo(240);
    assertThat(number(trace, "Admitted")).isEqualTo(240);
    assertThat(number(trace, "Unique Targets")).isEqualTo(3);
    long routed = 0;
    for (String l : trace) {
      if (l.startsWith("  instance_")) {
        routed += Long.parseLong(l.substring(l.indexOf(':') + 1).strip());
      }
    }
    assertThat(routed).isEqualTo(240);
    // round-robin does not score its candidates: nothing to regret (the formula: regretIsTheBestScoreLessTheChosen)
    assertThat(number(trace, "Mean Regret")).isZero();
    assertThat(number(trace, "Max Regret")).isZero();
  }

  @Test
  void oneInstancePrintsTheClusterObjectAloneWithGoSpacing() throws IOException {
    BlisCliTest.Outcome go = blis("run", "--model", "qwen/qwen3-14b", "--num-requests", "20", "--output-format",
        "go-blis");
    assertThat(go.code()).as(go.err()).isZero();
    assertThat(objects(go.out())).extracting(n -> n.get("instance_id").asText()).containsExactly("cluster");
    assertThat(go.out()).startsWith(HEADER + "{\n  \"instance_id\": \"cluster\",")
        .contains("\n  \"preemption_count\": 0,\n");
  }

  @Test
  void prefillAndDecodePoolsGetGoBlisPdLinesFromTheResult() throws IOException {
    String[] args = {"run", "--model", "qwen/qwen3-14b", "--num-instances", "4", "--prefill-instances", "2",
        "--decode-instances", "2", "--pd-decider", "always", "--rate", "100", "--num-requests", "300"};
    BlisCliTest.Outcome go = blis(concat(args, "--output-format", "go-blis"));
    assertThat(go.code()).as(go.err()).isZero();
    JsonNode result = JSON.readTree(blis(args).out());
    List<String> pd = section(go.out(), "PD Metrics");
    JsonNode d = result.path("disaggregation");
    assertThat(number(pd, "Disaggregated Requests")).isEqualTo(d.path("transferred").asDouble()).isEqualTo(300);
    // every prefill ends on a prefill instance, every request completes on a decode instance
    double seconds = result.path("simulated_duration_s").asDouble();
    String rate = String.format(java.util.Locale.ROOT, "%.4f sub-req/s", 300 / seconds);
    assertThat(pd).contains("Prefill Throughput: " + rate, "Decode Throughput: " + rate, "Load Imbalance Ratio: 1.0000");
    String ttft = pd.stream().filter(l -> l.startsWith("Parent TTFT (us): mean=")).findFirst().orElseThrow();
    double meanUs = Double.parseDouble(ttft.substring("Parent TTFT (us): mean=".length(), ttft.indexOf(' ', 24)));
    assertThat(meanUs).isCloseTo(d.at("/ttft_ms/mean").asDouble() * 1000, within(0.1));
    assertThat(number(pd, "Mean Transfer Queue Depth")).isEqualTo(d.path("mean_concurrent_transfers").asDouble());
    assertThat(number(pd, "Peak Concurrent Transfers")).isEqualTo(d.path("peak_concurrent_transfers").asDouble());
  }

  @Test
  void classesKvPressureAndAnomaliesGetTheirSections(@TempDir Path dir) throws IOException {
    Path spec = dir.resolve("two-classes.yaml");
    Files.writeString(spec, """
        seed: 5
        num_requests: 300
        clients:
          - id: chat
            slo_class: critical
            tenant: alice
            rate: 30
            arrival: {process: poisson}
            input: {type: gaussian, mean: 600, std: 200, min: 50, max: 1500}
            output: {type: gaussian, mean: 120, std: 40, min: 10, max: 300}
          - id: bulk
            slo_class: batch
            tenant: bob
            rate: 30
            arrival: {process: poisson}
            input: {type: gaussian, mean: 600, std: 200, min: 50, max: 1500}
            output: {type: gaussian, mean: 120, std: 40, min: 10, max: 300}
        """);
    String[] args = {"run", "--model", "qwen/qwen3-14b", "--num-instances", "2", "--workload-spec", spec.toString(),
        "--total-kv-blocks", "400"};
    BlisCliTest.Outcome go = blis(concat(args, "--output-format", "go-blis"));
    assertThat(go.code()).as(go.err()).isZero();
    BlisCliTest.Outcome own = blis(args);
    JsonNode result = JSON.readTree(own.out());

    List<String> kv = section(go.out(), "KV Cache Metrics");
    long preemptions = result.at("/engine/preemption_events").asLong();
    assertThat(preemptions).as("a small KV cache preempts").isPositive();
    // Go BLIS's docs grep preemption_count from the default output: the same count under its name
    assertThat(result.at("/engine/preemption_count").asLong()).isEqualTo(preemptions);
    assertThat(number(kv, "Preemption Rate")).isCloseTo(
        (double) preemptions / result.at("/overall/completed_requests").asLong(), within(1e-4));
    assertThat(number(kv, "KV Thrashing Rate")).isZero();

    List<String> slo = section(go.out(), "Per-SLO Metrics");
    assertThat(slo).contains("  batch:", "  critical:");
    Map<String, Long> n = new TreeMap<>();
    String cls = null;
    for (String l : slo) {
      if (l.endsWith(":")) {
        cls = l.strip().replace(":", "");
      } else if (l.strip().startsWith("TTFT:")) {
        n.put(cls, Long.parseLong(l.substring(l.indexOf("(n=") + 3, l.indexOf(')'))));
      }
    }
    assertThat(n).containsEntry("critical", result.at("/slo_classes/critical/completed_requests").asLong())
        .containsEntry("batch", result.at("/slo_classes/batch/completed_requests").asLong());

    List<String> tenants = section(go.out(), "Per-Tenant Metrics");
    assertThat(tenants.get(0)).isEqualTo("  alice: requests=" + result.at("/tenants/alice/completed_requests").asLong()
        + ", tokens=" + result.at("/tenants/alice/total_output_tokens").asLong());
    assertThat(tenants.get(2)).startsWith("  Jain Fairness Index: ");

    List<String> anomalies = section(go.out(), "Anomaly Counters");
    assertThat(number(anomalies, "HOL Blocking Events")).isEqualTo(result.at("/anomalies/hol_blocking_events").asLong());
  }

  @Test
  void regretIsTheBestScoreLessTheChosen() {
    java.util.function.BiFunction<Integer, double[], io.blis.engine.result.RoutingDecision> decision = (chosen, scores) -> {
      List<io.blis.engine.result.RoutingDecision.Candidate> c = new ArrayList<>();
      for (int i = 0; i < scores.length; i++) {
        c.add(new io.blis.engine.result.RoutingDecision.Candidate(i, scores[i], 0));
      }
      return new io.blis.engine.result.RoutingDecision("routing", 1, 0, true, "", chosen, c, List.of(), 0);
    };
    assertThat(GoBlisOutput.regret(decision.apply(1, new double[] {0.9, 0.25, 0.5}))).isCloseTo(0.65, within(1e-12));
    assertThat(GoBlisOutput.regret(decision.apply(0, new double[] {0.9, 0.25, 0.5}))).isZero();
    assertThat(GoBlisOutput.regret(decision.apply(2, new double[] {Double.NaN, 3, Double.NaN}))).isZero();
    assertThat(GoBlisOutput.regret(decision.apply(1, new double[] {Double.NaN, 0.1, 0.4}))).isCloseTo(0.3, within(1e-12));
  }

  @Test
  void goKeysNameTheSameMetrics() {
    assertThat(io.blis.engine.result.Fitness.goKey("ttft_p99")).isEqualTo("p99_ttft");
    assertThat(io.blis.engine.result.Fitness.goKey("e2e_mean")).isEqualTo("mean_e2e");
    assertThat(io.blis.engine.result.Fitness.goKey("tokens_per_s")).isEqualTo("tokens_per_sec");
    assertThat(io.blis.engine.result.Fitness.goKey("throughput")).isEqualTo("throughput");
  }

  private static String[] concat(String[] a, String... more) {
    String[] out = java.util.Arrays.copyOf(a, a.length + more.length);
    System.arraycopy(more, 0, out, a.length, more.length);
    return out;
  }
}
