package io.blis.engine;

import static io.blis.engine.TestRequests.req;
import static org.assertj.core.api.Assertions.assertThat;

import io.blis.api.Autoscaler;
import io.blis.api.ScalingView;
import io.blis.engine.autoscale.FleetConfig;
import io.blis.engine.autoscale.Scalers;
import io.blis.engine.policy.Routers;
import io.blis.engine.result.AutoscaleReport;
import io.blis.engine.result.RequestRecord;
import io.blis.engine.result.SimulationResult;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** An autoscaled pool: the scalers' arithmetic, the replica lifecycle, draining, costs. */
class AutoscalingTest {

  private static final long S = 1_000_000;

  /** One small request (20 prompt, 10 output tokens) every {@code gapUs} until {@code untilUs}. */
  private static List<RequestSpec> steady(long gapUs, long untilUs) {
    return steady(gapUs, untilUs, 10);
  }

  /** One request of 20 prompt tokens every {@code gapUs} until {@code untilUs}, ids from 1. */
  static List<RequestSpec> steady(long gapUs, long untilUs, int output) {
    List<RequestSpec> out = new ArrayList<>();
    long id = 1;
    for (long t = 0; t < untilUs; t += gapUs) {
      out.add(req(id++, t, 20, output));
    }
    return out;
  }

  /** 1 node GPU per replica; provisioning 100 s, loading 20 s, warm-up 10 s; ticks every 15 s. */
  private static FleetConfig fleet(int initial, int max, long downWindowUs) {
    return new FleetConfig(1, max, initial, 15 * S, 1, 1, max, 0, 0, 100 * S, 20 * S, 10 * S, 3.0, 0, downWindowUs);
  }

  private static SimulationResult run(FleetConfig f, Autoscaler a, List<RequestSpec> reqs) {
    return Simulation.builder().instances(f.maxReplicas()).latencyModels(i -> LinearTestModel.constant(1000))
        .router(Routers.roundRobin()).limits(new EngineLimits(8, 2048, 0, 0)).snapshotRefreshUs(0)
        .recordRequests(true).source(RequestSource.of(reqs)).autoscaling(f, a, "test").build().run();
  }

  /** A scaler asking for {@code before} replicas until {@code atUs}, then {@code after}. */
  private static Autoscaler step(int before, long atUs, int after) {
    return v -> v.nowUs() < atUs ? before : after;
  }

  @Test
  void hpaFollowsKubernetesFormulaAndTolerance() {
    Autoscaler hpa = Scalers.hpa(Scalers.Metric.WAITING, 5, 0.1);
    // 4 ready replicas waiting 12 each: ceil(4 x 12 / 5) = 10
    assertThat(hpa.desiredReplicas(view(4, 4, 12, 0.3))).isEqualTo(10);
    // 5.4 against 5 is within the 10% tolerance: unchanged
    assertThat(hpa.desiredReplicas(view(4, 6, 5.4, 0.3))).isEqualTo(6);
    // 1 waiting: ceil(4 x 0.2) = 1
    assertThat(hpa.desiredReplicas(view(4, 4, 1, 0.3))).isEqualTo(1);
    Autoscaler kv = Scalers.hpa(Scalers.Metric.KV, 0.5, 0.1);
    assertThat(kv.desiredReplicas(view(3, 3, 0, 0.9))).isEqualTo(6); // ceil(3 x 1.8) = 6 (5.4 up)
    Autoscaler sat = Scalers.saturation(5, 0.8, 1.0, 0.5);
    assertThat(sat.desiredReplicas(view(2, 2, 6, 0.1))).isEqualTo(3);
    assertThat(sat.desiredReplicas(view(2, 2, 1, 0.2))).isEqualTo(1);
    assertThat(sat.desiredReplicas(view(2, 2, 3, 0.2))).isEqualTo(2);
    // 6 waiting over 2 ready and 1 starting: 1.2 x 2 / 3 = 0.8 once the third is up, below 1: hold
    assertThat(sat.desiredReplicas(view(2, 3, 6, 0.1))).isEqualTo(3);
    // 9 waiting: 1.8 x 2 / 3 = 1.2, still saturated: one more
    assertThat(sat.desiredReplicas(view(2, 3, 9, 0.1))).isEqualTo(4);
    // llm-d's variant autoscaler: replicas of 100,000 KV tokens, 0.8 of it usable (80,000 each)
    Autoscaler wva = Scalers.wva(0.8, 0.8, 0.4, 512);
    // 2 x (70,000 in use + 10 waiting x 512) = 150,240 demand; / 0.8 = 187,800 against 160,000: +1
    assertThat(wva.desiredReplicas(new FakeView(0, 2, 2, 10, 0.7, 100_000))).isEqualTo(3);
    // 2 x 10,000 = 20,000 demand; / 0.4 = 50,000; spare 110,000: one replica (80,000) can go
    assertThat(wva.desiredReplicas(new FakeView(0, 2, 2, 0, 0.1, 100_000))).isEqualTo(1);
    // 2 x 40,000 = 80,000; / 0.4 = 200,000 above the supply: keep both
    assertThat(wva.desiredReplicas(new FakeView(0, 2, 2, 0, 0.4, 100_000))).isEqualTo(2);
    // KV capacity unknown: keep the replicas
    assertThat(wva.desiredReplicas(new FakeView(0, 2, 2, 50, 0.9, 0))).isEqualTo(2);
    Autoscaler sched = Scalers.schedule("0:2,8:6,18:3");
    assertThat(sched.desiredReplicas(at(7 * 3600 * S + 59 * 60 * S))).isEqualTo(2);
    assertThat(sched.desiredReplicas(at(8 * 3600 * S))).isEqualTo(6);
    assertThat(sched.desiredReplicas(at(23 * 3600 * S))).isEqualTo(3);
    assertThat(sched.desiredReplicas(at(32 * 3600 * S))).isEqualTo(6); // the next day's 8:00
  }

  @Test
  void aReplicaAskedForAtATickTakesRequestsAfterProvisioningLoadingAndWarmUp() {
    // asked for at the first tick (15 s): ready at 15 + 100 + 20 + 10 = 145 s
    SimulationResult r = run(fleet(1, 3, 0), step(3, Long.MAX_VALUE, 3), steady(200_000, 300 * S));
    AutoscaleReport a = r.autoscale().orElseThrow();
    AutoscaleReport.Sample at135 = sampleAt(a, 135 * S);
    assertThat(at135.ready()).isEqualTo(1);
    assertThat(at135.starting()).isEqualTo(2);
    assertThat(at135.nodes()).isEqualTo(3);
    assertThat(sampleAt(a, 150 * S).ready()).isEqualTo(3);
    long firstElsewhere = Long.MAX_VALUE;
    for (RequestRecord rec : r.requests()) {
      if (rec.instance() != 0) {
        firstElsewhere = Math.min(firstElsewhere, rec.arrivalUs());
      }
    }
    assertThat(firstElsewhere).isGreaterThanOrEqualTo(145 * S).isLessThan(146 * S);
    assertThat(r.overall().completedRequests()).isEqualTo(1500);
    // the run ends with its last request, not at a scaling tick after it
    long lastEnd = r.requests().stream().mapToLong(rec -> rec.arrivalUs() + rec.e2eUs()).max().orElseThrow();
    assertThat(r.simulatedDurationUs()).isEqualTo(lastEnd);
    // 3 nodes of 1 GPU: one from 0, two from 15 s, to the end
    double end = r.simulatedDurationUs() / 3.6e9;
    assertThat(a.nodeHours()).isCloseTo(end + 2 * (end - 15 * S / 3.6e9), org.assertj.core.data.Offset.offset(1e-9));
    assertThat(a.cost()).isCloseTo(3.0 * a.nodeHours(), org.assertj.core.data.Offset.offset(1e-9));
  }

  @Test
  void aNewReplicasFirstStepsAreSlowedForTheSlowdownAndAWarmOneNever() {
    // as above, ready at 145 s; steps 3 times as long until 175 s on the two new replicas only
    FleetConfig f = new FleetConfig(1, 3, 1, 15 * S, 1, 1, 3, 0, 0, 100 * S, 20 * S, 10 * S, 3.0, 0, 0, 3.0, 30 * S);
    SimulationResult r = run(f, step(3, Long.MAX_VALUE, 3), steady(200_000, 300 * S));
    long warm = -1;
    for (RequestRecord rec : r.requests()) {
      if (rec.instance() == 0) {
        warm = warm < 0 ? rec.e2eUs() : warm;
        assertThat(rec.e2eUs()).as("the initial replica is warm").isEqualTo(warm);
      }
    }
    assertThat(warm).isEqualTo(10_000); // 10 steps of 1 ms
    int slowed = 0;
    int fast = 0;
    for (RequestRecord rec : r.requests()) {
      if (rec.instance() != 0 && rec.arrivalUs() < 175 * S - 30_000) {
        assertThat(rec.e2eUs()).as("request at %d us", rec.arrivalUs()).isEqualTo(3 * warm);
        slowed++;
      } else if (rec.instance() != 0 && rec.arrivalUs() >= 175 * S) {
        assertThat(rec.e2eUs()).as("request at %d us", rec.arrivalUs()).isEqualTo(warm);
        fast++;
      }
    }
    assertThat(slowed).isBetween(99, 101); // 150 arrivals in [145 s, 175 s), two of three (round robin) on the new ones
    assertThat(fast).isPositive();
    // the fleet's config refuses a factor below 1
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> new FleetConfig(1, 3, 1, 15 * S, 1, 1, 3, 0, 0, 0, 0, 0,
        0, 0, 0, 0.5, S)).hasMessage("autoscaling: the warm-up slowdown must be a factor in [1, 100], got 0.5");
  }

  @Test
  void scalingDownDrainsAReplicaWithoutLosingARequest() {
    // 3 ready from the start, 1 asked for from 60 s: two replicas drain, nothing is lost
    List<RequestSpec> reqs = steady(20_000, 200 * S);
    SimulationResult r = run(fleet(3, 3, 0), step(3, 60 * S, 1), reqs);
    assertThat(r.overall().completedRequests()).isEqualTo(reqs.size());
    Set<Integer> after = new HashSet<>();
    Set<Integer> before = new HashSet<>();
    for (RequestRecord rec : r.requests()) {
      (rec.arrivalUs() > 60 * S ? after : before).add(rec.instance());
    }
    assertThat(before).hasSize(3);
    assertThat(after).hasSize(1);
    AutoscaleReport a = r.autoscale().orElseThrow();
    assertThat(a.scaleDowns()).isEqualTo(1);
    // the two removed replicas' GPUs were held about 60 s (plus their last requests), the kept one to the end
    double kept = r.simulatedDurationUs() / 3.6e9;
    assertThat(a.replicaGpuHours()).isBetween(kept + 2 * 60 * S / 3.6e9 - 1e-9, kept + 2 * 61 * S / 3.6e9);
  }

  @Test
  void theScaleDownWindowActsOnTheHighestRecommendationOfTheWindow() {
    // asks for 1 from 60 s; with a 120 s window the pool keeps 3 until the 3 of 45 s leave it
    SimulationResult r = run(fleet(3, 3, 120 * S), step(3, 60 * S, 1), steady(50_000, 400 * S));
    AutoscaleReport a = r.autoscale().orElseThrow();
    assertThat(sampleAt(a, 165 * S).desired()).isEqualTo(3);
    assertThat(sampleAt(a, 180 * S).desired()).isEqualTo(1);
  }

  @Test
  void theSameRunTwiceIsTheSameBytes() {
    Autoscaler hpa = Scalers.hpa(Scalers.Metric.WAITING, 2, 0.1);
    // 1,000 in flight wanted (200 steps of 1 ms, one every 2 ms ... 8 a batch): the queues grow
    List<RequestSpec> burst = steady(20_000, 120 * S, 400);
    assertThat(run(fleet(1, 4, 60 * S), hpa, burst).toJson()).isEqualTo(run(fleet(1, 4, 60 * S), hpa, burst).toJson());
    SimulationResult r = run(fleet(1, 4, 60 * S), hpa, burst);
    assertThat(r.autoscale().orElseThrow().peakReplicas()).isGreaterThan(1);
    assertThat(r.overall().completedRequests()).isEqualTo(burst.size());
  }

  private static AutoscaleReport.Sample sampleAt(AutoscaleReport a, long atUs) {
    return a.timeline().stream().filter(s -> s.atUs() == atUs).findFirst().orElseThrow();
  }

  private static ScalingView at(long nowUs) {
    return new FakeView(nowUs, 1, 1, 0, 0);
  }

  private static ScalingView view(int ready, int current, double waiting, double kv) {
    return new FakeView(0, ready, current, waiting, kv);
  }

  private record FakeView(long nowUs, int readyReplicas, int currentReplicas, double meanWaiting,
      double meanKvUtilization, long kvCapacityTokens) implements ScalingView {
    FakeView(long nowUs, int readyReplicas, int currentReplicas, double meanWaiting, double meanKvUtilization) {
      this(nowUs, readyReplicas, currentReplicas, meanWaiting, meanKvUtilization, 0);
    }

    @Override
    public long intervalUs() {
      return 15 * S;
    }

    @Override
    public int startingReplicas() {
      return currentReplicas - readyReplicas;
    }

    @Override
    public int minReplicas() {
      return 1;
    }

    @Override
    public int maxReplicas() {
      return 100;
    }

    @Override
    public double meanRunning() {
      return 0;
    }

    @Override
    public double arrivalRatePerS() {
      return 0;
    }

    @Override
    public double ttftMeanMs() {
      return Double.NaN;
    }
  }
}
