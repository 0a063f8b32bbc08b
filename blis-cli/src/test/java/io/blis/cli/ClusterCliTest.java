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
import org.junit.jupiter.params.provider.ValueSource;

/** {@code blis run} with several instances, policies, bundles and analysis flags. */
class ClusterCliTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String[] SMALL = {"--rate", "40", "--num-requests", "120",
      "--prompt-tokens", "256", "--output-tokens", "32", "--output-tokens-stdev", "8"};

  private static String[] args(String... extra) {
    String[] out = new String[1 + SMALL.length + extra.length];
    out[0] = "run";
    System.arraycopy(SMALL, 0, out, 1, SMALL.length);
    System.arraycopy(extra, 0, out, 1 + SMALL.length, extra.length);
    return out;
  }

  private static JsonNode ok(String... extra) throws Exception {
    BlisCliTest.Outcome o = blis(args(extra));
    assertThat(o.code()).as(o.err()).isZero();
    return JSON.readTree(o.out());
  }

  @ParameterizedTest
  @ValueSource(strings = {"round-robin", "least-loaded", "weighted", "prefix-affinity",
      "always-busiest"})
  void everyRouterRunsOnFourInstances(String router) throws Exception {
    JsonNode r = ok("--num-instances", "4", "--routing-policy", router);
    assertThat(r.path("instances")).hasSize(4);
    long routed = 0;
    for (JsonNode i : r.path("instances")) {
      routed += i.path("metrics").path("injected_requests").asLong();
    }
    assertThat(routed).isEqualTo(120);
    assertThat(r.path("overall").path("completed_requests").asLong()).isEqualTo(120);
    assertThat(r.path("anomalies").has("hol_blocking_events")).isTrue();
  }

  @Test
  void routerIsAnAliasOfRoutingPolicy() throws Exception {
    assertThat(ok("--num-instances", "3", "--router", "always-busiest"))
        .isEqualTo(ok("--num-instances", "3", "--routing-policy", "always-busiest"));
  }

  @Test
  void thirdPartyRouterAndAdmissionFromTestServicesAreSelectedByNameAndChangeTheResult()
      throws Exception {
    JsonNode base = ok("--num-instances", "3");
    JsonNode custom = ok("--num-instances", "3", "--routing-policy", "test-last-instance",
        "--admission-policy", "test-even-ids");
    assertThat(base.path("overall").path("rejected_requests").asLong()).isZero();
    assertThat(custom.path("overall").path("rejected_requests").asLong()).isEqualTo(60);
    assertThat(custom.path("anomalies").path("rejections_by_reason").path("odd_id").asLong())
        .isEqualTo(60);
    assertThat(custom.path("instances").get(2).path("metrics").path("injected_requests").asLong())
        .isEqualTo(60);
    assertThat(custom.path("instances").get(0).path("metrics").path("injected_requests").asLong())
        .isZero();
  }

  @Test
  void decisionTraceFitnessAndAnomaliesAreInTheResult() throws Exception {
    BlisCliTest.Outcome o = blis(args("--num-instances", "4", "--routing-policy", "round-robin",
        "--trace-level", "decisions", "--counterfactual-k", "2",
        "--fitness-weights", "throughput:0.5,ttft_p99:0.3,e2e_p99:0.2"));
    assertThat(o.code()).as(o.err()).isZero();
    JsonNode r = JSON.readTree(o.out());
    JsonNode sum = r.path("decision_summary");
    assertThat(sum.path("admission_decisions").asLong()).isEqualTo(120);
    assertThat(sum.path("routing_decisions").asLong()).isEqualTo(120);
    assertThat(sum.path("counterfactual_k").asInt()).isEqualTo(2);
    assertThat(sum.path("regret_ms").path("count").asLong()).isEqualTo(120);
    assertThat(r.path("decisions")).hasSize(240);
    JsonNode routing = r.path("decisions").get(1);
    assertThat(routing.path("kind").asText()).isEqualTo("routing");
    assertThat(routing.path("candidates")).hasSize(4);
    assertThat(routing.path("alternatives")).hasSize(2);
    double score = r.path("fitness").path("score").asDouble();
    assertThat(score).isBetween(0.0, 1.0);
    assertThat(o.err()).contains("fitness: ");
    assertThat(r.path("fitness").path("weights").path("throughput").asDouble()).isEqualTo(0.5);
  }

  @Test
  void policyBundleSetsPoolsAndPoliciesAndFlagsOverrideIt(@TempDir Path dir) throws Exception {
    Path bundle = dir.resolve("cluster.yaml");
    Files.writeString(bundle, String.join("\n",
        "pools:",
        "  - name: big",
        "    instances: 2",
        "    max_num_seqs: 64",
        "  - name: small",
        "    instances: 1",
        "    total_kv_blocks: 2000",
        "router:",
        "  policy: weighted",
        "  scorers: {queue-depth: 1, in-flight: 1}",
        "admission:",
        "  policy: token-bucket",
        "  capacity: 2000",
        "  refill_rate: 4000",
        "slo:",
        "  standard: {ttft_ms: 100, e2e_ms: 5000}",
        ""));
    JsonNode r = ok("--policy-config", bundle.toString());
    assertThat(r.path("instances")).hasSize(3);
    assertThat(r.path("instances").get(0).path("pool").asText()).isEqualTo("big");
    assertThat(r.path("instances").get(2).path("pool").asText()).isEqualTo("small");
    assertThat(r.path("instances").get(2).path("kv_total_blocks").asLong()).isEqualTo(2000);
    assertThat(r.path("overall").path("rejected_requests").asLong()).isPositive();
    assertThat(r.path("slo_classes").path("standard").path("good_requests").asLong())
        .isLessThanOrEqualTo(r.path("slo_classes").path("standard").path("completed_requests").asLong());
    JsonNode overridden = ok("--policy-config", bundle.toString(), "--admission-policy",
        "always-admit", "--routing-policy", "round-robin");
    assertThat(overridden.path("overall").path("rejected_requests").asLong()).isZero();
    assertThat(overridden.path("instances").get(0).path("metrics").path("injected_requests").asLong())
        .isEqualTo(40);
  }

  @Test
  void badClusterInputGivesOneClearLineAndExitTwo(@TempDir Path dir) throws Exception {
    BlisCliTest.Outcome unknownRouter = blis(args("--num-instances", "2", "--routing-policy", "nope"));
    assertThat(unknownRouter.code()).isEqualTo(2);
    assertThat(unknownRouter.err()).contains("unknown router 'nope'").contains("least-loaded")
        .doesNotContain("Exception");
    BlisCliTest.Outcome badWeights = blis(args("--fitness-weights", "speed:1"));
    assertThat(badWeights.code()).isEqualTo(2);
    assertThat(badWeights.err()).contains("unknown metric 'speed'").contains("ttft_p99");
    Path bundle = dir.resolve("b.yaml");
    Files.writeString(bundle, "router:\n  policy: round-robin\nroutes: {}\n");
    BlisCliTest.Outcome badBundle = blis(args("--policy-config", bundle.toString()));
    assertThat(badBundle.code()).isEqualTo(2);
    assertThat(badBundle.err()).contains("b.yaml").contains("line 3").contains("unknown key 'routes'").doesNotContain("Exception");
    assertThat(badBundle.err().strip().lines().count()).isEqualTo(1);
    Path badPool = dir.resolve("pool.yaml");
    Files.writeString(badPool, "pools:\n  - {name: a, instances: 2, gpu: B300-ULTRA}\n");
    BlisCliTest.Outcome pool = blis(args("--policy-config", badPool.toString()));
    assertThat(pool.code()).isEqualTo(2);
    assertThat(pool.err()).contains("pool.yaml").contains("pool 'a'").contains("B300-ULTRA")
        .doesNotContain("Exception");
    BlisCliTest.Outcome k = blis(args("--counterfactual-k", "2"));
    assertThat(k.code()).isEqualTo(2);
    assertThat(k.err()).contains("--counterfactual-k needs --trace-level decisions");
  }

  @Test
  void sameFlagsGiveByteIdenticalClusterJson() {
    String[] a = args("--num-instances", "4", "--routing-policy", "weighted", "--trace-level",
        "decisions", "--counterfactual-k", "1", "--per-request");
    assertThat(blis(a).out()).isEqualTo(blis(a).out());
  }
}
