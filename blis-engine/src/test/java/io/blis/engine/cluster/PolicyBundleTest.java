package io.blis.engine.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.blis.engine.SloTarget;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PolicyBundleTest {

  private static final Path EXAMPLE = Path.of("..", "docs", "examples", "cluster-bundle.yaml");

  @Test
  void theDocumentedExampleLoadsToTheExpectedBundle() {
    PolicyBundle b = PolicyBundle.load(EXAMPLE);
    assertThat(b.pools()).containsExactly(
        new PoolSpec("h100", 4, null, "H100", 1, null, null, null, null, null, null, null, null, null),
        new PoolSpec("a100", 2, null, "A100-80GB", 2, null, null, 128, null, null, null, null, null, null));
    assertThat(b.router()).isEqualTo(new PolicySpec("weighted",
        Map.of("scorers", "prefix-cache:2,load:1,kv-utilization:1")));
    assertThat(b.admission()).isEqualTo(new PolicySpec("token-bucket",
        Map.of("capacity", "100000", "refill_rate", "50000")));
    assertThat(b.priority()).isEqualTo(new PolicySpec("slo-based", Map.of("aging_ms", "500")));
    assertThat(b.scheduler()).isEqualTo("priority-fcfs");
    assertThat(b.admissionLatencyUs()).isZero();
    assertThat(b.routingLatencyUs()).isEqualTo(200);
    assertThat(b.snapshotRefreshUs()).isEqualTo(50_000);
    assertThat(b.slo()).containsEntry("critical", new SloTarget(200, 2000))
        .containsEntry("standard", new SloTarget(1000, 20000)).hasSize(2);
  }

  @Test
  void bundlesRoundTripThroughYaml() {
    PolicyBundle example = PolicyBundle.load(EXAMPLE);
    PolicyBundle full = new PolicyBundle(List.of(new PoolSpec("x.1", 3, "llama-2-7b", "cfg/gpu.json#H100",
        2, "roofline", "alpha=1,2,3;beta=4,5,6", 64, 4096, 512, 8192, 32, 1234L, 0.85)),
        PolicySpec.of("least-loaded"), PolicySpec.of("reject-all"),
        new PolicySpec("constant", Map.of("value", "3")), "sjf", 10L, 20L, 0L,
        Map.of("batch", new SloTarget(0, 60_000.5)));
    for (PolicyBundle b : List.of(example, full, PolicyBundle.empty())) {
      String yaml = b.toYaml();
      assertThat(PolicyBundle.parse(yaml, "round-trip")).isEqualTo(b);
      assertThat(PolicyBundle.parse(yaml, "round-trip").toYaml()).isEqualTo(yaml);
    }
  }

  @Test
  void aPoolsOwnAutoscalingSettingsAreReadCheckedAndWrittenBack() {
    PolicyBundle b = PolicyBundle.parse("""
        pools:
          - {name: chat, instances: 2, min_replicas: 1, max_replicas: 6, autoscaler: {target: 24}}
          - {name: code, instances: 1, autoscaler: {policy: schedule, replicas: "0:1,8:3"}}
          - {name: fixed, instances: 2}
        """, "scaled.yaml");
    assertThat(b.scalingOf("chat")).isEqualTo(new PoolScaling(1, 6, null, Map.of("target", "24")));
    assertThat(b.scalingOf("code")).isEqualTo(new PoolScaling(null, null, "schedule", Map.of("replicas", "0:1,8:3")));
    assertThat(b.scalingOf("fixed")).isEqualTo(PoolScaling.none());
    assertThat(PolicyBundle.parse(b.toYaml(), "again")).isEqualTo(b);
    // over the run's autoscaler: the pool's parameters win; its own autoscaler drops the run's parameters
    PolicySpec run = new PolicySpec("hpa", Map.of("metric", "running", "target", "48"));
    assertThat(b.scalingOf("chat").over(run)).isEqualTo(new PolicySpec("hpa", Map.of("metric", "running", "target", "24")));
    assertThat(b.scalingOf("code").over(run)).isEqualTo(new PolicySpec("schedule", Map.of("replicas", "0:1,8:3")));
    assertThat(b.scalingOf("fixed").over(run)).isEqualTo(run);
    assertThatThrownBy(() -> PolicyBundle.parse("pools:\n  - {name: a, instances: 1, min_replicas: 3, max_replicas: 2}\n",
        "bad.yaml")).hasMessageContaining("bad.yaml").hasMessageContaining(
            "pool 'a': max_replicas (2) must be at least min_replicas (3)");
    assertThatThrownBy(() -> PolicyBundle.parse("pools:\n  - {name: a, instances: 1, autoscaler: {policy: nope}}\n",
        "bad.yaml")).hasMessageContaining("unknown autoscaler 'nope'");
    assertThatThrownBy(() -> PolicyBundle.parse("pools:\n  - {name: a, instances: 1, autoscaler: {target: [1]}}\n",
        "bad.yaml")).hasMessageContaining("autoscaler.target must be a single value");
  }

  @Test
  void anEmptyDocumentIsAnEmptyBundleButAFileThatSetsNothingIsRefused(@TempDir Path dir) throws Exception {
    assertThat(PolicyBundle.parse("# nothing\n", "x.yaml")).isEqualTo(PolicyBundle.empty());
    for (String text : new String[] {"", "# nothing\n", "~\n", "{}\n"}) {
      Path f = dir.resolve("empty.yaml");
      Files.writeString(f, text);
      assertThatThrownBy(() -> PolicyBundle.load(f)).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("empty.yaml: the policy bundle sets nothing");
    }
    assertThatThrownBy(() -> PolicyBundle.load(dir.resolve("none.yaml")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageEndingWith("cannot read policy bundle: no such file");
  }

  private static void fails(String yaml, String... expected) {
    assertThatThrownBy(() -> PolicyBundle.parse(yaml, "bundle.yaml"))
        .isInstanceOf(IllegalArgumentException.class)
        .satisfies(e -> assertThat(e.getMessage()).contains("bundle.yaml").contains(expected)
            .doesNotContain("\n"));
  }

  @Test
  void mistakesAreOneLineNamingTheFileLineAndWhatWasExpected() {
    fails("router:\n  policy: round-robin\nroutes: 1\n", "line 3", "unknown key 'routes'",
        "accepted: pools, router");
    // Go BLIS's routing beside this project's router: one format or the other
    fails("router:\n  policy: round-robin\nrouting: 1\n", "line 2", "'router' is a key of this project's policy"
        + " bundle, but this file is Go BLIS's policy config ('routing' at line 3)");
    fails("pools:\n  - name: a\n    instances: 2\n    gpus: H100\n", "line 4", "unknown key 'gpus'",
        "gpu_memory_utilization");
    fails("router:\n  policy: fastest\n", "line 2", "unknown router 'fastest'", "least-loaded",
        "round-robin");
    fails("admission:\n  policy: maybe\n", "line 2", "unknown admission 'maybe'", "token-bucket");
    fails("priority:\n  aging_ms: 5\n", "line 2", "priority needs 'policy: NAME'", "slo-based");
    fails("scheduler: lifo\n", "line 1", "unknown scheduler 'lifo'", "fcfs");
    fails("pools:\n  - name: a\n    instances: four\n", "line 3", "instances must be a whole number");
    fails("pools:\n  - name: a\n    instances: 2.5\n", "line 3", "instances must be a whole number");
    fails("pools:\n  - name: a\n    instances: 1\n  - name: a\n    instances: 2\n", "line 4",
        "duplicate pool name 'a'");
    fails("scheduler: fcfs\nscheduler: sjf\n", "line 2", "duplicate key 'scheduler'");
    fails("pools:\n  - name: a\n    instances: 1\n    tp: 0\n", "line 2", "tp must be at least 1");
    fails("pools: h100\n", "line 1", "pools must be a list");
    fails("router:\n  policy: weighted\n  scorers: [1, 2]\n", "line 3", "must be a single value");
    fails("cluster:\n  routing_latency_us: -5\n", "line 2", "routing_latency_us must be a whole number >= 0");
    fails("slo:\n  critical: {ttft_ms: fast}\n", "line 2", "ttft_ms must be a number");
    fails("slo:\n  critcal: {ttft_ms: 100}\n", "line 2, column 12", "unknown SLO class 'critcal' in slo",
        "known classes: critical, standard, batch, sheddable, background");
    fails("pools: []\n", "line 1, column 8", "pools is an empty list");
    fails("pools:\n  - {name: a, instances: 4096}\n  - {name: b, instances: 1}\n", "line 3",
        "at most 4096 instances in all pools (the cluster limit), got 4097");
    fails("cluster:\n  routing_latency_us: 9223372036854775807\n", "line 2",
        "routing_latency_us must be at most 3600000000 (one hour)");
    fails("router: &r {policy: least-loaded}\n", "line 1, column 9", "YAML anchor '&r' is not supported");
    fails("router: {policy: least-loaded}\nadmission: *r\n", "line 2, column 12", "YAML alias '*r'");
    fails("router: {policy: least-loaded\n", "line 2, column 1", "not valid YAML: expected ',' or '}'");
  }

  @Test
  void numbersInEveryYamlFormAreReadAsTheParserReadsThem() {
    PolicyBundle b = PolicyBundle.parse("pools:\n  - {name: a, instances: 0x3}\ncluster: {routing_latency_us: 1_000}\n"
        + "slo:\n  standard: {ttft_ms: 0b101, e2e_ms: 2_000.5}\n", "bundle.yaml");
    assertThat(b.pools().get(0).instances()).isEqualTo(3);
    assertThat(b.routingLatencyUs()).isEqualTo(1_000L);
    assertThat(b.slo().get("standard")).isEqualTo(new io.blis.engine.SloTarget(5, 2_000.5));
    fails("pools:\n  - {name: a, instances: 99999999999999999999}\n", "line 2", "instances is too large");
    fails("slo:\n  standard: {ttft_ms: 1e999}\n", "line 2", "ttft_ms must be a finite number, got 1e999");
  }

  @Test
  void aLineBreakInAKeyOrNameIsEscapedSoTheMessageStaysOneLine() {
    fails("router: {policy: \"least\\nloaded\"}\n", "unknown router 'least\\u000Aloaded'");
    fails("\"rou\\u2028ter\": 1\n", "unknown key 'rou\\u2028ter'");
  }
}
