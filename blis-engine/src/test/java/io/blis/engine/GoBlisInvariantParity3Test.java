package io.blis.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.blis.api.RequestView;
import io.blis.engine.lora.LoraCosts;
import io.blis.engine.lora.LoraSpec;
import io.blis.engine.result.LoraReport;
import io.blis.engine.result.RequestRecord;
import io.blis.engine.result.SimulationResult;
import io.blis.latency.catalog.GpuCatalog;
import io.blis.latency.catalog.ModelCatalog;
import io.blis.latency.lora.LoraSizes;
import io.blis.workload.RequestOutcome;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Five more of Go BLIS's tests (inference-sim/inference-sim at f90a1e3a), re-expressed against
 * this engine: three about requests that name a LoRA adapter which is not yet on the GPU, and one
 * about the CPU KV tier's effect on prefix hits (the fifth, the order of the secondary offload
 * tiers, is a pool property: {@code io.blis.kvcache.GoBlisOffloadParityTest}). The scenarios and
 * properties are Go BLIS's; the code is this project's. The table is in docs/vllm-parity.md.
 *
 * <p>A design difference matters for the first: Go BLIS holds a request with a cold adapter out of
 * the batch until a separate load event ends (a gate before scheduling). This engine, as vLLM's
 * worker does, schedules the request at once and puts the adapter on the GPU at the start of the
 * step that runs it, so the load lengthens that step (docs/lora.md, "Loading").
 */
class GoBlisInvariantParity3Test {

  private static final String MODEL = "meta-llama/llama-3.1-8b-instruct";

  /** Steps of 100 us plus 10 us per new token; no other processing time. */
  private static final LinearTestModel STEP = new LinearTestModel(100, 10, 0, 0, 0, 0);

  /**
   * Go BLIS's test costs expressed as this project's spec: checkpoint read 1000 us plus the
   * adapter's bytes (2,000,000 per rank) at 2,000,000 bytes per us (2,000 GB/s), so a rank-8
   * adapter reads in 1008 us; the copy into a slot has no fixed cost; the step overhead factor is
   * 0 (k6 = 0), so an adapter adds no kernel time and a cold request's extra time is its load alone.
   */
  private static LoraCosts costs(int maxLoras, String... adapters) {
    Map<String, LoraSpec.Adapter> registry = new LinkedHashMap<>();
    for (String a : adapters) {
      registry.put(a, new LoraSpec.Adapter(a, 8, LoraSizes.ALL_LINEAR));
    }
    TreeMap<Integer, double[]> noOverhead = new TreeMap<>();
    noOverhead.put(16, new double[] {0.0, 1.0});
    LoraSpec spec = new LoraSpec(maxLoras, maxLoras, 16, 16, registry, 2_000.0, 1_000.0, 25.0, 0.0, 2.0e6,
        noOverhead);
    return LoraCosts.of(spec, ModelCatalog.resolve(MODEL), GpuCatalog.resolve("H100"), 1, 32);
  }

  private static Simulation.Builder base(List<RequestSpec> reqs) {
    return Simulation.builder().latencyModel(STEP).totalKvBlocks(256).blockSizeTokens(16)
        .source(RequestSource.of(reqs)).recordRequests(true);
  }

  /** The Go shape: one request, 8 prompt tokens, 4 output tokens, arriving at 0. */
  private static RequestSpec solo(long id, long arrivalUs, String adapter) {
    return RequestSpec.simple(id, arrivalUs, TestRequests.tokens(1_000 * (int) (id + 1), 8), 4).withAdapter(adapter);
  }

  private static RequestRecord only(SimulationResult r, long id) {
    return r.requests().stream().filter(x -> x.id() == id).findFirst().orElseThrow();
  }

  /** Times at which each request arrived, was queued, scheduled, got its first token and ended. */
  static final class Times implements EngineListener {
    final Map<Long, long[]> byId = new HashMap<>();

    private long[] of(RequestView r) {
      return byId.computeIfAbsent(r.id(), k -> new long[] {-1, -1, -1, -1, -1});
    }

    @Override
    public void onArrived(RequestView r, long t) {
      of(r)[0] = t;
    }

    @Override
    public void onQueued(int instance, RequestView r, long t) {
      if (of(r)[1] < 0) {
        of(r)[1] = t;
      }
    }

    @Override
    public void onScheduled(int instance, RequestView r, long stepId, boolean resume, long t) {
      if (of(r)[2] < 0) {
        of(r)[2] = t;
      }
    }

    @Override
    public void onFirstToken(int instance, RequestView r, long stepId, long t, long clientT) {
      of(r)[3] = t;
    }

    @Override
    public void onFinished(int instance, RequestView r, RequestOutcome o, long engineEndUs, long clientEndUs) {
      of(r)[4] = engineEndUs;
    }
  }

  // ------------------------------------------------------------------ LoRA cold load

  /**
   * Go: sim/cold_load_gate_test.go::TestColdLoadGate_INV5_GateDelaysSchedule (INV-5 causality for a
   * cold adapter). What holds here: the request's journey is ordered (arrival, queued, scheduled,
   * first token), and its first token cannot come before its adapter is on the GPU: the cold
   * request's TTFT exceeds the same request's on the base model by exactly the load time (1008 us
   * of checkpoint read plus the copy into the slot), and a second, warm request pays nothing.
   */
  @Test
  void inv5ColdAdapterLoadPrecedesTheFirstToken() {
    LoraCosts c = costs(2, "a8");
    long load = c.diskLoadUs("a8") + c.activateUs("a8");
    assertThat(c.diskLoadUs("a8")).isEqualTo(1_008); // Go's figure for the same costs
    assertThat(c.activateUs("a8")).isPositive();

    SimulationResult plain = base(List.of(solo(0, 0, ""))).lora("", costs(2, "a8")).build().run();
    Times times = new Times();
    SimulationResult cold = base(List.of(solo(0, 0, "a8"), solo(1, 5_000_000, "a8")))
        .lora("", c).listener(times).build().run();

    long baseTtft = only(plain, 0).ttftUs();
    assertThat(baseTtft).isEqualTo(100 + 10 * 8);
    assertThat(only(cold, 0).ttftUs() - baseTtft).isEqualTo(load);
    assertThat(only(cold, 1).ttftUs()).isEqualTo(baseTtft); // warm: no load
    long[] t = times.byId.get(0L);
    assertThat(t[0]).isLessThanOrEqualTo(t[1]);
    assertThat(t[1]).isLessThanOrEqualTo(t[2]);
    assertThat(t[2]).isLessThan(t[3]);
    assertThat(t[3] - t[0]).isGreaterThanOrEqualTo(load); // the load comes before the first token
    assertThat(t[3]).isLessThanOrEqualTo(t[4]);
    LoraReport l = cold.lora().orElseThrow();
    assertThat(l.adapters().get("a8").gpuLoads()).isEqualTo(1);
    assertThat(l.gpuLoads()).isEqualTo(1);
  }

  /**
   * Go's literal INV-5 assertion: a cold request's scheduling delay (arrival to scheduled) is at
   * least the adapter's load time, because Go's gate keeps it out of the batch until the load
   * ends. Here the request is scheduled in the first step and the load lengthens that step, so its
   * scheduling delay is the base request's (0 us) and the load shows in its TTFT instead.
   */
  @Test
  @Disabled("differs: the load lengthens the step that schedules the request (vLLM's worker), not the wait "
      + "before scheduling: the cold request's scheduling delay is 0 us, not >= its 1648 us load (1008 read + 640 copy)")
  void inv5GoLiteralScheduleDelayAbsorbsTheLoad() {
    LoraCosts c = costs(2, "a8");
    long load = c.diskLoadUs("a8") + c.activateUs("a8");
    SimulationResult cold = base(List.of(solo(0, 0, "a8"))).lora("", c).build().run();
    assertThat(only(cold, 0).schedulingDelayUs()).isGreaterThanOrEqualTo(load);
  }

  /**
   * Go: sim/cold_load_gate_test.go::TestColdLoadGate_INV6_BaseRequestUnaffectedByLoRAConfig. A
   * request on the base model (no adapter) is untouched by LoRA being enabled: the one-request run
   * has the same TTFT, and a busier base-only workload gives the same record for every request,
   * with and without LoRA (same KV blocks: the builder takes them as given). No adapter is loaded.
   */
  @Test
  void inv6BaseModelRequestsAreUnaffectedByLoraConfig() {
    SimulationResult plain = base(List.of(solo(0, 0, ""))).build().run();
    SimulationResult lora = base(List.of(solo(0, 0, ""))).lora("", costs(2, "a8")).build().run();
    assertThat(only(lora, 0).ttftUs()).isEqualTo(only(plain, 0).ttftUs());
    assertThat(only(lora, 0)).isEqualTo(only(plain, 0));

    SplittableRandom rnd = new SplittableRandom(59);
    List<RequestSpec> reqs = new ArrayList<>();
    long t = 0;
    for (int i = 0; i < 60; i++) {
      t += rnd.nextInt(400);
      reqs.add(RequestSpec.simple(i, t, TestRequests.tokens(10_000 * (i + 1), 1 + rnd.nextInt(120)),
          1 + rnd.nextInt(40)));
    }
    EngineLimits limits = new EngineLimits(8, 128, 0, 0, true);
    SimulationResult plainMany = base(reqs).limits(limits).totalKvBlocks(40).build().run();
    SimulationResult loraMany = base(reqs).limits(limits).totalKvBlocks(40).lora("", costs(1, "a8")).build().run();
    assertThat(plainMany.engine().preemptions()).isPositive(); // under KV pressure, not a trivial run
    assertThat(loraMany.requests()).isEqualTo(plainMany.requests());
    LoraReport l = loraMany.lora().orElseThrow();
    assertThat(l.gpuLoads()).isZero();
    assertThat(l.stepsWithAdapters()).isZero();
  }

  /**
   * Go: sim/cold_load_gate_test.go::TestColdLoadGate_INV8_NoDeadlockUnderCapacityPressure. One GPU
   * slot (max_loras 1) and two requests for two different cold adapters arriving together: the
   * run still drains. Both complete, each adapter is loaded once, the first is evicted once to make
   * room for the second, and the second's first token comes only after the first request ended
   * (its adapter could not share the step). A heavier variant, 6 adapters on one slot, also
   * drains.
   */
  @Test
  @Timeout(value = 10, unit = TimeUnit.SECONDS)
  void inv8OneSlotTwoColdAdaptersStillDrains() {
    LoraCosts c = costs(1, "a8", "b8");
    Times times = new Times();
    SimulationResult r = base(List.of(solo(0, 0, "a8"), solo(1, 0, "b8"))).lora("", c).listener(times)
        .build().run();
    assertThat(r.overall().completedRequests()).isEqualTo(2);
    assertThat(r.requests()).allMatch(x -> x.outcome() == RequestOutcome.COMPLETED);
    LoraReport l = r.lora().orElseThrow();
    assertThat(l.adapters().get("a8").gpuLoads()).isEqualTo(1);
    assertThat(l.adapters().get("b8").gpuLoads()).isEqualTo(1);
    assertThat(l.gpuEvictions()).isEqualTo(1);
    assertThat(l.peakResident()).isEqualTo(1);
    assertThat(l.passedOver()).isEqualTo(1);
    long firstEnd = times.byId.get(0L)[4];
    assertThat(times.byId.get(1L)[3] - firstEnd).isGreaterThanOrEqualTo(c.diskLoadUs("b8") + c.activateUs("b8"));

    String[] names = {"a", "b", "c", "d", "e", "f"};
    SplittableRandom rnd = new SplittableRandom(8);
    List<RequestSpec> reqs = new ArrayList<>();
    long at = 0;
    for (int i = 0; i < 60; i++) {
      at += rnd.nextInt(3) == 0 ? 0 : rnd.nextInt(100);
      reqs.add(RequestSpec.simple(i, at, TestRequests.tokens(10_000 * (i + 1), 1 + rnd.nextInt(60)),
          1 + rnd.nextInt(20)).withAdapter(names[rnd.nextInt(names.length)]));
    }
    SimulationResult many = base(reqs).totalKvBlocks(12).lora("", costs(1, names)).build().run();
    assertThat(many.overall().completedRequests()).isEqualTo(60);
    assertThat(many.lora().orElseThrow().peakResident()).isEqualTo(1);
    assertThat(many.lora().orElseThrow().adapters().values().stream()
        .mapToLong(a -> a.metrics().completedRequests()).sum()).isEqualTo(60);
  }

  // ------------------------------------------------------------------ CPU tier hit rate

  /**
   * Go: sim/kv/tiered_test.go::TestTieredKVCache_HitRate_MonotoneInCPUResidency. A prefix kept in
   * the CPU tier can only add hits: with the same sequential workload (each request arrives after
   * the previous one ended, so the cache sees the same sequence whatever the tier's size), the
   * prompt tokens served from a cache (the GPU's prefix cache or a reload from the CPU tier) never
   * decrease as the CPU tier grows from 0 to 64 blocks, and the GPU cache's own hits do not change.
   */
  @Test
  void prefixHitsAreMonotoneInCpuTierSize() {
    SplittableRandom rnd = new SplittableRandom(1586);
    int[][] prefixes = new int[8][];
    for (int p = 0; p < prefixes.length; p++) {
      prefixes[p] = TestRequests.tokens(1_000_000 * (p + 1), 16); // 4 blocks of 4 tokens
    }
    List<RequestSpec> reqs = new ArrayList<>();
    for (int i = 0; i < 80; i++) {
      int[] prompt = TestRequests.concat(prefixes[rnd.nextInt(prefixes.length)],
          TestRequests.tokens(50_000_000 + 100 * i, 4 + rnd.nextInt(8)));
      reqs.add(RequestSpec.simple(i, 1_000_000L * i, prompt, 2));
    }
    long prompts = reqs.stream().mapToLong(q -> q.promptTokens().length).sum();
    long[] sizes = {0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64};
    long prevServed = -1;
    double gpuRate = -1;
    long[] served = new long[sizes.length];
    for (int k = 0; k < sizes.length; k++) {
      Simulation.Builder b = Simulation.builder().latencyModel(STEP).totalKvBlocks(10).blockSizeTokens(4)
          .source(RequestSource.of(reqs)).recordRequests(true);
      if (sizes[k] > 0) {
        b.cpuKvTier(sizes[k], 50);
      }
      SimulationResult r = b.build().run();
      assertThat(r.overall().completedRequests()).isEqualTo(reqs.size());
      served[k] = r.requests().stream().mapToLong(RequestRecord::cachedPromptTokens).sum();
      assertThat(served[k]).as("cached prompt tokens with a CPU tier of %d blocks", sizes[k])
          .isGreaterThanOrEqualTo(prevServed);
      prevServed = served[k];
      if (gpuRate < 0) {
        gpuRate = r.engine().tokenHitRate();
      }
      assertThat(r.engine().tokenHitRate()).isEqualTo(gpuRate);
      if (sizes[k] == 0) {
        assertThat(r.engine().cpuLoadedBlocks()).isZero();
      }
    }
    System.out.println("GO-PARITY3 hit tokens by CPU tier size " + java.util.Arrays.toString(sizes) + ": "
        + java.util.Arrays.toString(served) + " of " + prompts);
    assertThat(served[sizes.length - 1]).isGreaterThan(served[0]); // the tier matters in this workload
  }
}
