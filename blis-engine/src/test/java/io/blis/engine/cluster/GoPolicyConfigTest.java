package io.blis.engine.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Go BLIS's policy config read as a policy bundle. */
class GoPolicyConfigTest {

  @TempDir Path dir;

  static final String CONFIG = """
      admission:
        policy: token-bucket
        token_bucket_capacity: 10000
        token_bucket_refill_rate: 1000
      routing:
        policy: weighted
        cache_weight: 0.7
        load_weight: 0.3
      priority:
        policy: inverted-slo
      scheduler: priority-fcfs
      """;

  @Test
  void eachSectionMapsToTheBundles() {
    PolicyBundle b = PolicyBundle.parse(CONFIG, "p.yaml");
    assertThat(b.admission()).isEqualTo(new PolicySpec("token-bucket", Map.of("capacity", "10000", "refill_rate", "1000")));
    assertThat(b.router()).isEqualTo(new PolicySpec("weighted", Map.of("scorers", "prefix-cache:0.7,load:0.3")));
    assertThat(b.priority()).isEqualTo(new PolicySpec("inverted", Map.of()));
    assertThat(b.scheduler()).isEqualTo("priority-fcfs");
    assertThat(b.pools()).isEmpty();
    // written as a bundle it reads back the same
    assertThat(PolicyBundle.parse(b.toYaml(), "bundle.yaml")).isEqualTo(b);
  }

  @Test
  void weightsDefaultToGoBlissAndScorersKeepGoBlissFormulas() throws IOException {
    assertThat(PolicyBundle.parse("routing: {policy: weighted, load_weight: 1}\n", "p.yaml").router())
        .isEqualTo(new PolicySpec("weighted", Map.of("scorers", "prefix-cache:0.6,load:1.0")));
    Path f = dir.resolve("scorers.yaml");
    Files.writeString(f, """
        routing:
          policy: weighted
          scorers:
            - {name: precise-prefix-cache, weight: 2}
            - {name: prefix-affinity, weight: 1}
            - {name: queue-depth, weight: 1}
            - {name: load-balance, weight: 0.5}
            - {name: active-requests, weight: 0.25}
            - {name: kv-utilization, weight: 1}
        """);
    PolicyBundle.Read r = PolicyBundle.read(f);
    assertThat(r.goBlis()).isTrue();
    // Go BLIS's min-max queue-depth is queue-depth-minmax here; the others keep their names
    assertThat(r.bundle().router().params().get("scorers")).isEqualTo("precise-prefix-cache:2.0,prefix-affinity:1.0,"
        + "queue-depth-minmax:1.0,load-balance:0.5,active-requests:0.25,kv-utilization:1.0");
    assertThat(r.notes()).isEmpty();
    // written as a bundle it reads back the same
    assertThat(PolicyBundle.parse(r.bundle().toYaml(), "bundle.yaml")).isEqualTo(r.bundle());
  }

  /** Every scorer of Go BLIS's, as a policy config names it, parses and routes a cluster's requests. */
  @Test
  void everyGoBlisScorerParsesAndRuns() throws IOException {
    for (String name : new java.util.TreeSet<>(GoPolicyConfig.SCORERS.keySet())) {
      Path f = dir.resolve(name + ".yaml");
      Files.writeString(f, "routing:\n  policy: weighted\n  scorers:\n    - {name: " + name + ", weight: 2}\n");
      PolicyBundle.Read r = PolicyBundle.read(f);
      assertThat(r.bundle().router().params().get("scorers")).as(name)
          .isEqualTo(GoPolicyConfig.SCORERS.get(name) + ":2.0");
      List<io.blis.workload.RequestSpec> reqs = new java.util.ArrayList<>();
      for (int i = 0; i < 40; i++) {
        int[] prompt = new int[200 + 16 * (i % 5)];
        for (int k = 0; k < prompt.length; k++) {
          prompt[k] = k < 128 ? 7 + (i % 3) * 1000 + k : 100_000 + i * 1_000 + k; // three shared 128-token prefixes
        }
        reqs.add(io.blis.workload.RequestSpec.simple(i, i * 20_000L, prompt, 16));
      }
      io.blis.engine.result.SimulationResult res = Cluster.builder().bundle(r.bundle())
          .defaults(PoolSpec.builder("default").model("meta-llama/llama-3.1-8b-instruct").build()).instances(3)
          .toSimulation().source(io.blis.workload.RequestSource.of(reqs)).build().run();
      assertThat(res.overall().completedRequests()).as(name).isEqualTo(reqs.size());
    }
  }

  @Test
  void tierShedAndGaieLegacyAdmissionKeysMapToTheirPolicies() throws IOException {
    assertThat(PolicyBundle.parse("admission: {policy: tier-shed, tier_shed_threshold: 0, tier_shed_min_priority: 3}\n",
        "p.yaml").admission()).isEqualTo(new PolicySpec("tier-shed", Map.of("threshold", "0", "min_priority", "3")));
    assertThat(PolicyBundle.parse("admission: {policy: gaie-legacy, gaie_qd_threshold: 5, gaie_kv_threshold: 0.8}\n",
        "p.yaml").admission()).isEqualTo(new PolicySpec("gaie-legacy", Map.of("qd_threshold", "5", "kv_threshold", "0.8")));
    Path f = dir.resolve("prio.yaml");
    Files.writeString(f, "admission:\n  policy: tier-shed\n  slo_priorities: {batch: 0}\n  gaie_qd_threshold: 3\n");
    PolicyBundle.Read r = PolicyBundle.read(f);
    assertThat(r.notes()).containsExactly(
        f + ", line 4, column 22: gaie_qd_threshold has no meaning here: the admission policy is tier-shed, not gaie-legacy",
        f + ", line 3, column 19: slo_priorities has no meaning here: the classes' priorities are GAIE's (critical 4,"
            + " standard 3, batch -1, sheddable -2, background -3)");
  }

  @Test
  void settingsOfAnotherPolicyAreNoted() throws IOException {
    Path f = dir.resolve("n.yaml");
    Files.writeString(f, """
        admission: {policy: always-admit, token_bucket_capacity: 5}
        routing: {policy: round-robin, cache_weight: 0.5}
        """);
    PolicyBundle.Read r = PolicyBundle.read(f);
    assertThat(r.bundle().admission()).isEqualTo(new PolicySpec("always-admit", Map.of()));
    assertThat(r.bundle().router()).isEqualTo(new PolicySpec("round-robin", Map.of()));
    assertThat(r.notes()).containsExactly(
        f + ", line 1, column 58: token_bucket_capacity has no meaning here: the admission policy is always-admit, not token-bucket",
        f + ", line 2, column 46: cache_weight has no meaning here: the routing policy is round-robin, not weighted");
    assertThat(PolicyBundle.read(writeNative()).goBlis()).isFalse();
  }

  private Path writeNative() throws IOException {
    Path f = dir.resolve("native.yaml");
    Files.writeString(f, "router: {policy: weighted}\nscheduler: fcfs\n");
    return f;
  }

  @Test
  void badConfigsFailWithOneLineNamingLineAndColumn() {
    String[][] cases = {
        {CONFIG + "pools:\n  - {name: a, instances: 2}\n", "p.yaml, line 13, column 3: 'pools' is a key of this project's policy bundle,"
            + " but this file is Go BLIS's policy config ('routing' at line 6)"},
        {CONFIG.replace("cache_weight", "cache_wieght"), "p.yaml, line 7, column 17: unknown key 'cache_wieght' in routing; accepted:"
            + " policy, cache_weight, load_weight, scorers"},
        {CONFIG.replace("load_weight: 0.3", "load_weight: -1"), "p.yaml, line 8, column 16: load_weight must be a finite number >= 0, got -1"},
        {CONFIG.replace("policy: weighted", "policy: fastest"), "p.yaml, line 6, column 11: unknown routing policy 'fastest'; available:"},
        {CONFIG.replace("priority-fcfs", "lottery"), "p.yaml, line 11, column 12: unknown scheduler 'lottery'; available:"},
        {"routing:\n  policy: weighted\n  scorers:\n    - {name: queue-scorer, weight: 1}\n", "p.yaml, line 4, column 14: unknown"
            + " Go BLIS scorer 'queue-scorer'; scorers read: active-requests, kv-utilization, load-aware, load-balance, lora-affinity,"
            + " no-hit-lru, precise-prefix-cache, prefix-affinity, queue-depth, running-requests, vllm-dp"},
        {"routing:\n  policy: weighted\n  scorers:\n    - {name: vllm-dp, weight: 1}\n    - {name: vllm-dp, weight: 2}\n",
            "p.yaml, line 5, column 14: duplicate scorer 'vllm-dp' (first at line 4): each scorer may appear at most once, as in Go BLIS"},
        {"routing: {policy: weighted, cache_weight: 0, load_weight: 0}\n", "p.yaml, line 1, column 10: cache_weight and load_weight cannot both be 0"},
        {"routing: {policy: weighted, cache_weight: 1, scorers: [{name: queue-depth, weight: 1}]}\n",
            "p.yaml, line 1, column 55: give cache_weight/load_weight or scorers, not both"},
    };
    for (String[] c : cases) {
      assertThatThrownBy(() -> PolicyBundle.parse(c[0], "p.yaml")).as(c[1])
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith(c[1])
          .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
    }
  }

  @Test
  void loraAffinityIsReadAsThisProjectsAndNoted() throws IOException {
    Path f = dir.resolve("lora.yaml");
    Files.writeString(f, "routing:\n  policy: weighted\n  scorers:\n    - {name: vllm-dp, weight: 1}\n"
        + "    - {name: lora-affinity, weight: 1}\n");
    PolicyBundle.Read r = PolicyBundle.read(f);
    assertThat(r.bundle().router().params().get("scorers")).isEqualTo("vllm-dp:1.0,lora-affinity:1.0");
    assertThat(r.notes()).singleElement().asString().startsWith(f + ", line 5, column 14: scorer lora-affinity is read"
        + " as this project's:").doesNotContain("\n");
  }

  @Test
  void scorersMapOnlyToScorersTheWeightedRouterKnows() {
    assertThat(List.copyOf(new java.util.TreeSet<>(GoPolicyConfig.SCORERS.values())))
        .isSubsetOf(io.blis.engine.policy.WeightedScorersForTest.names());
  }
}
