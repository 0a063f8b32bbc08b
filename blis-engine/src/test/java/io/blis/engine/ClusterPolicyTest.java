package io.blis.engine;

import io.blis.engine.result.SimulationResult;
import static org.assertj.core.api.Assertions.assertThat;

import io.blis.api.Router;
import io.blis.engine.policy.Admissions;
import io.blis.engine.policy.Priorities;
import io.blis.engine.policy.Routers;
import io.blis.engine.sched.Schedulers;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** What each routing, admission and priority policy does to a cluster, measured. */
class ClusterPolicyTest {

  private static final EngineLimits LIMITS = new EngineLimits(16, 512, 0, 0);

  private static InstancePool pool(String name, int n, long baseStepUs, long kvBlocks) {
    LinearTestModel m = new LinearTestModel(baseStepUs, 2, 0, 0, 0, 0);
    return InstancePool.of(name, n, i -> m, LIMITS, kvBlocks, 16);
  }

  private static SimulationResult run(Router router, List<RequestSpec> reqs, InstancePool... pools) {
    Simulation.Builder b = Simulation.builder().router(router).source(RequestSource.of(reqs))
        .recordRequests(true);
    for (InstancePool p : pools) {
      b.addPool(p);
    }
    return b.build().run();
  }

  /** Bursts of {@code burst} requests at the same time, every {@code gapUs}. */
  private static List<RequestSpec> bursty(int bursts, int burst, long gapUs, long seed) {
    SplittableRandom rnd = new SplittableRandom(seed);
    List<RequestSpec> out = new ArrayList<>();
    for (int b = 0; b < bursts; b++) {
      for (int k = 0; k < burst; k++) {
        int id = out.size();
        out.add(TestRequests.req(id, b * gapUs, 64 + rnd.nextInt(400), 20 + rnd.nextInt(100)));
      }
    }
    return out;
  }

  @Test
  void roundRobinSpreadsEvenly() {
    List<RequestSpec> reqs = bursty(10, 30, 2_000_000, 1);
    SimulationResult r = run(Routers.roundRobin(), reqs, pool("a", 4, 2_000, 5_000),
        pool("b", 2, 8_000, 5_000));
    assertThat(r.cluster().instances()).hasSize(6)
        .allSatisfy(i -> assertThat(i.metrics().injectedRequests()).isEqualTo(50));
  }

  @Test
  void leastLoadedBeatsRoundRobinOnTailLatencyForBurstsOnHeterogeneousInstances() {
    List<RequestSpec> reqs = bursty(30, 40, 500_000, 2);
    InstancePool fast = pool("fast", 2, 2_000, 5_000);
    InstancePool slow = pool("slow", 2, 12_000, 5_000);
    SimulationResult rr = run(Routers.roundRobin(), reqs, fast, slow);
    SimulationResult ll = run(Routers.leastLoaded(), reqs, fast, slow);
    assertThat(ll.overall().completedRequests()).isEqualTo(reqs.size());
    assertThat(rr.overall().completedRequests()).isEqualTo(reqs.size());
    assertThat(ll.overall().e2e().p99Us()).isLessThan(rr.overall().e2e().p99Us());
    // least-loaded sends more to the fast pool
    long toFast = ll.cluster().instances().stream().filter(i -> i.pool().equals("fast"))
        .mapToLong(i -> i.metrics().injectedRequests()).sum();
    assertThat(toFast).isGreaterThan(reqs.size() / 2);
  }

  @Test
  void prefixAffinityRaisesTheCacheHitRateOverRoundRobin() {
    SplittableRandom rnd = new SplittableRandom(3);
    int[][] prefixes = new int[8][];
    for (int g = 0; g < prefixes.length; g++) {
      prefixes[g] = TestRequests.tokens(1_000_000 * (g + 1), 512);
    }
    List<RequestSpec> reqs = new ArrayList<>();
    for (int i = 0; i < 400; i++) {
      int[] prompt = TestRequests.concat(prefixes[rnd.nextInt(prefixes.length)],
          TestRequests.tokens(10_000 * (i + 1), 32 + rnd.nextInt(32)));
      reqs.add(RequestSpec.simple(i, i * 20_000L, prompt, 16));
    }
    InstancePool small = pool("", 4, 2_000, 160); // about four prefixes fit in each cache
    SimulationResult rr = run(Routers.roundRobin(), reqs, small);
    SimulationResult pa = run(Routers.prefixAffinity(16, 10_000, 1), reqs, small);
    assertThat(pa.engine().tokenHitRate()).isGreaterThan(rr.engine().tokenHitRate() + 0.1);
    assertThat(pa.overall().kvHitRate()).isGreaterThan(rr.overall().kvHitRate());
  }

  @Test
  void alwaysBusiestTripsTheHeadOfLineBlockingCounter() {
    List<RequestSpec> reqs = bursty(10, 40, 1_000_000, 4);
    InstancePool p = pool("", 4, 4_000, 5_000);
    SimulationResult busiest = run(Routers.alwaysBusiest(), reqs, p);
    SimulationResult ll = run(Routers.leastLoaded(), reqs, p);
    assertThat(busiest.cluster().anomalies().holBlockingEvents()).isPositive();
    assertThat(ll.cluster().anomalies().holBlockingEvents()).isZero();
    assertThat(busiest.cluster().instances().get(0).metrics().injectedRequests())
        .isEqualTo(reqs.size());
  }

  /** Batch requests first, critical ones arriving just after, on one busy instance. */
  private static List<RequestSpec> mixedClasses() {
    List<RequestSpec> out = new ArrayList<>();
    for (int i = 0; i < 120; i++) {
      String cls = i % 3 == 0 ? "critical" : "batch";
      out.add(new RequestSpec(i, i * 1_000L, TestRequests.tokens(10_000 * (i + 1), 200), 40, cls,
          "", "", 0, -1, 0, 0, 0));
    }
    return out;
  }

  private static SimulationResult runPriority(io.blis.api.Scheduler s, io.blis.api.PriorityPolicy p) {
    return Simulation.builder().latencyModel(new LinearTestModel(3_000, 2, 0, 0, 0, 0))
        .limits(new EngineLimits(4, 512, 0, 0)).scheduler(s).priorityPolicy(p)
        .source(RequestSource.of(mixedClasses())).build().run();
  }

  @Test
  void invertedPrioritiesAndTheReversePrioritySchedulerTripThePriorityInversionCounter() {
    SimulationResult good = runPriority(Schedulers.priorityFcfs(), Priorities.sloBased(0));
    SimulationResult inverted = runPriority(Schedulers.priorityFcfs(), Priorities.inverted());
    SimulationResult reverse = runPriority(Schedulers.reversePriority(), Priorities.sloBased(0));
    assertThat(good.cluster().anomalies().priorityInversions()).isZero();
    assertThat(inverted.cluster().anomalies().priorityInversions()).isPositive();
    assertThat(reverse.cluster().anomalies().priorityInversions()).isPositive();
    // and it shows where it matters: critical requests wait longer
    double goodCritical = good.cluster().sloClasses().get("critical").ttft().meanUs();
    double invCritical = inverted.cluster().sloClasses().get("critical").ttft().meanUs();
    assertThat(invCritical).isGreaterThan(goodCritical);
  }

  @Test
  void rejectAllRejectsEveryRequestWithItsReasonAndLosesNone() {
    List<RequestSpec> reqs = bursty(3, 10, 1_000_000, 5);
    SimulationResult r = Simulation.builder().latencyModel(LinearTestModel.constant(100))
        .instances(2).admissionPolicy(Admissions.rejectAll()).source(RequestSource.of(reqs))
        .build().run();
    assertThat(r.overall().injectedRequests()).isEqualTo(30);
    assertThat(r.overall().rejectedRequests()).isEqualTo(30);
    assertThat(r.cluster().anomalies().rejectionsByReason()).containsEntry("reject_all", 30L);
    assertThat(r.cluster().instances()).allSatisfy(i ->
        assertThat(i.metrics().injectedRequests()).isZero());
  }

  @Test
  void tokenBucketShedsABurstAndAdmitsAgainAfterRefill() {
    // 10 requests of about 300 tokens at once: a 1000-token bucket admits 3; after 5 s at
    // 1000 tokens/s it is full again
    List<RequestSpec> reqs = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      reqs.add(TestRequests.req(i, 0, 300, 5));
    }
    for (int i = 10; i < 13; i++) {
      reqs.add(TestRequests.req(i, 5_000_000, 300, 5));
    }
    SimulationResult r = Simulation.builder().latencyModel(LinearTestModel.constant(100))
        .admissionPolicy(Admissions.tokenBucket(1000, 1000)).source(RequestSource.of(reqs))
        .recordRequests(true).build().run();
    assertThat(r.overall().rejectedByReason()).containsEntry("token_bucket_exhausted", 7L);
    assertThat(r.overall().completedRequests()).isEqualTo(6);
  }

  @Test
  void staleSnapshotsHideLoadFromTheRouterUntilTheyAreRefreshed() {
    // a burst of 8 at t=0 on 2 instances: weighted on queue depth alone sees only snapshots
    List<RequestSpec> reqs = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      reqs.add(TestRequests.req(i, 10 + i, 100, 50));
    }
    Router queueOnly = Routers.weighted(java.util.Map.of("queue-depth", 1.0));
    SimulationResult fresh = Simulation.builder().latencyModel(LinearTestModel.constant(1000))
        .limits(new EngineLimits(1, 512, 0, 0)).instances(2).router(queueOnly)
        .snapshotRefreshUs(0).source(RequestSource.of(reqs)).recordRequests(true).build().run();
    SimulationResult stale = Simulation.builder().latencyModel(LinearTestModel.constant(1000))
        .limits(new EngineLimits(1, 512, 0, 0)).instances(2)
        .router(Routers.weighted(java.util.Map.of("queue-depth", 1.0)))
        .snapshotRefreshUs(1_000_000).source(RequestSource.of(reqs)).recordRequests(true)
        .build().run();
    // with a fresh view the queues stay balanced; with a stale one every request looks equal
    // and goes to instance 0 (the lowest index wins ties)
    assertThat(fresh.cluster().instances()).allSatisfy(i ->
        assertThat(i.metrics().injectedRequests()).isEqualTo(4));
    assertThat(stale.cluster().instances().get(0).metrics().injectedRequests()).isEqualTo(8);
  }

  @Test
  void routingLatencyDelaysEveryRequestByExactlyThatMuch() {
    List<RequestSpec> reqs = List.of(TestRequests.req(0, 0, 10, 3), TestRequests.req(1, 5000, 10, 3));
    SimulationResult base = Simulation.builder().latencyModel(LinearTestModel.constant(100))
        .source(RequestSource.of(reqs)).recordRequests(true).build().run();
    SimulationResult delayed = Simulation.builder().latencyModel(LinearTestModel.constant(100))
        .admissionLatencyUs(300).routingLatencyUs(200).source(RequestSource.of(reqs))
        .recordRequests(true).build().run();
    for (int i = 0; i < 2; i++) {
      assertThat(delayed.requests().get(i).e2eUs()).isEqualTo(base.requests().get(i).e2eUs() + 500);
      assertThat(delayed.requests().get(i).ttftUs()).isEqualTo(base.requests().get(i).ttftUs() + 500);
    }
  }
}
