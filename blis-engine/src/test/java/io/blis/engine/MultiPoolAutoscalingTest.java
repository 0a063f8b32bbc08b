package io.blis.engine;

import static io.blis.engine.TestRequests.req;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.blis.api.Autoscaler;
import io.blis.api.ScalingView;
import io.blis.engine.autoscale.FleetConfig;
import io.blis.engine.models.ModelRouting;
import io.blis.engine.policy.Routers;
import io.blis.engine.result.AutoscaleReport;
import io.blis.engine.result.RequestRecord;
import io.blis.engine.result.SimulationResult;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.Test;

/**
 * Several pools scaled at once, each on its own: pool "a" (model alpha, 1 ms steps, up to 3
 * replicas) and pool "b" (model beta, 3 ms steps, up to 2). Each scaler sees only its pool.
 */
class MultiPoolAutoscalingTest {

  private static final long S = 1_000_000;

  /** 1 GPU per replica on 1-GPU nodes; provisioning 100 s, loading 20 s, warm-up 10 s; ticks every 15 s. */
  private static FleetConfig fleet(int initial, int max, double costPerHour) {
    return new FleetConfig(1, max, initial, 15 * S, 1, 1, max, 0, 0, 100 * S, 20 * S, 10 * S, costPerHour, 0, 0);
  }

  private static InstancePool pool(String name, int instances, long stepUs) {
    LinearTestModel m = LinearTestModel.constant(stepUs);
    return InstancePool.of(name, instances, i -> m, new EngineLimits(8, 2048, 0, 0), 1000, 16);
  }

  /** Three alpha requests, then one beta, every 100 ms until 300 s. */
  private static List<RequestSpec> mixed() {
    List<RequestSpec> out = new ArrayList<>();
    for (int i = 0; i < 3000; i++) {
      out.add(req(i, i * 100_000L, 20, 10).withModel(i % 4 == 3 ? "beta" : "alpha"));
    }
    return out;
  }

  /** Records what its pool looked like at every tick, asking for {@code replicas} throughout. */
  private static final class Recording implements Autoscaler {
    final int replicas;
    final List<double[]> seen = new ArrayList<>();

    Recording(int replicas) {
      this.replicas = replicas;
    }

    @Override
    public int desiredReplicas(ScalingView v) {
      seen.add(new double[] {v.nowUs(), v.readyReplicas(), v.startingReplicas(), v.arrivalRatePerS()});
      return replicas;
    }
  }

  private static SimulationResult run(Autoscaler forA, Autoscaler forB) {
    ModelRouting models = new ModelRouting(List.of(
        new ModelRouting.Served("alpha", Set.of("alpha"), Set.of("a"), Routers.roundRobin(), null),
        new ModelRouting.Served("beta", Set.of("beta"), Set.of("b"), Routers.roundRobin(), null)));
    return Simulation.builder().addPool(pool("a", 3, 1_000)).addPool(pool("b", 2, 3_000)).models(models)
        .router(Routers.roundRobin()).snapshotRefreshUs(0).recordRequests(true).source(RequestSource.of(mixed()))
        .autoscaling("a", null, fleet(1, 3, 3.0), forA, "grow").autoscaling("b", null, fleet(1, 2, 5.0), forB, "hold")
        .build().run();
  }

  @Test
  void eachPoolScalesOnItsOwnAndTakesItsModelsRequestsOnlyWhenReady() {
    Recording a = new Recording(3);
    Recording b = new Recording(1);
    SimulationResult r = run(a, b);
    assertThat(r.overall().completedRequests()).isEqualTo(3000);
    long firstOnNewA = Long.MAX_VALUE;
    for (RequestRecord rec : r.requests()) {
      if (rec.id() % 4 == 3) {
        assertThat(rec.instance()).as("beta request %d", rec.id()).isEqualTo(3); // b's one replica; 4 is off
      } else {
        assertThat(rec.instance()).as("alpha request %d", rec.id()).isIn(0, 1, 2);
        if (rec.instance() != 0) {
          firstOnNewA = Math.min(firstOnNewA, rec.arrivalUs());
        }
      }
    }
    // a's two new replicas, asked for at the first tick (15 s), take requests at 15 + 100 + 20 + 10 = 145 s
    assertThat(firstOnNewA).isGreaterThanOrEqualTo(145 * S).isLessThan(146 * S);
    // each scaler saw its own pool: its replicas and the arrivals of its model (7.5 and 2.5 a second)
    double[] aAt30 = a.seen.get(1);
    assertThat(aAt30[0]).isEqualTo(30 * S);
    assertThat(aAt30[1]).isEqualTo(1);
    assertThat(aAt30[2]).isEqualTo(2);
    assertThat(aAt30[3]).isCloseTo(7.5, Offset.offset(0.1));
    double[] bAt30 = b.seen.get(1);
    assertThat(bAt30[1]).isEqualTo(1);
    assertThat(bAt30[2]).isEqualTo(0);
    assertThat(bAt30[3]).isCloseTo(2.5, Offset.offset(0.1));
  }

  @Test
  void theReportSumsThePoolsAndCountsEveryRequestOnce() {
    SimulationResult r = run(new Recording(3), new Recording(1));
    AutoscaleReport total = r.autoscale().orElseThrow();
    assertThat(total.pools().keySet()).containsExactly("a", "b");
    AutoscaleReport a = total.pools().get("a");
    AutoscaleReport b = total.pools().get("b");
    assertThat(a.scaler()).isEqualTo("grow");
    assertThat(total.scaler()).isEqualTo("grow+hold");
    assertThat(a.peakReplicas()).isEqualTo(3);
    assertThat(b.peakReplicas()).isEqualTo(1);
    assertThat(total.peakReplicas()).isEqualTo(4);
    assertThat(total.peakNodes()).isEqualTo(4);
    // a: one node from 0, two from 15 s; b: one node from 0; all to the end; at 3 and 5 USD an hour
    double end = r.simulatedDurationUs() / 3.6e9;
    double aNodes = end + 2 * (end - 15 * S / 3.6e9);
    assertThat(a.nodeHours()).isCloseTo(aNodes, Offset.offset(1e-9));
    assertThat(b.nodeHours()).isCloseTo(end, Offset.offset(1e-9));
    assertThat(total.nodeHours()).isCloseTo(aNodes + end, Offset.offset(1e-9));
    assertThat(total.cost()).isCloseTo(3.0 * aNodes + 5.0 * end, Offset.offset(1e-9));
    // the timeline adds the pools: at 135 s a has 1 ready and 2 starting, b 1 ready
    AutoscaleReport.Sample at135 = total.timeline().stream().filter(s -> s.atUs() == 135 * S).findFirst().orElseThrow();
    assertThat(at135.desired()).isEqualTo(4);
    assertThat(at135.ready()).isEqualTo(2);
    assertThat(at135.starting()).isEqualTo(2);
    assertThat(at135.nodes()).isEqualTo(4);
    AutoscaleReport.Sample last = total.timeline().get(total.timeline().size() - 1);
    assertThat(last.atUs()).isEqualTo(r.simulatedDurationUs());
    assertThat(last.ready()).isEqualTo(4);
    // hours: every request once in the sum, each pool's own in its report
    assertThat(total.hours().stream().mapToLong(AutoscaleReport.Hour::finished).sum()).isEqualTo(3000);
    assertThat(a.hours().stream().mapToLong(AutoscaleReport.Hour::finished).sum()).isEqualTo(2250);
    assertThat(b.hours().stream().mapToLong(AutoscaleReport.Hour::finished).sum()).isEqualTo(750);
    // alpha arrivals while a was short of its 3 replicas: from 15 s to 145 s, 3 of every 4 of 10 a second
    assertThat(a.arrivalsWhileShort()).isBetween(970L, 980L);
    assertThat(b.arrivalsWhileShort()).isZero();
    assertThat(total.arrivalsWhileShort()).isEqualTo(a.arrivalsWhileShort());
  }

  @Test
  void poolsOfOneNodePoolShareItsNodesAndItsCostIsCountedOnce() {
    // nodes of 4 GPUs, at most 2, shared: a's and b's first replicas sit on one node from time 0
    FleetConfig shared = new FleetConfig(1, 3, 1, 15 * S, 1, 4, 2, 0, 0, 100 * S, 20 * S, 10 * S, 3.0, 0, 0);
    FleetConfig sharedB = new FleetConfig(1, 2, 1, 15 * S, 1, 4, 2, 0, 0, 100 * S, 20 * S, 10 * S, 3.0, 0, 0);
    ModelRouting models = new ModelRouting(List.of(
        new ModelRouting.Served("alpha", Set.of("alpha"), Set.of("a"), Routers.roundRobin(), null),
        new ModelRouting.Served("beta", Set.of("beta"), Set.of("b"), Routers.roundRobin(), null)));
    SimulationResult r = Simulation.builder().addPool(pool("a", 3, 1_000)).addPool(pool("b", 2, 3_000)).models(models)
        .router(Routers.roundRobin()).snapshotRefreshUs(0).recordRequests(true).source(RequestSource.of(mixed()))
        .autoscaling("a", "h100", shared, new Recording(3), "grow")
        .autoscaling("b", "h100", sharedB, new Recording(2), "grow").build().run();
    // at 15 s a's two new replicas fit on the node (no provisioning): ready at 15 + 20 + 10 = 45 s;
    // b's second finds it full, asks for a second node: ready at 15 + 100 + 20 + 10 = 145 s
    long firstOnNewA = Long.MAX_VALUE;
    long firstOnNewB = Long.MAX_VALUE;
    for (RequestRecord rec : r.requests()) {
      if (rec.instance() == 1 || rec.instance() == 2) {
        firstOnNewA = Math.min(firstOnNewA, rec.arrivalUs());
      } else if (rec.instance() == 4) {
        firstOnNewB = Math.min(firstOnNewB, rec.arrivalUs());
      }
    }
    assertThat(firstOnNewA).isGreaterThanOrEqualTo(45 * S).isLessThan(46 * S);
    assertThat(firstOnNewB).isGreaterThanOrEqualTo(145 * S).isLessThan(146 * S);
    AutoscaleReport total = r.autoscale().orElseThrow();
    double end = r.simulatedDurationUs() / 3.6e9;
    double nodes = end + (end - 15 * S / 3.6e9); // one node from 0, one from 15 s
    assertThat(total.nodeHours()).isCloseTo(nodes, Offset.offset(1e-9));
    assertThat(total.gpuHours()).isCloseTo(4 * nodes, Offset.offset(1e-9));
    assertThat(total.cost()).isCloseTo(3.0 * nodes, Offset.offset(1e-9));
    assertThat(total.peakNodes()).isEqualTo(2);
    // each pool's report gives its node pool's figures
    assertThat(total.pools().get("a").nodeHours()).isCloseTo(nodes, Offset.offset(1e-9));
    assertThat(total.pools().get("b").peakNodes()).isEqualTo(2);
    AutoscaleReport.Sample at0 = total.timeline().get(0);
    assertThat(at0.nodes()).isEqualTo(1);
    AutoscaleReport.Sample at30 = total.timeline().stream().filter(x -> x.atUs() == 30 * S).findFirst().orElseThrow();
    assertThat(at30.nodes()).isEqualTo(2);
    assertThat(at30.desired()).isEqualTo(5);
    // pools whose node settings differ cannot share
    FleetConfig pricier = new FleetConfig(1, 2, 1, 15 * S, 1, 4, 2, 0, 0, 100 * S, 20 * S, 10 * S, 4.0, 0, 0);
    Simulation.Builder clash = Simulation.builder().addPool(pool("a", 3, 1_000)).addPool(pool("b", 2, 3_000))
        .models(models).source(RequestSource.of(mixed()))
        .autoscaling("a", "h100", shared, new Recording(1), "x").autoscaling("b", "h100", pricier, new Recording(1), "x");
    assertThatThrownBy(() -> clash.build().run()).hasMessage("autoscaling: pool 'b' shares node pool 'h100' with"
        + " other node settings (GPUs per node, node counts, provisioning delay, price)");
  }

  @Test
  void theSameRunTwiceIsTheSameBytesAndPoolsMustBeScaledOnce() {
    assertThat(run(new Recording(3), new Recording(2)).toJson()).isEqualTo(run(new Recording(3), new Recording(2)).toJson());
    assertThat(run(new Recording(3), new Recording(2)).toJson().replaceAll("\\s", ""))
        .contains("\"pools\":{\"a\":{\"autoscaler\":\"grow\"");
    Simulation.Builder twice = Simulation.builder().addPool(pool("a", 3, 1_000))
        .autoscaling("a", null, fleet(1, 3, 0), new Recording(1), "x");
    assertThatThrownBy(() -> twice.autoscaling("a", null, fleet(1, 3, 0), new Recording(1), "x"))
        .hasMessage("autoscaling: pool 'a' is scaled twice, or with the whole cluster");
    Simulation.Builder unknown = Simulation.builder().addPool(pool("a", 3, 1_000))
        .source(RequestSource.of(mixed())).autoscaling("z", null, fleet(1, 3, 0), new Recording(1), "x");
    assertThatThrownBy(() -> unknown.build().run()).hasMessage("autoscaling: no instance of pool 'z'");
    Simulation.Builder small = Simulation.builder().addPool(pool("a", 2, 1_000))
        .source(RequestSource.of(mixed())).autoscaling("a", null, fleet(1, 3, 0), new Recording(1), "x");
    assertThatThrownBy(() -> small.build().run())
        .hasMessage("autoscaling: the pool must hold its 3 most replicas as instances, got 2");
  }
}
