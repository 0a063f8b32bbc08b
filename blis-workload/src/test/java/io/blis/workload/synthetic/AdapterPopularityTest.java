package io.blis.workload.synthetic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.blis.workload.MiniEngine;
import io.blis.workload.RequestSpec;
import io.blis.workload.TestSupport;
import io.blis.workload.spec.SpecWriter;
import io.blis.workload.spec.WorkloadSpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.Test;

/** The LoRA adapters a client's requests name: the popularity, the draws, the spec keys. */
class AdapterPopularityTest {

  /** Two clients: "lora" (no prefix group) with the {@code extra} lines, and "plain" (group sys). */
  private static String spec(long seed, long requests, String extra) {
    return """
        seed: %d
        num_requests: %d
        clients:
          - id: lora
            rate: 50
            arrival: {process: gamma, cv: 2}
            input: {type: gaussian, mean: 300, std: 80, min: 10, max: 1000}
            output: {type: exponential, mean: 100, min: 1, max: 400}
        %s
          - id: plain
            rate: 20
            input: {type: lognormal, mu: 5, sigma: 0.5, min: 4, max: 2000}
            output: {type: constant, value: 12}
            prefix_group: sys
            prefix_length: 16
        """.formatted(seed, requests, extra);
  }

  private static Map<String, Double> shares(List<RequestSpec> requests) {
    Map<String, Long> counts = requests.stream()
        .collect(Collectors.groupingBy(RequestSpec::adapter, Collectors.counting()));
    Map<String, Double> out = new HashMap<>();
    counts.forEach((k, v) -> out.put(k, (double) v / requests.size()));
    return out;
  }

  /** The requests of the client of prefix group {@code group} ("" for lora, sys for plain). */
  private static List<RequestSpec> ofGroup(List<RequestSpec> requests, String group) {
    return requests.stream().filter(r -> r.prefixGroup().equals(group)).toList();
  }

  @Test
  void zipfSharesOverTwentyThousandRequestsMatchTheDistribution() {
    String yaml = """
        seed: 11
        num_requests: 20000
        clients:
          - id: lora
            rate: 100
            input: {type: constant, value: 10}
            output: {type: constant, value: 5}
            adapters: {count: 10, zipf: 1.0}
        """;
    List<RequestSpec> rs = TestSupport.drain(WorkloadSpec.parse(yaml, "z.yaml").source());
    assertThat(rs).hasSize(20_000);
    Map<String, Double> shares = shares(rs);
    double harmonic = 0;
    for (int k = 1; k <= 10; k++) {
      harmonic += 1.0 / k;
    }
    assertThat(1 / harmonic).isCloseTo(0.3414, Offset.offset(1e-4));
    assertThat(shares.keySet()).hasSize(10).allMatch(name -> name.matches("adapter-\\d"));
    AdapterPopularity p = AdapterPopularity.numbered("adapter-", 10, 1.0, 0);
    for (int k = 0; k < 10; k++) {
      double expected = 1.0 / (k + 1) / harmonic;
      assertThat(p.probability(k)).isCloseTo(expected, Offset.offset(1e-12));
      // 4.5 standard errors or more at 20,000 draws
      assertThat(shares.get("adapter-" + k)).as("adapter-%d", k).isCloseTo(expected, Offset.offset(0.015));
    }
    assertThat(shares.get("adapter-0")).isCloseTo(0.3414, Offset.offset(0.015));
  }

  @Test
  void zipfZeroIsUniformAndBaseShareNamesNoAdapter() {
    String yaml = """
        seed: 4
        num_requests: 20000
        clients:
          - id: lora
            rate: 100
            input: {type: constant, value: 10}
            output: {type: constant, value: 5}
            adapters: {count: 4, zipf: 0, prefix: "lora-", base_share: 0.2}
        """;
    Map<String, Double> shares = shares(TestSupport.drain(WorkloadSpec.parse(yaml, "u.yaml").source()));
    assertThat(shares.keySet()).containsExactlyInAnyOrder("", "lora-0", "lora-1", "lora-2", "lora-3");
    shares.values().forEach(s -> assertThat(s).isCloseTo(0.2, Offset.offset(0.015)));
    AdapterPopularity p = AdapterPopularity.numbered("lora-", 4, 0, 0.2);
    for (int k = 0; k < 4; k++) {
      assertThat(p.probability(k)).isCloseTo(0.2, Offset.offset(1e-12));
    }
  }

  @Test
  void listedAdaptersAreMostPopularFirst() {
    AdapterPopularity p = AdapterPopularity.named(List.of("sql", "chat", "code"), 2.0, 0);
    double total = 1 + 1 / 4.0 + 1 / 9.0;
    assertThat(p.probability(0)).isCloseTo(1 / total, Offset.offset(1e-12));
    assertThat(p.probability(2)).isCloseTo(1 / 9.0 / total, Offset.offset(1e-12));
    SplittableRandom rng = new SplittableRandom(3);
    Map<String, Long> counts = new HashMap<>();
    for (int i = 0; i < 20_000; i++) {
      counts.merge(p.sample(rng), 1L, Long::sum);
    }
    assertThat(counts.keySet()).containsExactlyInAnyOrder("sql", "chat", "code");
    assertThat(counts.get("sql") / 20_000.0).isCloseTo(1 / total, Offset.offset(0.015));
    assertThat(counts.get("code") / 20_000.0).isCloseTo(1 / 9.0 / total, Offset.offset(0.015));
    // everyone to the base model: no draw ever names an adapter
    AdapterPopularity base = AdapterPopularity.named(List.of("a"), 1, 1.0);
    for (int i = 0; i < 1000; i++) {
      assertThat(base.sample(rng)).isEmpty();
    }
  }

  @Test
  void aHundredThousandAdaptersAreDrawnByTheirRank() {
    AdapterPopularity p = AdapterPopularity.numbered("lora-", AdapterPopularity.MAX_ADAPTERS, 1.0, 0);
    assertThat(p.name(99_999)).isEqualTo("lora-99999");
    double harmonic = 0;
    for (int k = 1; k <= 100_000; k++) {
      harmonic += 1.0 / k;
    }
    double sum = 0;
    for (int k = 0; k < p.count(); k++) {
      assertThat(p.probability(k)).isPositive();
      sum += p.probability(k);
    }
    assertThat(sum).isCloseTo(1.0, Offset.offset(1e-9));
    SplittableRandom rng = new SplittableRandom(8);
    long first = 0;
    long tail = 0;
    for (int i = 0; i < 20_000; i++) {
      int k = Integer.parseInt(p.sample(rng).substring("lora-".length()));
      first += k == 0 ? 1 : 0;
      tail += k >= 50_000 ? 1 : 0;
    }
    assertThat(first / 20_000.0).isCloseTo(1 / harmonic, Offset.offset(0.01));
    // ranks 50,000 to 99,999 hold ln(2) / H(100,000) of the draws, about 5.7%
    assertThat(tail / 20_000.0).isCloseTo(Math.log(2) / harmonic, Offset.offset(0.01));
  }

  @Test
  void theSameSeedGivesTheSameAdapters() {
    String extra = "    adapters: {count: 50, zipf: 0.8, base_share: 0.1}";
    WorkloadSpec spec = WorkloadSpec.parse(spec(5, 3000, extra), "d.yaml");
    List<RequestSpec> a = TestSupport.drain(spec.source());
    assertThat(TestSupport.drain(spec.source())).isEqualTo(a);
    assertThat(TestSupport.drain(WorkloadSpec.parse(spec(5, 3000, extra), "d.yaml").source())).isEqualTo(a);
    List<String> adapters = a.stream().map(RequestSpec::adapter).toList();
    List<String> other = TestSupport.drain(spec.source(6)).stream().map(RequestSpec::adapter).toList();
    assertThat(other).isNotEqualTo(adapters);
  }

  @Test
  void namingAdaptersChangesNothingElse() {
    List<RequestSpec> without = TestSupport.drain(WorkloadSpec.parse(spec(9, 3000, ""), "a.yaml").source());
    for (String extra : List.of("    adapters: {count: 100, zipf: 1.0, prefix: \"lora-\", base_share: 0.2}",
        "    adapters: {names: [a, b, c], zipf: 0}", "    adapter: sql-lora")) {
      List<RequestSpec> with = TestSupport.drain(WorkloadSpec.parse(spec(9, 3000, extra), "b.yaml").source());
      // the other client's requests are the same, and so are this client's but for the adapter
      assertThat(ofGroup(with, "sys")).isEqualTo(ofGroup(without, "sys")).isNotEmpty();
      assertThat(with.stream().map(r -> r.withAdapter("")).toList()).isEqualTo(without);
      assertThat(ofGroup(with, "").stream().map(RequestSpec::adapter).distinct().toList())
          .hasSizeGreaterThanOrEqualTo(extra.contains("sql-lora") ? 1 : 3)
          .allSatisfy(name -> assertThat(extra).contains(name.replaceAll("\\d+$", "")));
    }
    assertThat(without).allSatisfy(r -> assertThat(r.adapter()).isEmpty());
  }

  /** A digest of every field requests had before they named adapters. */
  private static long digest(List<RequestSpec> rs) {
    long h = 1;
    for (RequestSpec r : rs) {
      h = h * 1_000_003L + Objects.hash(r.id(), r.arrivalTimeUs(), Arrays.hashCode(r.promptTokens()),
          r.outputTokens(), r.sloClass(), r.tenant(), r.prefixGroup(), r.prefixLength(), r.sessionId(),
          r.round(), r.timeoutUs(), r.stage(), r.model());
    }
    return h;
  }

  @Test
  void workloadsWithoutAdaptersGiveTheRequestsTheyGaveBefore() {
    // digests computed by the generator before requests named adapters
    LengthSpec lengths = new LengthSpec(512, 256, 2, 7000);
    List<RequestSpec> defaults = TestSupport.drain(
        SyntheticWorkload.poissonGaussian(5, 500, lengths, lengths, 0, 42));
    assertThat(digest(defaults)).isEqualTo(5332525034836119728L);
    assertThat(TestSupport.drain(SyntheticWorkload.poissonGaussian(5, 500, lengths, lengths, 0, 42,
        AdapterPopularity.NONE))).isEqualTo(defaults);
    String yaml = """
        seed: 3
        aggregate_rate: 12
        num_requests: 400
        clients:
          - id: chat
            tenant: t1
            slo_class: critical
            input: {type: lognormal, mu: 5, sigma: 0.5, min: 4, max: 2000}
            output: {type: exponential, mean: 60, min: 1, max: 500}
            prefix_group: sys
            prefix_length: 37
            session: {rounds: 3, think_time_s: 1.5, accumulate_context: true}
          - id: docs
            rate_fraction: 0.5
            arrival: {process: gamma, cv: 3}
            input: {type: gaussian, mean: 800, std: 200, min: 50, max: 2000}
            output: {type: constant, value: 16}
        """;
    List<RequestSpec> served = MiniEngine.run(WorkloadSpec.parse(yaml, "s.yaml").source(),
        r -> 30_000L + 3L * r.inputTokens() + 9_000L * r.outputTokens()).stream()
        .map(MiniEngine.Served::request).toList();
    assertThat(served).hasSize(898);
    assertThat(digest(served)).isEqualTo(6568828433320427563L);
  }

  @Test
  void theFlagsWorkloadDrawsFromThePopularity() {
    LengthSpec lengths = new LengthSpec(100, 20, 2, 200);
    List<RequestSpec> plain = TestSupport.drain(SyntheticWorkload.poissonGaussian(50, 4000, lengths, lengths, 8, 1));
    List<RequestSpec> lora = TestSupport.drain(SyntheticWorkload.poissonGaussian(50, 4000, lengths, lengths, 8, 1,
        AdapterPopularity.numbered(AdapterPopularity.DEFAULT_PREFIX, 3, 0, 0)));
    assertThat(lora.stream().map(r -> r.withAdapter("")).toList()).isEqualTo(plain);
    Map<String, Double> shares = shares(lora);
    assertThat(shares.keySet()).containsExactlyInAnyOrder("adapter-0", "adapter-1", "adapter-2");
    shares.values().forEach(s -> assertThat(s).isCloseTo(1 / 3.0, Offset.offset(0.03)));
  }

  @Test
  void aSessionKeepsItsFirstRoundsAdapter() {
    String yaml = """
        seed: 2
        num_requests: 400
        clients:
          - id: agent
            rate: 10
            input: {type: constant, value: 20}
            output: {type: constant, value: 5}
            session: {rounds: 4, think_time_s: 0.5}
            adapters: {count: 20, zipf: 0.5}
        """;
    List<MiniEngine.Served> served = MiniEngine.run(WorkloadSpec.parse(yaml, "s.yaml").source(), r -> 100_000L);
    assertThat(served).hasSize(1600);
    Map<Long, List<String>> bySession = new HashMap<>();
    for (MiniEngine.Served s : served) {
      bySession.computeIfAbsent(s.request().sessionId(), k -> new ArrayList<>()).add(s.request().adapter());
    }
    assertThat(bySession).hasSize(400).allSatisfy((id, names) -> assertThat(names).hasSize(4).containsOnly(names.get(0)));
    assertThat(bySession.values().stream().map(l -> l.get(0)).distinct().count()).isGreaterThan(5);
  }

  @Test
  void bothFormsAreWrittenBackAsRead() {
    String yaml = """
        seed: 1
        num_requests: 10
        clients:
          - id: numbered
            rate: 1
            input: {type: constant, value: 10}
            output: {type: constant, value: 5}
            adapters: {count: 100, zipf: 1.0, prefix: "lora-", base_share: 0.2}
          - id: listed
            rate: 1
            input: {type: constant, value: 10}
            output: {type: constant, value: 5}
            adapters: {names: [sql, "chat: v2", code], zipf: 0.7}
          - id: defaults
            rate: 1
            input: {type: constant, value: 10}
            output: {type: constant, value: 5}
            adapters: {count: 3}
          - id: one
            rate: 1
            model: llama
            input: {type: constant, value: 10}
            output: {type: constant, value: 5}
            adapter: sql-lora
        """;
    WorkloadSpec spec = WorkloadSpec.parse(yaml, "w.yaml");
    Function<Integer, ClientSpec> c = spec.clients()::get;
    assertThat(c.apply(0).adapters()).isEqualTo(AdapterPopularity.numbered("lora-", 100, 1.0, 0.2));
    assertThat(c.apply(1).adapters()).isEqualTo(AdapterPopularity.named(List.of("sql", "chat: v2", "code"), 0.7, 0));
    assertThat(c.apply(2).adapters()).isEqualTo(AdapterPopularity.numbered("adapter-", 3, 1.0, 0));
    assertThat(c.apply(2).adapters().name(2)).isEqualTo("adapter-2");
    assertThat(c.apply(3).adapter()).isEqualTo("sql-lora");
    assertThat(c.apply(3).adapters().isNone()).isTrue();
    assertThat(c.apply(0).adapter()).isEmpty();
    String written = SpecWriter.toYaml(spec, List.of());
    assertThat(written).contains("    adapters: {count: 100, prefix: \"lora-\", zipf: 1.0, base_share: 0.2}\n",
        "    adapters: {names: [\"sql\", \"chat: v2\", \"code\"], zipf: 0.7}\n", "    adapter: \"sql-lora\"\n");
    WorkloadSpec back = WorkloadSpec.parse(written, "written.yaml");
    assertThat(back).isEqualTo(spec);
    assertThat(SpecWriter.toYaml(back, List.of())).isEqualTo(written);
    assertThat(TestSupport.drain(back.source())).isEqualTo(TestSupport.drain(spec.source()));
  }

  @Test
  void badValuesAreRefusedWithTheKey() {
    assertThatThrownBy(() -> AdapterPopularity.numbered("a-", 0, 1, 0))
        .hasMessage("count must be a whole number in [1, 100000], got 0");
    assertThatThrownBy(() -> AdapterPopularity.numbered("a-", 100_001, 1, 0))
        .hasMessageStartingWith("count must be a whole number in [1, 100000]");
    assertThatThrownBy(() -> AdapterPopularity.numbered("a-", 3, -0.5, 0))
        .hasMessage("zipf must be a finite number >= 0 (0: every adapter equally popular), got -0.5");
    assertThatThrownBy(() -> AdapterPopularity.numbered("a-", 3, Double.NaN, 0)).hasMessageStartingWith("zipf must be");
    assertThatThrownBy(() -> AdapterPopularity.numbered("a-", 3, Double.POSITIVE_INFINITY, 0))
        .hasMessageStartingWith("zipf must be");
    assertThatThrownBy(() -> AdapterPopularity.numbered("a-", 3, 1, 1.01))
        .hasMessageStartingWith("base_share must be in [0, 1]");
    assertThatThrownBy(() -> AdapterPopularity.numbered("a,", 3, 1, 0))
        .hasMessageStartingWith("prefix 'a,' must not contain commas");
    assertThatThrownBy(() -> AdapterPopularity.named(List.of(), 1, 0))
        .hasMessage("names must list at least one adapter");
    assertThatThrownBy(() -> AdapterPopularity.named(List.of("a", "b", "a"), 1, 0))
        .hasMessage("names lists 'a' twice");
    assertThatThrownBy(() -> AdapterPopularity.named(List.of("a", ""), 1, 0))
        .hasMessage("names[1] is empty, expected an adapter's name");
    assertThatThrownBy(() -> AdapterPopularity.named(Arrays.asList("a", null), 1, 0))
        .hasMessage("names[1] is empty, expected an adapter's name");
    assertThatThrownBy(() -> AdapterPopularity.named(List.of("a\nb"), 1, 0))
        .hasMessageStartingWith("names[0] 'a\nb' must not contain commas, quotes or line breaks");
  }

  @Test
  void aClientNamesOneAdapterOrDrawsOneNotBoth() {
    LengthDistribution ten = new LengthDistribution.Constant(10);
    ArrivalProcess poisson = new ArrivalProcess.Poisson(1);
    ClientSpec old = new ClientSpec("c", "", "standard", poisson, ten, ten, "", 0, 0, SessionSpec.NONE,
        List.of(), RateCurve.NONE, "llama");
    assertThat(old.adapter()).isEmpty();
    assertThat(old.adapters()).isEqualTo(AdapterPopularity.NONE);
    assertThatThrownBy(() -> new ClientSpec("c", "", "standard", poisson, ten, ten, "", 0, 0, SessionSpec.NONE,
        List.of(), RateCurve.NONE, "", "x", AdapterPopularity.numbered("a-", 2, 1, 0)))
        .hasMessageStartingWith("client c: adapter and adapters exclude each other");
    assertThatThrownBy(() -> new ClientSpec("c", "", "standard", poisson, ten, ten, "", 0, 0, SessionSpec.NONE,
        List.of(), RateCurve.NONE, "", "x,y", AdapterPopularity.NONE))
        .hasMessageStartingWith("client c: name 'x,y' must not contain commas");
  }
}
