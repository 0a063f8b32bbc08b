package io.blis.engine.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.blis.engine.lora.AdapterSlots;
import io.blis.engine.lora.LoraCosts;
import io.blis.engine.lora.LoraSpec;
import io.blis.engine.result.LoraReport;
import io.blis.engine.result.SimulationResult;
import io.blis.latency.catalog.GpuCatalog;
import io.blis.latency.catalog.ModelCatalog;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** LoRA adapters on clusters built from names (bundled model and GPUs). */
class LoraClusterTest {

  private static final String MODEL = "meta-llama/llama-3.1-8b-instruct";

  /**
   * {@code n} requests at {@code ratePerS} (Poisson) naming one of {@code adapters} adapters with
   * Zipf(1) popularity, prompts of about 512 tokens, 64 output tokens.
   */
  private static List<RequestSpec> workload(int n, double ratePerS, int adapters, long seed) {
    SplittableRandom rnd = new SplittableRandom(seed);
    double[] cdf = new double[adapters];
    double sum = 0;
    for (int k = 0; k < adapters; k++) {
      sum += 1.0 / (k + 1);
      cdf[k] = sum;
    }
    List<RequestSpec> out = new ArrayList<>();
    double t = 0;
    for (int i = 0; i < n; i++) {
      t += -Math.log(1 - rnd.nextDouble()) / ratePerS;
      int[] tokens = new int[448 + rnd.nextInt(128)];
      for (int k = 0; k < tokens.length; k++) {
        tokens[k] = rnd.nextInt(100_000);
      }
      double u = rnd.nextDouble() * sum;
      int a = 0;
      while (cdf[a] < u) {
        a++;
      }
      out.add(RequestSpec.simple(i, (long) (t * 1e6), tokens, 64).withAdapter("lora-" + a));
    }
    return out;
  }

  private static SimulationResult run(int instances, String router, LoraSpec lora, List<RequestSpec> reqs) {
    Cluster.Builder b = Cluster.builder().defaults(PoolSpec.builder("default").model(MODEL).build())
        .instances(instances).router(new PolicySpec(router, router.equals("weighted")
            ? Map.of("scorers", "load:1,lora-affinity:2") : Map.of()));
    if (lora != null) {
      b.lora(lora);
    }
    return b.toSimulation().source(RequestSource.of(reqs)).build().run();
  }

  @Test
  void loadTimesAndReservationByHand() {
    LoraCosts c = LoraCosts.of(LoraSpec.of(4), ModelCatalog.resolve(MODEL), GpuCatalog.resolve("H100"), 1, 32);
    // rank 16 on every module: 83,886,080 bytes (LoraSizesTest). Reading it at 2 GB/s: 41,943 us +
    // 1,500 us; copying it into a slot: 448 tensors x 10 us + 83,886,080 B at 25 GB/s (3,355 us)
    assertThat(c.diskLoadUs("any")).isEqualTo(43_443);
    assertThat(c.activateUs("any")).isEqualTo(7_835);
    assertThat(c.reservedBytesPerGpu()).isEqualTo(4 * 83_886_080L);
    // Go BLIS's footprint per rank replaces the shapes: 2 MB x 16
    LoraSpec go = new LoraSpec(2, 2, 16, 16, Map.of(), 2.0, 1500, 25, 10, 2e6, new TreeMap<>());
    LoraCosts g = LoraCosts.of(go, ModelCatalog.resolve(MODEL), GpuCatalog.resolve("H100"), 1, 32);
    assertThat(g.adapterBytes("x")).isEqualTo(32_000_000L);
    assertThat(g.diskLoadUs("x")).isEqualTo(1_500 + 16_000);
    assertThat(g.reservedBytesPerGpu()).isEqualTo(64_000_000L);
  }

  @Test
  void slotsAreLeastRecentlyUsedAndNeverExceedMaxLoras() {
    AdapterSlots s = new AdapterSlots(LoraCosts.of(new LoraSpec(2, 3, 16, 16, Map.of(), 2.0, 1500, 25, 10, null,
        new TreeMap<>()), ModelCatalog.resolve(MODEL), GpuCatalog.resolve("H100"), 1, 32));
    long base = 10_000;
    long cold = s.prepareStep(new String[] {"a"}, new int[] {1}, 1, base);
    assertThat(s.diskLoads()).isEqualTo(1);
    assertThat(cold).isEqualTo(43_443 + 7_835 + 1_024); // read, copy, and the kernels at their floor
    assertThat(s.prepareStep(new String[] {"a"}, new int[] {1}, 1, base)).isEqualTo(1_024); // warm
    s.prepareStep(new String[] {"b"}, new int[] {1}, 1, base);
    s.prepareStep(new String[] {"c"}, new int[] {1}, 1, base); // evicts a (least recently used) from the GPU
    assertThat(s.resident()).isEqualTo(2);
    assertThat(s.onGpu("a")).isFalse();
    assertThat(s.gpuEvictions()).isEqualTo(1);
    // a is still in host memory (3 slots there): copied, not read again
    long back = s.prepareStep(new String[] {"a", "c"}, new int[] {1, 1}, 2, base);
    assertThat(s.diskLoads()).isEqualTo(3);
    assertThat(back).isEqualTo(7_835 + 1_024);
    assertThat(s.onGpu("b")).isFalse(); // b was the least recently used, and the step used a and c
    s.prepareStep(new String[] {"d"}, new int[] {1}, 1, base); // host memory full: drops b, the oldest unused
    assertThat(s.cpuEvictions()).isEqualTo(1);
    assertThat(s.peakResident()).isEqualTo(2);
    assertThatThrownBy(() -> s.prepareStep(new String[] {"a", "b", "c"}, new int[] {1, 1, 1}, 3, base))
        .hasMessageContaining("more than max_loras 2");
  }

  @Test
  void everyRequestCompletesAndNoInstanceHoldsMoreThanMaxLoras() {
    List<RequestSpec> reqs = workload(600, 20, 40, 7);
    SimulationResult r = run(2, "round-robin", LoraSpec.of(3), reqs);
    assertThat(r.overall().completedRequests()).isEqualTo(600);
    LoraReport l = r.lora().orElseThrow();
    assertThat(l.peakResident()).isLessThanOrEqualTo(3);
    assertThat(l.passedOver()).isPositive(); // 40 adapters, 3 slots: the scheduler passes requests over
    long completed = l.adapters().values().stream().mapToLong(a -> a.metrics().completedRequests()).sum();
    assertThat(completed).isEqualTo(600);
    assertThat(l.gpuLoads()).isEqualTo(l.adapters().values().stream().mapToLong(LoraReport.Adapter::gpuLoads).sum());
    // the same inputs give the same bytes
    assertThat(run(2, "round-robin", LoraSpec.of(3), reqs).toJson()).isEqualTo(r.toJson());
  }

  @Test
  void withFewSlotsColdLoadsAndTtftRiseWithTheNumberOfAdapters() {
    double[] ttft = new double[3];
    long[] loads = new long[3];
    int[] counts = {2, 16, 128};
    for (int i = 0; i < counts.length; i++) {
      SimulationResult r = run(4, "round-robin", LoraSpec.of(2), workload(2_000, 16, counts[i], 11));
      ttft[i] = r.overall().ttft().meanUs();
      loads[i] = r.lora().orElseThrow().gpuLoads();
    }
    assertThat(loads[0]).isLessThan(loads[1]);
    assertThat(loads[1]).isLessThan(loads[2]);
    assertThat(ttft[0]).isLessThan(ttft[1]);
    assertThat(ttft[1]).isLessThan(ttft[2]);
  }

  @Test
  void loraAffinityLowersColdLoadsAndTtftAgainstRoundRobin() {
    List<RequestSpec> reqs = workload(2_000, 16, 32, 5);
    SimulationResult rr = run(4, "round-robin", LoraSpec.of(2), reqs);
    SimulationResult affinity = run(4, "weighted", LoraSpec.of(2), reqs);
    System.out.println("LORA rr " + rr.lora().orElseThrow().gpuLoads() + " " + rr.overall().ttft() + " aff "
        + affinity.lora().orElseThrow().gpuLoads() + " " + affinity.overall().ttft());
    assertThat(affinity.lora().orElseThrow().gpuLoads()).isLessThan(rr.lora().orElseThrow().gpuLoads() * 4 / 5);
    assertThat(affinity.overall().ttft().meanUs()).isLessThan(rr.overall().ttft().meanUs());
  }

  @Test
  void adaptersCostKvBlocksAndStepTime() {
    List<RequestSpec> reqs = workload(200, 4, 1, 3);
    SimulationResult base = run(1, "round-robin", null, reqs.stream().map(r -> r.withAdapter("")).toList());
    SimulationResult lora = run(1, "round-robin", LoraSpec.of(8), reqs);
    // 8 slots of 80 MiB: 320 blocks of 2 MiB fewer
    assertThat(base.engine().totalBlocks() - lora.engine().totalBlocks()).isEqualTo(320);
    assertThat(lora.overall().itl().meanUs()).isGreaterThan(base.overall().itl().meanUs());
    assertThat(base.lora()).isEmpty();
    assertThat(base.toJson()).doesNotContain("\"lora\"");
    // without LoRA, requests naming adapters are refused as vLLM answers an unknown model
    SimulationResult off = run(1, "round-robin", null, reqs);
    assertThat(off.overall().rejectedByReason()).containsEntry("adapter_not_served", 200L);
  }

  @Test
  void registryAndFileErrors(@TempDir Path dir) throws IOException {
    Path f = dir.resolve("lora.yaml");
    Files.writeString(f, """
        lora:
          adapter_capacity: 2
          max_lora_rank: 32
          adapters:
            - {id: sql, rank: 8, target_modules: [q_proj, v_proj]}
            - {id: chat, rank: 32}
          load_bandwidth_bytes_us: 4000
          step_overhead_tiers:
            16: {k6: 0.035, k7: 1.0}
        """);
    LoraSpec s = LoraFile.load(f, null);
    assertThat(s.maxLoras()).isEqualTo(2);
    assertThat(s.maxCpuLoras()).isEqualTo(2);
    assertThat(s.diskGbPerS()).isEqualTo(4.0);
    assertThat(s.adapter("sql").rank()).isEqualTo(8);
    assertThatThrownBy(() -> s.adapter("nope")).hasMessageContaining("LoRA adapter 'nope' is not in the registry");
    assertThat(LoraFile.load(f, 5).maxLoras()).isEqualTo(5);
    // Go BLIS's factor: 3.5% of the step per distinct adapter (the tier above the highest rank, else the highest)
    LoraCosts c = LoraCosts.of(s, ModelCatalog.resolve(MODEL), GpuCatalog.resolve("H100"), 1, 32);
    assertThat(c.stepOverheadUs(10_000, new int[] {8, 32}, new int[] {1, 1}, 2)).isEqualTo(700);

    Files.writeString(f, "lora:\n  max_loras: 2\n  adapters:\n    - {id: big, rank: 64}\n");
    assertThatThrownBy(() -> LoraFile.load(f, null)).hasMessageContaining("rank 64 exceeds max_lora_rank 16")
        .hasMessageContaining(f.toString());
    Files.writeString(f, "lora:\n  max_loras: 2\n  adapters:\n    - {id: x, rank: 8, target_modules: [lm_head]}\n");
    assertThatThrownBy(() -> LoraFile.load(f, null)).hasMessageContaining("unknown LoRA target module 'lm_head'")
        .hasMessageContaining("line 4");
    Files.writeString(f, "lora:\n  max_loras: 2\n  max_cpu_loras: 1\n");
    assertThatThrownBy(() -> LoraFile.load(f, null)).hasMessageContaining("max_cpu_loras must be in [max_loras (2)");
    Files.writeString(f, "lora:\n  slots: 2\n");
    assertThatThrownBy(() -> LoraFile.load(f, null)).hasMessageContaining("slots");
    Files.writeString(f, "max_loras: 2\n");
    assertThatThrownBy(() -> LoraFile.load(f, null)).hasMessageContaining("max_loras");
  }

  @Test
  void aPolicyBundleHasALoraSection() {
    PolicyBundle b = PolicyBundle.parse("""
        pools:
          - {name: a, instances: 2, model: meta-llama/llama-3.1-8b-instruct}
        router: {policy: weighted, scorers: "load:1,lora-affinity:2"}
        lora:
          max_loras: 2
          max_cpu_loras: 8
          adapters:
            - {id: lora-0, rank: 8, target_modules: [q_proj, v_proj]}
            - {id: lora-1, rank: 16}
          step_overhead_tiers:
            16: {k6: 0.035, k7: 1.0}
        """, "b.yaml");
    assertThat(b.lora().maxCpuLoras()).isEqualTo(8);
    assertThat(PolicyBundle.parse(b.toYaml(), "again.yaml")).isEqualTo(b);
    List<RequestSpec> reqs = workload(200, 8, 2, 9);
    SimulationResult r = Cluster.builder().bundle(b).toSimulation().source(RequestSource.of(reqs)).build().run();
    assertThat(r.overall().completedRequests()).isEqualTo(200);
    assertThat(r.lora().orElseThrow().maxLoras()).isEqualTo(2);
    // an explicit setting replaces the bundle's
    SimulationResult four = Cluster.builder().bundle(b).lora(LoraSpec.of(4)).toSimulation().source(RequestSource.of(reqs))
        .build().run();
    assertThat(four.lora().orElseThrow().maxLoras()).isEqualTo(4);
    assertThatThrownBy(() -> PolicyBundle.parse("lora:\n  max_loras: 0\n", "bad.yaml"))
        .hasMessageContaining("bad.yaml").hasMessageContaining("max_loras must be a whole number >= 1");
  }
}
