package io.blis.engine.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.blis.engine.result.DisaggregationReport;
import io.blis.engine.result.MetricsSummary;
import io.blis.engine.result.SimulationResult;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Prefill/decode disaggregation of clusters built from names (bundled model and GPUs). */
class DisaggregatedClusterTest {

  private static final String MODEL = "meta-llama/llama-3.1-8b-instruct";

  /** {@code n} requests at {@code ratePerS} (Poisson), prompts of about {@code prompt} tokens, distinct. */
  private static List<RequestSpec> workload(int n, double ratePerS, int prompt, int output, long seed) {
    SplittableRandom rnd = new SplittableRandom(seed);
    List<RequestSpec> out = new ArrayList<>();
    double t = 0;
    for (int i = 0; i < n; i++) {
      t += -Math.log(1 - rnd.nextDouble()) / ratePerS;
      int len = Math.max(16, prompt + (int) Math.round(rnd.nextGaussian() * prompt / 8.0));
      int[] tokens = new int[len];
      for (int k = 0; k < len; k++) {
        tokens[k] = rnd.nextInt(100_000);
      }
      out.add(RequestSpec.simple(i, (long) (t * 1e6), tokens, output));
    }
    return out;
  }

  private static SimulationResult run(PolicyBundle bundle, List<RequestSpec> reqs) {
    return Cluster.builder().bundle(bundle).defaults(PoolSpec.builder("default").model(MODEL).build())
        .toSimulation().source(RequestSource.of(reqs)).build().run();
  }

  private static PolicyBundle bundle(String yaml) {
    return PolicyBundle.parse(yaml, "test.yaml");
  }

  private static final String SPLIT = """
      pools:
        - {name: prefill, instances: 3, role: prefill}
        - {name: decode, instances: 5, role: decode}
      router: {policy: least-loaded}
      disaggregation: {decider: always}
      """;

  private static final String WHOLE = """
      pools:
        - {name: all, instances: 8}
      router: {policy: least-loaded}
      """;

  @Test
  void transferTimeFromTheLinks() {
    // Llama-3.1-8B: 2 x 32 layers x 8 KV heads x 128 x 2 bytes = 131,072 bytes of KV a token. A
    // prompt of 4,001 tokens moves 4,000 (the decode instance recomputes the last). Two H100s of
    // one node: NVLink at 450 GB/s: 524,288,000 bytes in 1,165.08 us, rounded up to 1,166, + 3 us
    // link latency + 50 us base = 1,219 us
    int[] prompt = new int[4_001];
    java.util.Arrays.setAll(prompt, i -> i);
    List<RequestSpec> one = List.of(RequestSpec.simple(1, 0, prompt, 4));
    DisaggregationReport nvlink = run(bundle("""
        pools:
          - {name: prefill, instances: 1, role: prefill}
          - {name: decode, instances: 1, role: decode, tp: 2}
        disaggregation: {decider: always}
        """), one).disaggregation().orElseThrow();
    // at TP 2 each decode GPU receives half the heads; the prefill GPU sends all of them: its link sets the time
    assertThat(nvlink.transferUs().meanUs()).isEqualTo(1_219);
    assertThat(nvlink.transferredGb()).isEqualTo(0.524288);
    // an A100 prefill instance and an H100 decode instance are on different nodes: NICs of 25 and
    // 50 GB/s, the slower sets the rate: 20,971.52 us, rounded up, + 10 + 50 = 21,032 us
    DisaggregationReport nic = run(bundle("""
        pools:
          - {name: prefill, instances: 1, role: prefill, gpu: A100-80GB}
          - {name: decode, instances: 1, role: decode}
        disaggregation: {decider: always}
        """), one).disaggregation().orElseThrow();
    assertThat(nic.transferUs().meanUs()).isEqualTo(21_032);
    // a fixed bandwidth over the whole KV (Go BLIS's flag): 524,288,000 bytes at 25 GB/s = 20,971.52 us + 50
    DisaggregationReport fixed = run(bundle("""
        pools:
          - {name: prefill, instances: 1, role: prefill}
          - {name: decode, instances: 1, role: decode}
        disaggregation: {decider: always, transfer_bandwidth_gb_s: 25, transfer_base_latency_ms: 0.05}
        """), one).disaggregation().orElseThrow();
    assertThat(fixed.transferUs().meanUs()).isEqualTo(21_022);
  }

  @Test
  void disaggregationKeepsDecodeSmoothUnderLongPromptLoad() {
    // the same 8 H100s whole and as 3 prefill + 5 decode, 4,000-token prompts at 10 requests/s:
    // whole, decode steps share the GPU with prefill chunks and their inter-token latency's p99
    // jumps to the chunks' length; split, the decode instances only decode
    List<RequestSpec> reqs = workload(600, 10, 4_000, 300, 11);
    MetricsSummary whole = run(bundle(WHOLE), reqs).overall();
    SimulationResult split = run(bundle(SPLIT), reqs);
    assertThat(whole.completedRequests()).isEqualTo(600);
    assertThat(split.overall().completedRequests()).isEqualTo(600);
    assertThat(split.overall().outputTokens()).isEqualTo(whole.outputTokens());
    assertThat(split.overall().itl().p99Us()).isLessThan(whole.itl().p99Us() / 3);
    assertThat(split.disaggregation().orElseThrow().transferred()).isEqualTo(600);
  }

  @Test
  void atLightLoadTheFirstTokenComesLaterByTheTransferAndOneDecodeStep() {
    // one request every 2 s: nobody queues; split, the first token waits for the KV to move and for
    // the decode instance's step that recomputes the last prompt token
    List<RequestSpec> reqs = workload(40, 0.5, 4_000, 50, 12);
    MetricsSummary whole = run(bundle(WHOLE), reqs).overall();
    SimulationResult split = run(bundle(SPLIT), reqs);
    DisaggregationReport d = split.disaggregation().orElseThrow();
    double later = split.overall().ttft().meanUs() - whole.ttft().meanUs();
    double expected = d.transferUs().meanUs() + d.firstDecodeUs().meanUs();
    assertThat(d.transferUs().meanUs()).isGreaterThan(1_000); // about 4,000 x 128 KiB over NVLink
    assertThat(later).isBetween(0.9 * expected, 1.1 * expected);
    assertThat(d.decodeWaitUs().p99Us()).isZero();
  }

  @Test
  void badSettingsAreOneLine() {
    assertThatThrownBy(() -> bundle("""
        pools:
          - {name: p, instances: 1, role: prefil}
        """)).hasMessageContaining("test.yaml").hasMessageContaining("role must be prefill, decode or both, got 'prefil'");
    assertThatThrownBy(() -> bundle("disaggregation: {decider: sometimes}\n"))
        .hasMessageContaining("line 1").hasMessageContaining("must be never, always or prefix-threshold");
    assertThatThrownBy(() -> bundle("disaggregation: {transfer_bandwidth_gb_s: 0}\n"))
        .hasMessageContaining("transfer_bandwidth_gb_s must be in [0.01, 1e6) GB/s");
    assertThatThrownBy(() -> bundle("disaggregation: {transfer_contention: yes please}\n"))
        .hasMessageContaining("transfer_contention must be true or false");
    assertThatThrownBy(() -> bundle("disaggregation: {prefill: 3}\n")).hasMessageContaining("prefill");
    assertThatThrownBy(() -> run(bundle("""
        pools:
          - {name: p, instances: 1, role: prefill}
          - {name: d, instances: 1, role: decode}
          - {name: q, instances: 1, role: prefill, model: qwen/qwen3-14b}
        disaggregation: {decider: always}
        """), workload(1, 1, 100, 2, 1))).hasMessageContaining("no pool of model Qwen/Qwen3-14B decodes");
    assertThatThrownBy(() -> run(bundle("""
        pools:
          - {name: p, instances: 1, role: prefill}
          - {name: d, instances: 1, role: prefill}
        """), workload(1, 1, 100, 2, 1))).hasMessageContaining("no pool decodes");
  }

  @Test
  void eachModelSplitsOnItsOwnPools() {
    // Llama prefills on instance 0 and decodes on 1; Qwen's one instance does both (its KV stays
    // where it is); a request naming no model is kept whole, on any instance that decodes
    PolicyBundle b = bundle("""
        pools:
          - {name: lp, instances: 1, role: prefill}
          - {name: ld, instances: 1, role: decode}
          - {name: q, instances: 1, model: qwen/qwen3-14b}
        disaggregation: {decider: always}
        """);
    List<RequestSpec> reqs = new ArrayList<>();
    for (RequestSpec s : workload(30, 2, 500, 10, 9)) {
      reqs.add(s.withModel(s.id() % 3 == 0 ? "llama-3.1-8b" : s.id() % 3 == 1 ? "qwen3-14b" : ""));
    }
    SimulationResult r = Cluster.builder().bundle(b).defaults(PoolSpec.builder("default").model(MODEL).build())
        .toSimulation().source(RequestSource.of(reqs)).recordRequests(true).build().run();
    assertThat(r.overall().completedRequests()).isEqualTo(30);
    for (io.blis.engine.result.RequestRecord rec : r.requests()) {
      switch ((int) (rec.id() % 3)) {
        case 0 -> assertThat(rec.instance()).isEqualTo(1);
        case 1 -> assertThat(rec.instance()).isEqualTo(2);
        default -> assertThat(rec.instance()).isIn(1, 2);
      }
    }
    DisaggregationReport d = r.disaggregation().orElseThrow();
    assertThat(d.disaggregated()).isEqualTo(20);
    assertThat(d.keptWhole()).isEqualTo(10); // the unnamed ten: nothing to split them onto
    assertThat(r.cluster().models().get("Qwen/Qwen3-14B").completedRequests()).isEqualTo(10);
  }

  @Test
  void bundleReadsBackFromItsYaml() {
    PolicyBundle b = bundle("""
        pools:
          - {name: p, instances: 2, role: prefill}
          - {name: d, instances: 3, role: decode}
          - {name: s, instances: 1, role: prefill-decode}
        disaggregation:
          decider: prefix-threshold
          prefix_threshold: 32
          transfer_bandwidth_gb_s: 12.5
          transfer_base_latency_ms: 0.2
          transfer_contention: true
          prefill_router: {policy: least-loaded}
          decode_router: {policy: weighted, scorers: {kv-utilization: 1, load: 2}}
        """);
    assertThat(b.pools().get(2).role()).isEqualTo("both");
    assertThat(b.disaggregation()).isEqualTo(new PdSpec("prefix-threshold", 32, 12.5, 200L, true,
        new PolicySpec("least-loaded", Map.of()),
        new PolicySpec("weighted", Map.of("scorers", "kv-utilization:1,load:2"))));
    assertThat(PolicyBundle.parse(b.toYaml(), "again")).isEqualTo(b);
  }
}
