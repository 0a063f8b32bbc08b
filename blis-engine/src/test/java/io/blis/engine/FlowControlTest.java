package io.blis.engine;

import static io.blis.engine.TestRequests.tokens;
import static org.assertj.core.api.Assertions.assertThat;

import io.blis.engine.flow.FlowControl;
import io.blis.engine.policy.Routers;
import io.blis.engine.result.GatewayReport;
import io.blis.engine.result.MetricsSummary;
import io.blis.engine.result.RequestRecord;
import io.blis.engine.result.SimulationResult;
import io.blis.workload.RequestOutcome;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The gateway's flow control inside a simulation. */
class FlowControlTest {

  /**
   * {@code n} requests, one every {@code gapUs}, alternating a critical one (50 prompt, 20 output
   * tokens) and two sheddable ones (400 prompt, 60 output), tenants a and b.
   */
  private static List<RequestSpec> mixed(int n, long gapUs, long timeoutUs) {
    List<RequestSpec> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      boolean critical = i % 3 == 0;
      out.add(new RequestSpec(i + 1, i * gapUs, tokens((i + 1) * 10_000, critical ? 50 : 400),
          critical ? 20 : 60, critical ? "critical" : "sheddable", i % 2 == 0 ? "a" : "b", "", 0, 0, 0,
          timeoutUs, 0));
    }
    return out;
  }

  /** Two instances, 8 requests a batch, 2,000 us a step plus 2 us a token: overloaded by mixed(_, 2000, _). */
  private static Simulation.Builder overloaded(List<RequestSpec> requests) {
    return Simulation.builder().instances(2).latencyModels(i -> new LinearTestModel(2000, 2, 0, 0, 0, 0))
        .router(Routers.leastLoaded()).limits(new EngineLimits(8, 2048, 0, 0)).snapshotRefreshUs(0)
        .recordRequests(true).source(RequestSource.of(requests));
  }

  private static FlowControl flow(FlowControl.Detector detector, FlowControl.DispatchOrder order,
      int maxDepth, boolean shedding, long ttlUs) {
    FlowControl d = FlowControl.DEFAULTS;
    return new FlowControl(detector, 2, d.kvCacheUtilThreshold(), 4, order, d.fairness(), 0, maxDepth,
        shedding, d.dispatchTickUs(), ttlUs, Map.of());
  }

  @Test
  void aGatewayThatIsNeverSaturatedChangesNothingButAddsItsReport() {
    // client deadlines of 10 s: their checks in the gateway's queue must not move the run's end
    List<RequestSpec> reqs = mixed(300, 2000, 10_000_000);
    SimulationResult plain = overloaded(reqs).build().run();
    SimulationResult gated = overloaded(reqs)
        .flowControl(flow(FlowControl.Detector.NEVER, FlowControl.DispatchOrder.FIFO, 0, false, 0)).build().run();
    assertThat(plain.gateway()).isEmpty();
    GatewayReport g = gated.gateway().orElseThrow();
    assertThat(g.all().enqueued()).isEqualTo(300);
    assertThat(g.all().dispatched()).isEqualTo(300);
    assertThat(g.waitUs().p99Us()).isZero();
    // the same run, request for request, once the gateway's section is left out
    assertThat(gated.toJson().replaceAll("(?s),\\s*\"gateway\" : \\{.*?\\n  }", "")).isEqualTo(plain.toJson());
  }

  @Test
  void everyRequestEndsOnceAndTheGatewayCountsAddUp() {
    // overload with a bounded queue, shedding, a TTL and client deadlines: every way out is taken
    List<RequestSpec> reqs = mixed(600, 1000, 400_000);
    SimulationResult r = overloaded(reqs).flowControl(
        flow(FlowControl.Detector.UTILIZATION, FlowControl.DispatchOrder.PRIORITY, 40, true, 150_000)).build().run();
    GatewayReport g = r.gateway().orElseThrow();
    assertThat(g.all().conserved()).isTrue();
    g.bySloClass().values().forEach(c -> assertThat(c.conserved()).isTrue());
    assertThat(g.all().enqueued()).isEqualTo(600);
    assertThat(g.all().rejected()).isPositive();
    assertThat(g.all().shed()).isPositive();
    assertThat(g.all().expired() + g.all().timedOut()).isPositive();
    assertThat(g.maxDepth()).isLessThanOrEqualTo(40);
    // the gateway's ends are the run's: each request once, with its reason
    MetricsSummary o = r.overall();
    assertThat(o.completedRequests() + o.rejectedRequests() + o.timedOutRequests() + o.stillQueued() + o.stillRunning())
        .isEqualTo(600);
    assertThat(o.rejectedByReason()).containsEntry("gateway queue full", g.all().rejected())
        .containsEntry("shed from the gateway queue", g.all().shed())
        .containsEntry("gateway request TTL expired", g.all().expired());
    Set<Long> ids = new HashSet<>();
    for (RequestRecord rec : r.requests()) {
      assertThat(ids.add(rec.id())).isTrue();
    }
    assertThat(ids).hasSize(600);
    // only sheddable requests are shed or rejected: critical ones are never displaced, and their
    // band was never full
    GatewayReport.Counts critical = g.bySloClass().get("critical");
    assertThat(critical.shed()).isZero();
    assertThat(critical.rejected()).isZero();
  }

  @Test
  void underOverloadThePriorityQueueKeepsCriticalRequestsFastWhileSheddableOnesWait() {
    List<RequestSpec> reqs = mixed(900, 1500, 0);
    SimulationResult plain = overloaded(reqs).build().run();
    SimulationResult gated = overloaded(reqs).flowControl(
        flow(FlowControl.Detector.UTILIZATION, FlowControl.DispatchOrder.PRIORITY, 0, false, 0)).build().run();
    double plainCritical = plain.cluster().sloClasses().get("critical").ttft().p99Us();
    double gatedCritical = gated.cluster().sloClasses().get("critical").ttft().p99Us();
    double gatedSheddable = gated.cluster().sloClasses().get("sheddable").ttft().p99Us();
    // without the gateway a critical request queues behind the sheddable backlog at the instance
    assertThat(plainCritical).isGreaterThan(1_000_000);
    // with it, it waits only for the few requests the instances hold (the queue threshold, 2 each)
    assertThat(gatedCritical).isLessThan(plainCritical / 10);
    assertThat(gatedSheddable).isGreaterThan(gatedCritical * 10);
    assertThat(gated.overall().completedRequests()).isEqualTo(900);
  }

  @Test
  void theConcurrencyDetectorHoldsRequestsInFlightToItsLimit() {
    List<RequestSpec> reqs = mixed(200, 500, 0);
    SimulationResult plain = overloaded(reqs).build().run();
    SimulationResult r = overloaded(reqs).flowControl(
        flow(FlowControl.Detector.CONCURRENCY, FlowControl.DispatchOrder.FIFO, 0, false, 0)).build().run();
    // 2 instances x 4 in flight: never more than 8 requests between their first step and their end
    // (a request is in flight from its routing on); without the gateway the two batches of 8 fill
    assertThat(mostAtOnce(plain)).isGreaterThan(8);
    assertThat(mostAtOnce(r)).isLessThanOrEqualTo(8);
    assertThat(r.gateway().orElseThrow().waitUs().p99Us()).isPositive();
    assertThat(r.overall().completedRequests()).isEqualTo(200);
  }

  /** The most requests at once between their first scheduling and their end. */
  private static int mostAtOnce(SimulationResult r) {
    List<long[]> edges = new ArrayList<>();
    for (RequestRecord rec : r.requests()) {
      edges.add(new long[] {rec.arrivalUs() + rec.schedulingDelayUs(), 1});
      edges.add(new long[] {rec.arrivalUs() + rec.e2eUs(), -1});
    }
    // ends before starts at the same microsecond
    edges.sort((a, b) -> a[0] != b[0] ? Long.compare(a[0], b[0]) : Long.compare(a[1], b[1]));
    int now = 0;
    int most = 0;
    for (long[] e : edges) {
      now += (int) e[1];
      most = Math.max(most, now);
    }
    return most;
  }

  @Test
  void aRequestWaitingPastItsTimeToLiveIsRejectedAtItsExpiry() {
    // a long first request fills the single slot: the next ones wait in the gateway
    List<RequestSpec> reqs = List.of(
        new RequestSpec(1, 0, tokens(10_000, 100), 500, "standard", "", "", 0, 0, 0, 0, 0),
        new RequestSpec(2, 10, tokens(20_000, 10), 5, "standard", "", "", 0, 0, 0, 0, 0),
        new RequestSpec(3, 20, tokens(30_000, 10), 5, "standard", "", "", 0, 0, 0, 30_000, 0));
    FlowControl d = FlowControl.DEFAULTS;
    FlowControl oneAtATime = new FlowControl(FlowControl.Detector.CONCURRENCY, 5, 0.8, 1,
        FlowControl.DispatchOrder.FIFO, d.fairness(), 0, 0, false, 1000, 50_000, Map.of());
    SimulationResult r = Simulation.builder().latencyModel(LinearTestModel.constant(1000))
        .limits(new EngineLimits(1, 2048, 0, 0)).snapshotRefreshUs(0).recordRequests(true)
        .source(RequestSource.of(reqs)).flowControl(oneAtATime).build().run();
    RequestRecord second = r.requests().get(1);
    RequestRecord third = r.requests().get(2);
    // request 2: its TTL (50 ms) ends before the first request's 500 steps of 1 ms
    assertThat(second.outcome()).isEqualTo(RequestOutcome.REJECTED);
    assertThat(second.rejectReason()).isEqualTo("gateway request TTL expired");
    // request 3: its client deadline (30 ms) comes first
    assertThat(third.outcome()).isEqualTo(RequestOutcome.TIMED_OUT);
    assertThat(third.e2eUs()).isEqualTo(30_000);
    GatewayReport.Counts c = r.gateway().orElseThrow().all();
    assertThat(c.expired()).isEqualTo(1);
    assertThat(c.timedOut()).isEqualTo(1);
    assertThat(c.dispatched()).isEqualTo(1);
  }
}
