package io.blis.engine;

import io.blis.engine.result.MetricsSummary;
import io.blis.engine.result.RequestRecord;
import io.blis.engine.result.SimulationResult;
import static org.assertj.core.api.Assertions.assertThat;

import io.blis.api.Scheduler;
import io.blis.engine.policy.Routers;
import io.blis.engine.sched.Schedulers;
import io.blis.kvcache.KvBlockPool;
import io.blis.workload.RequestOutcome;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Invariants checked on seeded random workloads and configurations. */
class EngineInvariantTest {

  /** One random scenario: workload, limits, cache size and scheduler, all from the seed. */
  record Scenario(long seed, List<RequestSpec> requests, EngineLimits limits, long kvBlocks,
      int blockSize, String scheduler, LinearTestModel model, long cpuBlocks, double loadUs,
      int instances, boolean leastLoaded) {

    static Scenario of(long seed) {
      SplittableRandom rnd = new SplittableRandom(seed);
      int blockSize = new int[] {4, 8, 16}[rnd.nextInt(3)];
      int maxModelLen = rnd.nextInt(4) == 0 ? 300 : 0;
      EngineLimits limits = new EngineLimits(1 + rnd.nextInt(12), 16 + rnd.nextInt(400),
          rnd.nextInt(3) == 0 ? 8 + rnd.nextInt(64) : 0, maxModelLen);
      long kvBlocks = rnd.nextBoolean() ? 12 + rnd.nextInt(40) : 2000;
      int[][] prefixes = new int[3][];
      for (int g = 0; g < prefixes.length; g++) {
        prefixes[g] = TestRequests.tokens(1_000_000 * (g + 1), 16 + rnd.nextInt(100));
      }
      List<RequestSpec> reqs = new ArrayList<>();
      long t = 0;
      int n = 20 + rnd.nextInt(60);
      String[] slo = {"critical", "standard", "batch", "sheddable"};
      for (int i = 0; i < n; i++) {
        t += rnd.nextInt(3) == 0 ? 0 : rnd.nextInt(3000);
        int[] suffix = TestRequests.tokens(10_000 * i, 1 + rnd.nextInt(120));
        int[] prompt = rnd.nextBoolean()
            ? TestRequests.concat(prefixes[rnd.nextInt(prefixes.length)], suffix) : suffix;
        long timeout = rnd.nextInt(5) == 0 ? 2000 + rnd.nextInt(40_000) : 0;
        reqs.add(new RequestSpec(i, t, prompt, 1 + rnd.nextInt(60), slo[rnd.nextInt(slo.length)],
            "", "", 0, -1, 0, timeout, rnd.nextInt(2)));
      }
      String sched = new String[] {"fcfs", "priority-fcfs", "sjf"}[rnd.nextInt(3)];
      LinearTestModel model = new LinearTestModel(50 + rnd.nextInt(500), rnd.nextInt(5),
          rnd.nextInt(100), rnd.nextInt(50), rnd.nextInt(20), rnd.nextInt(200));
      long cpuBlocks = rnd.nextBoolean() ? 0 : 4 + rnd.nextInt(200);
      double loadUs = rnd.nextInt(300) / 7.0;
      int instances = rnd.nextInt(3) == 0 ? 2 + rnd.nextInt(2) : 1;
      return new Scenario(seed, reqs, limits, kvBlocks, blockSize, sched, model, cpuBlocks,
          loadUs, instances, rnd.nextBoolean());
    }

    Scheduler newScheduler() {
      return switch (scheduler) {
        case "priority-fcfs" -> Schedulers.priorityFcfs();
        case "sjf" -> Schedulers.shortestJobFirst();
        default -> Schedulers.fcfs();
      };
    }

    Simulation.Builder builder() {
      return Simulation.builder().latencyModel(model).scheduler(newScheduler()).limits(limits)
          .totalKvBlocks(kvBlocks).blockSizeTokens(blockSize)
          .source(RequestSource.of(requests)).recordRequests(true).cpuKvTier(cpuBlocks, loadUs)
          .instances(instances)
          .router(leastLoaded ? Routers.leastLoaded() : Routers.roundRobin());
    }
  }

  static Stream<Arguments> seeds() {
    return LongStream.rangeClosed(1, 60).mapToObj(s -> Arguments.of(s));
  }

  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  @org.junit.jupiter.api.Timeout(20)
  void invariantsHoldOnRandomWorkloads(long seed) {
    Scenario sc = Scenario.of(seed);
    long[] lastStart = {-1};
    Set<KvBlockPool> pools = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
    List<String> violations = new ArrayList<>();
    Simulation sim = sc.builder().stepObserver((startUs, stepUs, batch, running, waiting, pool) -> {
      pools.add(pool);
      if (startUs < lastStart[0]) {
        violations.add("clock went back at " + startUs);
      }
      lastStart[0] = startUs;
      if (batch.totalNewTokens() > sc.limits().maxNumBatchedTokens()) {
        violations.add("budget exceeded at " + startUs + ": " + batch.totalNewTokens());
      }
      if (running.size() > sc.limits().maxNumSeqs() || batch.size() > sc.limits().maxNumSeqs()) {
        violations.add("max-num-seqs exceeded at " + startUs);
      }
      int referenced = 0;
      for (int id = 0; id < pool.totalBlocks(); id++) {
        if (pool.refCount(id) > 0) {
          referenced++;
        }
      }
      if (referenced != pool.usedBlocks() || pool.usedBlocks() + pool.freeBlocks() != pool.totalBlocks()) {
        violations.add("KV blocks not conserved at " + startUs);
      }
      Set<Long> ids = new HashSet<>();
      for (int i = 0; i < batch.size(); i++) {
        EngineRequest r = batch.get(i);
        if (r.newTokens() < 1 || !ids.add(r.id())) {
          violations.add("bad batch entry " + r + " at " + startUs);
        }
        if (r.table.numBlocks() * (long) sc.blockSize() < r.progress + r.newTokens) {
          violations.add("request " + r.id() + " lacks KV slots at " + startUs);
        }
        if (r.progress + r.newTokens > r.inputTokens + r.outputTokens - 1) {
          violations.add("request " + r.id() + " computes past its last token at " + startUs);
        }
      }
    }).build();
    SimulationResult res = sim.run();

    assertThat(violations).as("seed %d", seed).isEmpty();
    MetricsSummary o = res.overall();
    assertThat(o.injectedRequests()).as("seed %d", seed).isEqualTo(sc.requests().size());
    assertThat(o.completedRequests() + o.timedOutRequests() + o.rejectedRequests()
        + o.stillQueued() + o.stillRunning()).isEqualTo(o.injectedRequests());
    assertThat(o.stillQueued() + o.stillRunning()).isZero();
    assertThat(res.requests()).hasSize(sc.requests().size());
    assertThat(pools.size()).isLessThanOrEqualTo(sc.instances());
    for (KvBlockPool pool : pools) {
      assertThat(pool.usedBlocks()).as("all KV released, seed %d", seed).isZero();
    }
    for (RequestRecord r : res.requests()) {
      RequestSpec spec = sc.requests().get((int) r.id());
      if (r.outcome() == RequestOutcome.COMPLETED) {
        assertThat(r.outputTokens()).isEqualTo(spec.outputTokens());
        assertThat(r.ttftUs()).isBetween(r.schedulingDelayUs(), r.e2eUs());
        assertThat(r.schedulingDelayUs()).isGreaterThanOrEqualTo(sc.model().queueUs);
      } else if (r.outcome() == RequestOutcome.TIMED_OUT) {
        assertThat(r.e2eUs()).isEqualTo(spec.timeoutUs());
      } else {
        assertThat(r.rejectReason()).isNotEmpty();
      }
    }
    long itlSamples = res.requests().stream().filter(r -> r.outcome() == RequestOutcome.COMPLETED)
        .mapToLong(r -> r.outputTokens() - 1).sum();
    assertThat(o.itl().count()).isEqualTo(itlSamples);
    long stageSum = res.stages().stream().mapToLong(MetricsSummary::completedRequests).sum();
    assertThat(stageSum).isEqualTo(o.completedRequests());
  }

  /** The random scenarios do reach preemption, timeouts, rejections and queueing. */
  @org.junit.jupiter.api.Test
  void randomScenariosCoverTheHardPaths() {
    long preemptions = 0;
    long timeouts = 0;
    long rejections = 0;
    long delayed = 0;
    long cpuLoads = 0;
    for (long seed = 1; seed <= 60; seed++) {
      SimulationResult res = Scenario.of(seed).builder().build().run();
      preemptions += res.engine().preemptions();
      timeouts += res.overall().timedOutRequests();
      rejections += res.overall().rejectedRequests();
      cpuLoads += res.engine().cpuLoadedBlocks();
      delayed += res.requests().stream().filter(r -> r.schedulingDelayUs() > 1000).count();
    }
    assertThat(preemptions).isPositive();
    assertThat(timeouts).isPositive();
    assertThat(rejections).isPositive();
    assertThat(delayed).isPositive();
    assertThat(cpuLoads).isPositive();
  }

  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  void sameSeedGivesByteIdenticalJson(long seed) {
    String a = Scenario.of(seed).builder().build().run().toJson();
    String b = Scenario.of(seed).builder().build().run().toJson();
    assertThat(a).isEqualTo(b);
  }

  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  void streamingPercentilesStayWithinOneRankOfExactOnes(long seed) {
    Scenario sc = Scenario.of(seed);
    SimulationResult exact = sc.builder().build().run();
    MetricsSummary streaming = sc.builder().streamingMetrics(true).build().run().overall();
    long[] sorted = exact.requests().stream().filter(r -> r.outcome() == RequestOutcome.COMPLETED)
        .mapToLong(RequestRecord::e2eUs).sorted().toArray();
    assertThat(streaming.e2e().count()).isEqualTo(sorted.length);
    assertThat(streaming.e2e().meanUs()).isEqualTo(exact.overall().e2e().meanUs());
    if (sorted.length == 0) {
      return;
    }
    double[] ps = {50, 90, 99};
    double[] got = {streaming.e2e().p50Us(), streaming.e2e().p90Us(), streaming.e2e().p99Us()};
    for (int k = 0; k < ps.length; k++) {
      double rank = ps[k] / 100 * (sorted.length - 1);
      int lo = Math.max(0, (int) Math.floor(rank) - 1);
      int hi = Math.min(sorted.length - 1, (int) Math.ceil(rank) + 1);
      assertThat(got[k]).as("seed %d p%s", seed, ps[k])
          .isBetween(sorted[lo] * 0.999, sorted[hi] * 1.001);
    }
  }
}
