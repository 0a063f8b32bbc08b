package io.blis.engine;

import static io.blis.engine.TestRequests.req;
import static org.assertj.core.api.Assertions.assertThat;

import io.blis.api.Autoscaler;
import io.blis.api.RequestView;
import io.blis.engine.autoscale.FleetConfig;
import io.blis.engine.models.ModelRouting;
import io.blis.engine.policy.Routers;
import io.blis.engine.result.AutoscaleReport;
import io.blis.engine.result.MetricsSummary;
import io.blis.engine.result.RequestRecord;
import io.blis.engine.result.SimulationResult;
import io.blis.workload.RequestOutcome;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * More of Go BLIS's cluster invariant tests (inference-sim/inference-sim at commit f90a1e3a),
 * re-expressed against this engine's autoscaled pools: the GPU bookkeeping of node pools and the
 * conservation of requests across a replica's drain. The scenarios and properties are Go BLIS's;
 * the code is this project's. Go's node pools and drain policies are objects of its cluster
 * simulator; here the same bookkeeping lives in {@link io.blis.engine.autoscale.Fleet} and is seen
 * through the run's {@link AutoscaleReport} and its listener events. The mapping is in
 * docs/vllm-parity.md, section "Go BLIS: its invariants and golden datasets".
 */
class GoBlisInvariantParity2Test {

  private static final long S = 1_000_000;

  /** A scaler asking for {@code wants[k]} replicas from {@code fromUs[k]} on (the first from 0). */
  private static Autoscaler phases(long[] fromUs, int[] wants) {
    return v -> {
      int w = wants[0];
      for (int k = 0; k < fromUs.length; k++) {
        if (v.nowUs() >= fromUs[k]) {
          w = wants[k];
        }
      }
      return w;
    };
  }

  /** One request of 20 prompt tokens every {@code gapUs} until {@code untilUs}, ids from 1. */
  private static List<RequestSpec> steady(long gapUs, long untilUs, int output) {
    return AutoscalingTest.steady(gapUs, untilUs, output);
  }

  /**
   * The GPU accounting of one sample: the GPUs held by replicas (starting, ready or draining) fit
   * on the nodes alive, at most {@code maxNodes} nodes are alive, and no node beyond {@code
   * emptyAllowed} is kept without a replica on it.
   */
  private static void checkGpus(String what, AutoscaleReport.Sample s, int gpusPerReplica, int gpusPerNode,
      int maxNodes, int emptyAllowed) {
    int held = s.ready() + s.starting() + s.draining();
    assertThat((long) held * gpusPerReplica).as("%s at %d us: replica GPUs <= node GPUs", what, s.atUs())
        .isLessThanOrEqualTo((long) s.nodes() * gpusPerNode);
    assertThat(s.nodes()).as("%s at %d us: nodes <= the most nodes", what, s.atUs()).isLessThanOrEqualTo(maxNodes);
    assertThat(s.nodes()).as("%s at %d us: no idle node kept beyond the minimum", what, s.atUs())
        .isLessThanOrEqualTo(held + emptyAllowed);
  }

  // ------------------------------------------------------------------ node-pool GPU conservation

  /**
   * Go BLIS's node-pool GPU conservation (sim/cluster/infra_node_test.go::
   * TestNodePool_VerifyConservation: on every node, free GPUs plus GPUs allocated to instances equal
   * the node's GPUs, and a pool whose books disagree is caught). Here node pools belong to the
   * autoscaler and expose no per-node ledger, so the same books are checked from the outside: a
   * pool of 2-GPU replicas on 4-GPU nodes (at most 3 nodes, 1 kept), whose scaler asks for 1, then
   * 8 (beyond the 6 replicas the nodes can hold), 3, 7 and 1 again while requests flow. At every
   * tick the replicas' GPUs (starting, ready and draining) fit on the nodes alive; the replicas
   * held are exactly min(desired, 6 - draining), so no GPU is handed out twice and none is lost
   * when a replica leaves; no node is kept empty beyond the one minimum; GPU hours are node hours
   * x 4 and at least the replicas' GPU hours; and at the end, one replica left, one node is left.
   * Two pools sharing one node pool (2 nodes of 4 GPUs, each pool asking for 4 replicas of 2 GPUs)
   * never hold more than the shared 8 GPUs between them. Every request completes in both runs.
   */
  @Test
  @Timeout(20)
  void nodePoolGpusAreNeitherOverAllocatedNorLeaked() {
    FleetConfig f = new FleetConfig(1, 8, 1, S, 2, 4, 3, 1, 1, 3 * S, S, 0, 2.0, 0, 0);
    Autoscaler scaler = phases(new long[] {0, 2 * S, 12 * S, 20 * S, 30 * S}, new int[] {1, 8, 3, 7, 1});
    List<RequestSpec> reqs = steady(10_000, 40 * S, 20);
    SimulationResult r = Simulation.builder().instances(8).latencyModels(i -> LinearTestModel.constant(10_000))
        .router(Routers.roundRobin()).limits(new EngineLimits(8, 2048, 0, 0)).snapshotRefreshUs(0)
        .recordRequests(true).source(RequestSource.of(reqs)).autoscaling(f, scaler, "phases").build().run();
    assertThat(r.overall().completedRequests()).isEqualTo(reqs.size());
    AutoscaleReport a = r.autoscale().orElseThrow();
    List<AutoscaleReport.Sample> line = a.timeline();
    boolean capped = false;
    boolean drained = false;
    for (int k = 0; k < line.size(); k++) {
      AutoscaleReport.Sample s = line.get(k);
      checkGpus("one pool", s, 2, 4, 3, 1);
      assertThat(s.nodes()).as("at %d us: at least the minimum node", s.atUs()).isGreaterThanOrEqualTo(1);
      if (k < line.size() - 1) { // a tick's sample, taken right after the replicas were adjusted
        assertThat(s.ready() + s.starting()).as("at %d us: replicas held = min(desired, room)", s.atUs())
            .isEqualTo(Math.min(s.desired(), 6 - s.draining()));
      }
      capped |= s.desired() > 6 && s.ready() + s.starting() == 6;
      drained |= s.draining() > 0;
    }
    assertThat(capped).as("setup: the scaler asked for more replicas than the nodes hold").isTrue();
    assertThat(drained).as("setup: replicas drained").isTrue();
    assertThat(a.peakNodes()).isEqualTo(3);
    assertThat(a.peakReplicas()).isEqualTo(6);
    assertThat(a.gpuHours()).isCloseTo(4 * a.nodeHours(), Offset.offset(1e-12));
    assertThat(a.cost()).isCloseTo(2.0 * a.nodeHours(), Offset.offset(1e-12));
    assertThat(a.replicaGpuHours()).isPositive().isLessThanOrEqualTo(a.gpuHours() + 1e-12);
    AutoscaleReport.Sample last = line.get(line.size() - 1);
    assertThat(last.desired()).isEqualTo(1);
    assertThat(last.ready()).isEqualTo(1);
    assertThat(last.starting() + last.draining()).isZero();
    assertThat(last.nodes()).as("every freed GPU returned: one replica, one node").isEqualTo(1);

    // two pools on one shared node pool: 2 nodes of 4 GPUs between them
    FleetConfig shared = new FleetConfig(1, 4, 1, S, 2, 4, 2, 0, 0, 2 * S, S, 0, 1.0, 0, 0);
    LinearTestModel m = LinearTestModel.constant(10_000);
    ModelRouting models = new ModelRouting(List.of(
        new ModelRouting.Served("alpha", Set.of("alpha"), Set.of("a"), Routers.roundRobin(), null),
        new ModelRouting.Served("beta", Set.of("beta"), Set.of("b"), Routers.roundRobin(), null)));
    List<RequestSpec> mixed = new ArrayList<>();
    for (int i = 0; i < 2000; i++) {
      mixed.add(req(i, i * 10_000L, 20, 10).withModel(i % 2 == 0 ? "alpha" : "beta"));
    }
    Autoscaler upThenDown = phases(new long[] {0, 2 * S, 12 * S}, new int[] {1, 4, 1});
    SimulationResult two = Simulation.builder()
        .addPool(InstancePool.of("a", 4, i -> m, new EngineLimits(8, 2048, 0, 0), 1000, 16))
        .addPool(InstancePool.of("b", 4, i -> m, new EngineLimits(8, 2048, 0, 0), 1000, 16))
        .models(models).router(Routers.roundRobin()).snapshotRefreshUs(0).recordRequests(true)
        .source(RequestSource.of(mixed))
        .autoscaling("a", "h100", shared, upThenDown, "a").autoscaling("b", "h100", shared, upThenDown, "b")
        .build().run();
    assertThat(two.overall().completedRequests()).isEqualTo(2000);
    AutoscaleReport total = two.autoscale().orElseThrow();
    boolean full = false;
    for (AutoscaleReport.Sample s : total.timeline()) {
      checkGpus("shared", s, 2, 4, 2, 0);
      full |= s.desired() == 8 && s.ready() + s.starting() + s.draining() == 4;
    }
    assertThat(full).as("setup: the two pools together asked for more than the shared nodes hold").isTrue();
    assertThat(total.peakNodes()).isEqualTo(2);
    assertThat(total.peakReplicas()).isEqualTo(4);
    assertThat(total.replicaGpuHours()).isLessThanOrEqualTo(total.gpuHours() + 1e-12);
    AutoscaleReport.Sample end = total.timeline().get(total.timeline().size() - 1);
    assertThat(end.ready()).isEqualTo(2);
    assertThat(end.nodes()).as("the two last replicas (4 GPUs) on one node").isLessThanOrEqualTo(2);
  }

  // ------------------------------------------------------------------ drain conservation

  /**
   * Go BLIS's drain conservation (sim/cluster/instance_lifecycle_test.go::
   * TestInstanceLifecycle_RedirectDrainPreservesConservation: requests queued on an instance when
   * it is drained are neither lost nor counted twice, all of them complete, and none is seen
   * arriving a second time). This engine drains as Go's WAIT policy, not REDIRECT: a replica
   * removed by scale-down takes no new requests and finishes the ones it holds, queue included.
   * Two replicas of one-sequence-at-a-time instances (10 ms steps, 20 output tokens) fall behind a
   * steady 20 requests a second;
   * at 3 s the scaler asks for one, while the replica it drains has requests waiting. After 3 s
   * nothing is queued on the drained replica; the requests waiting there at 3 s complete there,
   * once; every one of the 80 requests arrives once, ends once, completes and has one record;
   * nothing is left queued or running; and the drained replica's GPU is held until exactly its
   * last request ends (replica GPU hours = the kept replica's whole run + the drained one's span
   * to that end).
   */
  @Test
  @Timeout(20)
  void drainingAReplicaWithQueuedWorkLosesAndDuplicatesNothing() {
    FleetConfig f = new FleetConfig(1, 2, 2, S, 1, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0);
    List<RequestSpec> reqs = steady(50_000, 4 * S, 20);
    Map<Long, Integer> arrived = new HashMap<>();
    Map<Long, Integer> finished = new HashMap<>();
    Map<Long, long[]> firstQueued = new HashMap<>(); // instance, time
    Map<Long, long[]> firstScheduled = new HashMap<>();
    Map<Integer, Long> lastFinish = new HashMap<>();
    List<long[]> queuedAfterDrain = new ArrayList<>(); // instance, request
    long drainUs = 3 * S;
    EngineListener l = new EngineListener() {
      @Override
      public void onArrived(RequestView q, long timeUs) {
        arrived.merge(q.id(), 1, Integer::sum);
      }

      @Override
      public void onQueued(int instance, RequestView q, long timeUs) {
        firstQueued.putIfAbsent(q.id(), new long[] {instance, timeUs});
        if (timeUs > drainUs) {
          queuedAfterDrain.add(new long[] {instance, q.id()});
        }
      }

      @Override
      public void onScheduled(int instance, RequestView q, long stepId, boolean resume, long timeUs) {
        firstScheduled.putIfAbsent(q.id(), new long[] {instance, timeUs});
      }

      @Override
      public void onFinished(int instance, RequestView q, RequestOutcome o, long engineEndUs, long clientEndUs) {
        finished.merge(q.id(), 1, Integer::sum);
        lastFinish.merge(instance, engineEndUs, Math::max);
      }
    };
    SimulationResult r = Simulation.builder().instances(2).latencyModels(i -> LinearTestModel.constant(10_000))
        .router(Routers.roundRobin()).limits(new EngineLimits(1, 2048, 0, 0)).snapshotRefreshUs(0)
        .recordRequests(true).source(RequestSource.of(reqs)).listener(l)
        .autoscaling(f, phases(new long[] {0, drainUs}, new int[] {2, 1}), "drain").build().run();

    // which replica was drained: the one nothing is queued on after 3 s
    Set<Integer> after = new HashSet<>();
    queuedAfterDrain.forEach(e -> after.add((int) e[0]));
    assertThat(after).as("after the drain, one replica takes the requests").hasSize(1);
    int kept = after.iterator().next();
    int drained = 1 - kept;
    Set<Long> waitingAtDrain = new HashSet<>();
    for (Map.Entry<Long, long[]> e : firstQueued.entrySet()) {
      long[] s = firstScheduled.get(e.getKey());
      if (e.getValue()[0] == drained && e.getValue()[1] <= drainUs && s != null && s[1] > drainUs) {
        waitingAtDrain.add(e.getKey());
      }
    }
    assertThat(waitingAtDrain).as("precondition: the drained replica had requests waiting at the drain").isNotEmpty();

    MetricsSummary o = r.overall();
    assertThat(o.injectedRequests()).isEqualTo(reqs.size());
    assertThat(o.completedRequests()).as("every request completes").isEqualTo(reqs.size());
    assertThat(o.stillQueued() + o.stillRunning() + o.rejectedRequests() + o.timedOutRequests()).isZero();
    assertThat(arrived).as("each request arrives once").hasSize(reqs.size()).allSatisfy((id, n) -> assertThat(n).isEqualTo(1));
    assertThat(finished).as("each request ends once").hasSize(reqs.size()).allSatisfy((id, n) -> assertThat(n).isEqualTo(1));
    assertThat(r.requests()).hasSize(reqs.size());
    assertThat(r.requests().stream().map(RequestRecord::id).distinct().count()).isEqualTo(reqs.size());
    Map<Long, RequestRecord> byId = new HashMap<>();
    r.requests().forEach(rec -> byId.put(rec.id(), rec));
    for (long id : waitingAtDrain) {
      RequestRecord rec = byId.get(id);
      assertThat(rec.outcome()).isEqualTo(RequestOutcome.COMPLETED);
      assertThat(rec.instance()).as("request %d kept by its draining replica (WAIT, not REDIRECT)", id)
          .isEqualTo(drained);
    }

    AutoscaleReport a = r.autoscale().orElseThrow();
    assertThat(a.scaleDowns()).isEqualTo(1);
    long drainedEnd = lastFinish.get(drained);
    assertThat(drainedEnd).as("the drained replica works past the drain").isGreaterThan(drainUs);
    assertThat(a.replicaGpuHours()).as("the drained replica's GPU is freed when its last request ends")
        .isCloseTo((r.simulatedDurationUs() + drainedEnd) / 3.6e9, Offset.offset(1e-12));
    AutoscaleReport.Sample last = a.timeline().get(a.timeline().size() - 1);
    assertThat(last.ready()).isEqualTo(1);
    assertThat(last.draining()).isZero();
    assertThat(a.timeline().stream().anyMatch(s -> s.atUs() > drainUs && s.draining() == 1))
        .as("the replica was seen draining").isTrue();
  }
}
