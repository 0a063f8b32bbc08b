package io.blis.engine;

import io.blis.engine.result.ClusterReport;
import io.blis.engine.result.InstanceResult;
import io.blis.engine.result.MetricsSummary;
import io.blis.engine.result.RequestRecord;
import io.blis.engine.result.RoutingDecision;
import io.blis.engine.result.SimulationResult;
import static org.assertj.core.api.Assertions.assertThat;

import io.blis.api.AdmissionPolicy;
import io.blis.api.PriorityPolicy;
import io.blis.api.Router;
import io.blis.engine.policy.Admissions;
import io.blis.engine.policy.Priorities;
import io.blis.engine.policy.Routers;
import io.blis.engine.sched.Schedulers;
import io.blis.kvcache.KvBlockPool;
import io.blis.workload.RequestOutcome;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Invariants of heterogeneous clusters on seeded random workloads: request conservation overall,
 * per instance, per SLO class and per tenant; KV conservation on every instance; causality; and
 * byte-identical results for the same seed.
 */
class ClusterInvariantTest {

  /** A random cluster: 1-3 pools of 1-3 instances, policies, latencies and staleness. */
  record Scenario(long seed, List<RequestSpec> requests, List<InstancePool> pools, String router,
      String admission, String priority, String scheduler, long admissionLatencyUs,
      long routingLatencyUs, long refreshUs) {

    static Scenario of(long seed) {
      SplittableRandom rnd = new SplittableRandom(seed);
      int blockSize = 16;
      List<InstancePool> pools = new ArrayList<>();
      int nPools = 1 + rnd.nextInt(3);
      for (int p = 0; p < nPools; p++) {
        LinearTestModel m = new LinearTestModel(50 + rnd.nextInt(800), rnd.nextInt(5),
            rnd.nextInt(100), rnd.nextInt(50), rnd.nextInt(20), rnd.nextInt(200));
        EngineLimits limits = new EngineLimits(1 + rnd.nextInt(10), 32 + rnd.nextInt(400),
            rnd.nextInt(3) == 0 ? 16 + rnd.nextInt(64) : 0, rnd.nextInt(4) == 0 ? 400 : 0);
        long kv = rnd.nextBoolean() ? 16 + rnd.nextInt(40) : 3000;
        pools.add(new InstancePool("p" + p, 1 + rnd.nextInt(3), i -> m, limits, kv, blockSize,
            rnd.nextBoolean() ? 0 : 8 + rnd.nextInt(100), rnd.nextInt(300) / 7.0));
      }
      int[][] prefixes = new int[3][];
      for (int g = 0; g < prefixes.length; g++) {
        prefixes[g] = TestRequests.tokens(1_000_000 * (g + 1), 32 + rnd.nextInt(100));
      }
      String[] slo = {"critical", "standard", "batch", "sheddable", "background"};
      String[] tenants = {"", "alpha", "beta", "gamma"};
      List<RequestSpec> reqs = new ArrayList<>();
      long t = 0;
      int n = 30 + rnd.nextInt(90);
      for (int i = 0; i < n; i++) {
        t += rnd.nextInt(3) == 0 ? 0 : rnd.nextInt(2000);
        int[] suffix = TestRequests.tokens(10_000 * i, 1 + rnd.nextInt(150));
        int[] prompt = rnd.nextBoolean()
            ? TestRequests.concat(prefixes[rnd.nextInt(prefixes.length)], suffix) : suffix;
        long timeout = rnd.nextInt(5) == 0 ? 500 + rnd.nextInt(40_000) : 0;
        reqs.add(new RequestSpec(i, t, prompt, 1 + rnd.nextInt(60), slo[rnd.nextInt(slo.length)],
            tenants[rnd.nextInt(tenants.length)], "", 0, -1, 0, timeout, 0));
      }
      String router = new String[] {"round-robin", "least-loaded", "weighted", "prefix-affinity",
          "always-busiest"}[rnd.nextInt(5)];
      String admission = new String[] {"always-admit", "token-bucket", "always-admit"}[rnd.nextInt(3)];
      String priority = new String[] {"slo-based", "constant", "inverted", "aging"}[rnd.nextInt(4)];
      String scheduler = new String[] {"fcfs", "priority-fcfs", "sjf", "reverse-priority"}[rnd.nextInt(4)];
      return new Scenario(seed, reqs, pools, router, admission, priority, scheduler,
          rnd.nextInt(3) == 0 ? rnd.nextInt(3000) : 0, rnd.nextInt(3) == 0 ? rnd.nextInt(3000) : 0,
          new long[] {0, 1000, 50_000}[rnd.nextInt(3)]);
    }

    Router newRouter() {
      return switch (router) {
        case "least-loaded" -> Routers.leastLoaded();
        case "weighted" -> Routers.weighted(Map.of("prefix-cache", 2.0, "queue-depth", 1.0,
            "kv-utilization", 1.0, "in-flight", 1.0));
        case "prefix-affinity" -> Routers.prefixAffinity(16, 64, 1);
        case "always-busiest" -> Routers.alwaysBusiest();
        default -> Routers.roundRobin();
      };
    }

    AdmissionPolicy newAdmission() {
      return admission.equals("token-bucket") ? Admissions.tokenBucket(800, 20_000)
          : Admissions.alwaysAdmit();
    }

    PriorityPolicy newPriority() {
      return switch (priority) {
        case "constant" -> Priorities.constant(1);
        case "inverted" -> Priorities.inverted();
        case "aging" -> Priorities.sloBased(2);
        default -> Priorities.sloBased(0);
      };
    }

    Simulation.Builder builder() {
      Simulation.Builder b = Simulation.builder().source(RequestSource.of(requests))
          .recordRequests(true).router(newRouter()).admissionPolicy(newAdmission())
          .priorityPolicy(newPriority()).scheduler(switch (scheduler) {
            case "priority-fcfs" -> Schedulers.priorityFcfs();
            case "sjf" -> Schedulers.shortestJobFirst();
            case "reverse-priority" -> Schedulers.reversePriority();
            default -> Schedulers.fcfs();
          })
          .admissionLatencyUs(admissionLatencyUs).routingLatencyUs(routingLatencyUs)
          .snapshotRefreshUs(refreshUs).sloTarget("critical", new SloTarget(5, 50))
          .traceDecisions(2);
      pools.forEach(b::addPool);
      return b;
    }

    int instances() {
      return pools.stream().mapToInt(InstancePool::instances).sum();
    }
  }

  static Stream<Arguments> seeds() {
    return LongStream.rangeClosed(1, 80).mapToObj(Arguments::of);
  }

  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  @org.junit.jupiter.api.Timeout(20)
  void requestsAndKvAreConservedAcrossInstances(long seed) {
    Scenario sc = Scenario.of(seed);
    Set<KvBlockPool> kvs = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
    List<String> violations = new ArrayList<>();
    SimulationResult res = sc.builder().stepObserver((start, dt, batch, running, waiting, pool) -> {
      kvs.add(pool);
      if (pool.usedBlocks() + pool.freeBlocks() != pool.totalBlocks()) {
        violations.add("KV blocks not conserved at " + start);
      }
    }).build().run();
    assertThat(violations).as("seed %d", seed).isEmpty();
    for (KvBlockPool kv : kvs) {
      assertThat(kv.usedBlocks()).as("all KV released, seed %d", seed).isZero();
    }
    MetricsSummary o = res.overall();
    assertThat(o.injectedRequests()).isEqualTo(sc.requests().size());
    assertThat(o.completedRequests() + o.timedOutRequests() + o.rejectedRequests()
        + o.stillQueued() + o.stillRunning()).as("seed %d", seed).isEqualTo(o.injectedRequests());
    assertThat(o.stillQueued() + o.stillRunning()).isZero();

    ClusterReport c = res.cluster();
    assertThat(c.instances()).hasSize(sc.instances());
    long routed = res.requests().stream().filter(r -> r.instance() >= 0).count();
    long admissionRejected = c.decisionSummary().rejected();
    assertThat(routed + admissionRejected + res.requests().stream()
        .filter(r -> r.instance() < 0 && r.outcome() == RequestOutcome.TIMED_OUT).count())
        .as("every request is routed, rejected at admission or timed out before routing")
        .isEqualTo(o.injectedRequests());
    assertThat(c.instances().stream().mapToLong(i -> i.metrics().injectedRequests()).sum())
        .isEqualTo(routed);
    assertThat(c.instances().stream().mapToLong(i -> i.metrics().completedRequests()).sum())
        .isEqualTo(o.completedRequests());
    for (InstanceResult i : c.instances()) {
      long here = res.requests().stream().filter(r -> r.instance() == i.index()).count();
      assertThat(i.metrics().injectedRequests()).isEqualTo(here);
      MetricsSummary m = i.metrics();
      assertThat(m.completedRequests() + m.timedOutRequests() + m.rejectedRequests())
          .isEqualTo(m.injectedRequests());
    }
    assertThat(c.sloClasses().values().stream().mapToLong(MetricsSummary::injectedRequests).sum())
        .isEqualTo(o.injectedRequests());
    assertThat(c.sloClasses().values().stream().mapToLong(MetricsSummary::completedRequests).sum())
        .isEqualTo(o.completedRequests());
    long withTenant = sc.requests().stream().filter(r -> !r.tenant().isEmpty()).count();
    assertThat(c.tenants().values().stream().mapToLong(MetricsSummary::injectedRequests).sum())
        .isEqualTo(withTenant);
    assertThat(o.goodRequests()).isBetween(0L, o.completedRequests());
    assertThat(c.decisionSummary().routingDecisions()).isEqualTo(routed);
    assertThat(c.decisions().stream().filter(d -> d.kind().equals("routing")).count())
        .isEqualTo(routed);
    for (RoutingDecision d : c.decisions()) {
      if (d.kind().equals("routing")) {
        assertThat(d.candidates()).hasSize(sc.instances());
        assertThat(d.regretUs()).isGreaterThanOrEqualTo(0);
      }
    }
    for (RequestRecord r : res.requests()) {
      RequestSpec spec = sc.requests().get((int) r.id());
      if (r.outcome() == RequestOutcome.COMPLETED) {
        assertThat(r.ttftUs()).isBetween(r.schedulingDelayUs(), r.e2eUs());
        assertThat(r.schedulingDelayUs())
            .isGreaterThanOrEqualTo(sc.admissionLatencyUs() + sc.routingLatencyUs());
      } else if (r.outcome() == RequestOutcome.TIMED_OUT) {
        assertThat(r.e2eUs()).isEqualTo(spec.timeoutUs());
      }
    }
  }

  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  void sameSeedGivesByteIdenticalJson(long seed) {
    String a = Scenario.of(seed).builder().build().run().toJson();
    String b = Scenario.of(seed).builder().build().run().toJson();
    assertThat(a).isEqualTo(b);
  }

  /** The random clusters reach admission rejections, early timeouts, inversions and regret. */
  @org.junit.jupiter.api.Test
  void randomClustersCoverTheHardPaths() {
    long rejected = 0;
    long earlyTimeouts = 0;
    long inversions = 0;
    long regret = 0;
    long hol = 0;
    for (long seed = 1; seed <= 80; seed++) {
      SimulationResult res = Scenario.of(seed).builder().build().run();
      rejected += res.cluster().decisionSummary().rejected();
      earlyTimeouts += res.requests().stream()
          .filter(r -> r.instance() < 0 && r.outcome() == RequestOutcome.TIMED_OUT).count();
      inversions += res.cluster().anomalies().priorityInversions();
      regret += res.cluster().decisionSummary().regretDecisions();
      hol += res.cluster().anomalies().holBlockingEvents();
    }
    assertThat(rejected).isPositive();
    assertThat(earlyTimeouts).isPositive();
    assertThat(inversions).isPositive();
    assertThat(regret).isPositive();
    assertThat(hol).isPositive();
  }
}
