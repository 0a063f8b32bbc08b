package io.blis.workload.spec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.blis.workload.MiniEngine;
import io.blis.workload.RequestSpec;
import io.blis.workload.TestSupport;
import io.blis.workload.synthetic.ArrivalProcess;
import io.blis.workload.synthetic.LengthDistribution;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.Test;

class WorkloadSpecTest {

  static final String SPEC = """
      seed: 7
      aggregate_rate: 20
      num_requests: 4000
      clients:
        - id: chat
          tenant: acme
          slo_class: critical
          rate_fraction: 3
          arrival: {process: gamma, cv: 2.0}
          input: {type: gaussian, mean: 300, std: 50, min: 10, max: 1000}
          output: {type: exponential, mean: 100, min: 1, max: 4000}
          prefix_group: sys-a
          prefix_length: 32
          timeout_s: 30
        - id: batch
          slo_class: batch
          rate_fraction: 1
          arrival: {process: constant}
          input: {type: empirical, probabilities: {100: 0.25, 200: 0.75}}
          output: {type: constant, value: 7}
      """;

  @Test
  void parsesClientsAndSplitsTheRate() {
    WorkloadSpec spec = WorkloadSpec.parse(SPEC, "spec.yaml");
    assertThat(spec.seed()).isEqualTo(7);
    assertThat(spec.clients()).hasSize(2);
    assertThat(spec.clients().get(0).arrival()).isEqualTo(new ArrivalProcess.Gamma(15, 2.0));
    assertThat(spec.clients().get(1).arrival()).isEqualTo(new ArrivalProcess.Constant(5));
    assertThat(spec.clients().get(1).output()).isEqualTo(new LengthDistribution.Constant(7));
    List<RequestSpec> rs = TestSupport.drain(spec.source());
    assertThat(rs).hasSize(4000);
    Map<String, List<RequestSpec>> byTenant =
        rs.stream().collect(Collectors.groupingBy(RequestSpec::tenant));
    assertThat((double) byTenant.get("acme").size() / rs.size()).isCloseTo(0.75, Offset.offset(0.03));
    for (RequestSpec r : byTenant.get("acme")) {
      assertThat(r.sloClass()).isEqualTo("critical");
      assertThat(r.prefixGroup()).isEqualTo("sys-a");
      assertThat(r.prefixLength()).isEqualTo(32);
      assertThat(r.timeoutUs()).isEqualTo(30_000_000L);
      assertThat(r.inputTokens()).isBetween(42, 1032);
    }
    long shortOnes = byTenant.get("").stream().filter(r -> r.inputTokens() == 100).count();
    assertThat((double) shortOnes / byTenant.get("").size()).isCloseTo(0.25, Offset.offset(0.06));
    assertThat(byTenant.get("").stream().allMatch(r -> r.outputTokens() == 7)).isTrue();
    // Constant client: exactly 1/5 s apart.
    List<RequestSpec> batch = byTenant.get("");
    assertThat(batch.get(1).arrivalTimeUs() - batch.get(0).arrivalTimeUs()).isEqualTo(200_000);
    assertThat(TestSupport.drain(spec.source())).isEqualTo(rs);
  }

  @Test
  void sessionRoundsNeverOverlapAndAccumulateContext() {
    String yaml = """
        seed: 3
        aggregate_rate: 5
        num_requests: 300
        clients:
          - id: agent
            input: {type: gaussian, mean: 100, std: 20, min: 20, max: 200}
            output: {type: gaussian, mean: 50, std: 10, min: 5, max: 100}
            prefix_group: tools
            prefix_length: 40
            session: {rounds: 4, think_time_s: 2.5, accumulate_context: true}
        """;
    WorkloadSpec spec = WorkloadSpec.parse(yaml, "s.yaml");
    List<MiniEngine.Served> served =
        MiniEngine.run(spec.source(), r -> 1_000_000L + 20_000L * r.outputTokens());
    assertThat(served).hasSize(300 * 4);
    Map<Long, List<MiniEngine.Served>> sessions = new HashMap<>();
    for (MiniEngine.Served s : served) {
      sessions.computeIfAbsent(s.request().sessionId(), k -> new ArrayList<>()).add(s);
    }
    assertThat(sessions).hasSize(300);
    for (List<MiniEngine.Served> rounds : sessions.values()) {
      rounds.sort(Comparator.comparingInt(s -> s.request().round()));
      for (int k = 1; k < rounds.size(); k++) {
        RequestSpec prev = rounds.get(k - 1).request();
        RequestSpec cur = rounds.get(k).request();
        assertThat(cur.round()).isEqualTo(k);
        assertThat(cur.arrivalTimeUs())
            .isEqualTo(rounds.get(k - 1).finishUs() + 2_500_000L);
        // Prompt = previous prompt + its output + a new turn, extending the previous ids.
        assertThat(cur.inputTokens()).isGreaterThan(prev.inputTokens() + prev.outputTokens());
        assertThat(java.util.Arrays.copyOf(cur.promptTokens(), prev.inputTokens()))
            .isEqualTo(prev.promptTokens());
      }
    }
  }

  @Test
  void windowsAndHorizonBoundArrivals() {
    String yaml = """
        aggregate_rate: 10
        horizon_s: 100
        clients:
          - id: day
            preset: chatbot
            lifecycle: [{start_s: 10, end_s: 20}, {start_s: 50, end_s: 60}]
          - id: night
            preset: summarization
            arrival: {process: weibull, cv: 0.5}
        """;
    WorkloadSpec spec = WorkloadSpec.parse(yaml, "w.yaml");
    List<RequestSpec> rs = TestSupport.drain(spec.source());
    assertThat(rs).allSatisfy(r -> assertThat(r.arrivalTimeUs()).isLessThanOrEqualTo(100_000_000L));
    List<RequestSpec> day = rs.stream().filter(r -> r.inputTokens() <= 800).toList();
    assertThat(day).isNotEmpty().allSatisfy(r -> {
      long t = r.arrivalTimeUs();
      assertThat((t >= 10_000_000 && t < 20_000_000) || (t >= 50_000_000 && t < 60_000_000)).isTrue();
    });
    // 5 req/s for 20 s of windows
    assertThat(day.size()).isBetween(70, 130);
  }

  @Test
  void errorsNameTheKeyAndLine() {
    assertThatThrownBy(() -> WorkloadSpec.parse(SPEC.replace("tenant: acme", "tenat: acme"), "x.yaml"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("x.yaml:6:")
        .hasMessageContaining("tenat");
    assertThatThrownBy(() -> WorkloadSpec.parse(SPEC.replace("type: exponential", "type: zipf"), "x.yaml"))
        .hasMessageStartingWith("x.yaml:11:")
        .hasMessageContaining("zipf");
    assertThatThrownBy(() -> WorkloadSpec.parse(SPEC.replace("std: 50", "std: -50"), "x.yaml"))
        .hasMessageStartingWith("x.yaml:10:")
        .hasMessageContaining("std");
    assertThatThrownBy(() -> WorkloadSpec.parse(SPEC.replace("num_requests: 4000", "num_requests: many"), "x.yaml"))
        .hasMessageStartingWith("x.yaml:3:")
        .hasMessageContaining("num_requests");
    assertThatThrownBy(() -> WorkloadSpec.parse(SPEC.replace("cv: 2.0", "cv: .nan"), "x.yaml"))
        .hasMessageStartingWith("x.yaml:9:")
        .hasMessageContaining("cv");
    assertThatThrownBy(() -> WorkloadSpec.parse(SPEC.replace("num_requests: 4000\n", ""), "x.yaml"))
        .hasMessageContaining("num_requests or horizon_s");
    assertThatThrownBy(() -> WorkloadSpec.parse(SPEC.replace("id: batch", "id: chat"), "x.yaml"))
        .hasMessageContaining("duplicate client id 'chat'");
    assertThatThrownBy(() -> WorkloadSpec.parse(SPEC.replace("slo_class: batch", "slo_class: gold"), "x.yaml"))
        .hasMessageStartingWith("x.yaml:16:")
        .hasMessageContaining("gold");
  }

  @Test
  void adaptersAreReadInBothForms() {
    WorkloadSpec one = WorkloadSpec.parse(SPEC.replace("timeout_s: 30", "timeout_s: 30\n    adapter: sql-lora"), "a.yaml");
    assertThat(one.clients().get(0).adapter()).isEqualTo("sql-lora");
    assertThat(one.clients().get(1).adapter()).isEmpty();
    List<RequestSpec> rs = TestSupport.drain(one.source());
    assertThat(rs).allSatisfy(r -> assertThat(r.adapter()).isEqualTo(r.tenant().equals("acme") ? "sql-lora" : ""));
    WorkloadSpec many = WorkloadSpec.parse(SPEC.replace("timeout_s: 30",
        "timeout_s: 30\n    adapters: {count: 100, zipf: 1.0, prefix: \"lora-\", base_share: 0.2}"), "b.yaml");
    assertThat(many.clients().get(0).adapters())
        .isEqualTo(io.blis.workload.synthetic.AdapterPopularity.numbered("lora-", 100, 1.0, 0.2));
    WorkloadSpec listed = WorkloadSpec.parse(SPEC.replace("timeout_s: 30",
        "timeout_s: 30\n    adapters:\n      names: [a, b, c]\n      zipf: 1.0"), "c.yaml");
    assertThat(listed.clients().get(0).adapters())
        .isEqualTo(io.blis.workload.synthetic.AdapterPopularity.named(List.of("a", "b", "c"), 1.0, 0));
    assertThat(TestSupport.drain(listed.source()).stream().map(RequestSpec::adapter).distinct())
        .containsExactlyInAnyOrder("a", "b", "c", "");
  }

  @Test
  void adapterErrorsNameTheClientAndKey() {
    Map<String, String> errors = new java.util.LinkedHashMap<>();
    errors.put("adapters: {count: 0}", "x.yaml:15:5: at 'clients[0]': client chat: adapters.count must be a whole"
        + " number in [1, 100000], got 0");
    errors.put("adapters: {count: 10, zipf: -1}", "x.yaml:15:5: at 'clients[0]': client chat: adapters.zipf must be"
        + " a finite number >= 0 (0: every adapter equally popular), got -1.0");
    errors.put("adapters: {count: 10, zipf: .inf}", "x.yaml:15:27: at 'clients[0].adapters.zipf': malformed number"
        + " '.inf'");
    errors.put("adapters: {count: 10, base_share: 1.5}", "x.yaml:15:5: at 'clients[0]': client chat:"
        + " adapters.base_share must be in [0, 1] (the share of the requests that name no adapter), got 1.5");
    errors.put("adapters: {count: 10, base_share: -0.1}", "client chat: adapters.base_share must be in [0, 1]");
    errors.put("adapters: {names: []}", "x.yaml:15:5: at 'clients[0]': client chat: adapters.names must list at"
        + " least one adapter");
    errors.put("adapters: {names: [a, b, a]}", "client chat: adapters.names lists 'a' twice");
    errors.put("adapters: {names: [a, \"\"]}", "client chat: adapters.names[1] is empty");
    errors.put("adapters: {names: [a, \"b,c\"]}", "client chat: adapters.names[1] 'b,c' must not contain commas");
    errors.put("adapters: {count: 10, zipff: 1}", "x.yaml:15:27: unknown key 'zipff' in clients[0].adapters;"
        + " expected one of");
    errors.put("adapters: {count: 10, names: [a]}", "client chat: adapters: count and names exclude each other");
    errors.put("adapters: {zipf: 1}", "client chat: adapters needs count");
    errors.put("adapters: {names: [a], prefix: x}", "client chat: adapters: prefix goes with count, not with names");
    errors.put("adapters: {count: 2.5}", "x.yaml:15:16: at 'clients[0].adapters.count': expected an integer, got 2.5");
    errors.put("adapter: x\n    adapters: {count: 3}", "x.yaml:15:5: at 'clients[0]': client chat: adapter and"
        + " adapters exclude each other");
    errors.put("adapter: \"x,y\"", "x.yaml:15:5: at 'clients[0]': client chat: adapter 'x,y' must not contain"
        + " commas");
    errors.forEach((keys, message) -> assertThatThrownBy(
        () -> WorkloadSpec.parse(SPEC.replace("timeout_s: 30", "timeout_s: 30\n    " + keys), "x.yaml"))
        .as(keys)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith(message.startsWith("x.yaml") ? message : "x.yaml:15:5: at 'clients[0]': " + message));
  }

  @Test
  void presetsHaveTheirLengths() {
    List<RequestSpec> rs = TestSupport.drain(WorkloadSpec.preset("summarization", 50, 3000, 1).source());
    assertThat(rs).hasSize(3000);
    double in = rs.stream().mapToInt(RequestSpec::inputTokens).average().orElseThrow();
    double out = rs.stream().mapToInt(RequestSpec::outputTokens).average().orElseThrow();
    assertThat(in).isCloseTo(4096, Offset.offset(30.0));
    assertThat(out).isCloseTo(512, Offset.offset(10.0));
    assertThat(rs).allSatisfy(r -> assertThat(r.inputTokens()).isBetween(100, 8192));
    assertThatThrownBy(() -> WorkloadSpec.preset("chat", 1, 1, 1)).hasMessageContaining("chatbot");
  }
}
