package io.blis.engine.capacity;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.blis.engine.EngineLimits;
import io.blis.engine.InstancePool;
import io.blis.engine.LinearTestModel;
import io.blis.engine.Simulation;
import io.blis.workload.spec.WorkloadSpec;
import org.junit.jupiter.api.Test;

class CapacitySearchTest {

  /** Evenly spaced requests of 4 prompt tokens and exactly 50 output tokens. */
  private static final RateWorkload EVEN = RateWorkload.spec(WorkloadSpec.parse("""
      seed: 1
      aggregate_rate: 1
      num_requests: 100
      clients:
        - id: c
          arrival: {process: constant}
          input: {type: constant, value: 4}
          output: {type: constant, value: 50}
      """, "even.yaml"), "even.yaml");

  /** Poisson requests of Gaussian lengths. */
  private static final RateWorkload POISSON = RateWorkload.spec(WorkloadSpec.parse("""
      seed: 2
      aggregate_rate: 1
      num_requests: 100
      clients:
        - id: c
          arrival: {process: poisson}
          input: {type: gaussian, mean: 200, std: 50, min: 10, max: 400}
          output: {type: gaussian, mean: 40, std: 10, min: 2, max: 80}
      """, "poisson.yaml"), "poisson.yaml");

  private static final CapacitySearch.Settings FAST = new CapacitySearch.Settings(60, 300, 20_000, 0.2, 0.005, 1, 1000, 0.01);

  /** Every step takes 5 ms whatever it holds; 8 requests at most run at once. */
  private static CapacitySearch.DeploymentFactory constantSteps(int seqs) {
    return (instances, c) -> Simulation.builder()
        .addPool(InstancePool.of("p", instances == 0 ? 1 : instances, i -> new LinearTestModel(5000, 0, 0, 0, 0, 0),
            new EngineLimits(seqs, 4096, 0, 8192), 100_000, 16));
  }

  /** Steps of 4 ms plus 10 us per token: the busier, the slower. */
  private static CapacitySearch.DeploymentFactory linear(int fixedInstances) {
    return (instances, c) -> Simulation.builder()
        .addPool(InstancePool.of("p", instances == 0 ? fixedInstances : instances,
            i -> new LinearTestModel(4000, 10, 0, 0, 0, 0), new EngineLimits(32, 2048, 0, 8192), 100_000, 16));
  }

  @Test
  void theSaturationRateOfAModelComputableByHandIsFoundWithinTwoPercent() {
    // at saturation 8 slots each turn over a request every 50 steps of 5 ms: 8 / 0.25 s = 32 req/s
    CapacitySearch s = new CapacitySearch(constantSteps(8), EVEN, SloSet.parse("e2e_p99=10s"), FAST);
    CapacitySearch.Found sat = s.saturationRate(null);
    assertThat(sat.atLeast()).isFalse();
    assertThat(sat.rateRps()).isCloseTo(32.0, within(0.02 * 32));
    // below it nothing queues, so a loose target holds right up to saturation
    CapacitySearch.Found max = s.maxRate(null);
    assertThat(max.rateRps()).isCloseTo(32.0, within(0.02 * 32));
    assertThat(max.at().metrics().steady()).isTrue();
    // the points show the bracket: doubling from 1 up to 64, then bisection
    assertThat(sat.points()).extracting(CapacitySearch.Point::rateRps).startsWith(1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0);
  }

  @Test
  void aTargetBelowTheUnloadedLatencyIsNeverMet() {
    // unloaded, a request takes 50 steps of 5 ms (250 ms) plus its wait for a step to start
    CapacitySearch s = new CapacitySearch(constantSteps(8), EVEN, SloSet.parse("e2e_p50=200ms"), FAST);
    CapacitySearch.Found f = s.maxRate(null);
    assertThat(f.rateRps()).isNaN();
    assertThat(f.points().get(f.points().size() - 1).rateRps()).isEqualTo(FAST.minRps());
  }

  @Test
  void aTighterTargetNeverRaisesCapacity() {
    double previous = Double.POSITIVE_INFINITY;
    for (String slo : new String[] {"ttft_p99=2s", "ttft_p99=500ms", "ttft_p99=100ms", "ttft_p99=40ms"}) {
      double r = new CapacitySearch(linear(1), POISSON, SloSet.parse(slo), FAST).maxRate(null).rateRps();
      assertThat(r).as(slo).isLessThanOrEqualTo(previous);
      previous = r;
    }
    assertThat(previous).isPositive();
  }

  @Test
  void moreReplicasNeverLowerCapacity() {
    SloSet slo = SloSet.parse("ttft_p99=200ms,e2e_p99=5s");
    double one = new CapacitySearch(linear(1), POISSON, slo, FAST).maxRate(null).rateRps();
    double two = new CapacitySearch(linear(2), POISSON, slo, FAST).maxRate(null).rateRps();
    double four = new CapacitySearch(linear(4), POISSON, slo, FAST).maxRate(null).rateRps();
    assertThat(two).isGreaterThanOrEqualTo(one);
    assertThat(four).isGreaterThanOrEqualTo(two);
    assertThat(two).isGreaterThan(1.5 * one);
  }

  @Test
  void theFewestReplicasForARateMeetTheTargetsAndOneFewerDoesNot() {
    SloSet slo = SloSet.parse("ttft_p99=200ms,e2e_p99=5s");
    CapacitySearch s = new CapacitySearch(linear(1), POISSON, slo, FAST);
    double one = s.maxRate(null).rateRps();
    CapacitySearch.Replicas r = s.replicasFor(2.5 * one, 64, null);
    assertThat(r.instances()).isBetween(3, 6);
    assertThat(r.at().meetsTargets()).isTrue();
    assertThat(s.evaluate(2.5 * one, r.instances() - 1, null).meetsTargets()).isFalse();
    assertThat(s.replicasFor(1000, 4, null).instances()).isEqualTo(-1);
  }

  @Test
  void targetsParseWithUnitsAndBadOnesNameTheItem() {
    SloSet s = SloSet.parse("ttft_p99=500ms, e2e_p90=2s, itl_p50=750us");
    assertThat(s.aggregate()).containsEntry("ttft_p99", 500_000.0).containsEntry("e2e_p90", 2_000_000.0)
        .containsEntry("tpot_p50", 750.0);
    SloSet g = SloSet.parse("goodput=99%,ttft=300,e2e=10s");
    assertThat(g.goodput()).isEqualTo(0.99);
    assertThat(g.perRequest()).containsEntry("ttft", 300_000.0);
    assertThat(g.describe()).isEqualTo("goodput=99%,ttft=300ms,e2e=10000ms");
    assertThatThrownBy(() -> SloSet.parse("ttft_p98=1s")).hasMessage(
        "'ttft_p98=1s': unknown statistic 'p98', expected one of [mean, p50, p90, p95, p99, p999]");
    assertThatThrownBy(() -> SloSet.parse("latency_p99=1s")).hasMessageStartingWith("'latency_p99=1s': unknown metric 'latency'");
    assertThatThrownBy(() -> SloSet.parse("ttft_p99=fast")).hasMessageContaining("'fast' is not a duration");
    assertThatThrownBy(() -> SloSet.parse("ttft_p99=-1s")).hasMessageContaining("must be positive");
    assertThatThrownBy(() -> SloSet.parse("goodput=120%,ttft=1s")).hasMessageContaining("goodput must be in (0, 100%]");
    SloSet byClass = SloSet.parse("goodput=99%");
    assertThat(byClass.classTargets()).isTrue();
    assertThat(g.classTargets()).isFalse();
    assertThat(byClass.describe()).isEqualTo("goodput=99% (SLO class targets)");
    assertThatThrownBy(() -> SloSet.parse("ttft=1s")).hasMessageContaining("need goodput=PERCENT");
    assertThatThrownBy(() -> SloSet.parse("ttft_p99=1s,ttft_p99=2s")).hasMessageContaining("ttft_p99 is given twice");
    assertThatThrownBy(() -> SloSet.parse("ttft_p99")).hasMessageContaining("expected KEY=VALUE");
  }

  @Test
  void goodputAgainstEachRequestsClassTargetsEqualsTheSameTargetsWrittenOut() {
    // every request of the spec is of the default class, "standard": its class targets and the same
    // per-request targets written out must find the same rate, point for point
    CapacitySearch.DeploymentFactory withClass = (instances, c) -> linear(1).builder(instances, c)
        .sloTarget("standard", new io.blis.engine.SloTarget(100, 400));
    CapacitySearch byClass = new CapacitySearch(withClass, POISSON, SloSet.parse("goodput=95%"), FAST);
    CapacitySearch written = new CapacitySearch(linear(1), POISSON, SloSet.parse("goodput=95%,ttft=100ms,e2e=400ms"), FAST);
    CapacitySearch.Found a = byClass.maxRate(null);
    CapacitySearch.Found b = written.maxRate(null);
    assertThat(a.rateRps()).isFinite().isEqualTo(b.rateRps());
    // the targets bind: the saturation rate lies above the rate found
    assertThat(byClass.saturationRate(null).rateRps()).isGreaterThan(a.rateRps() * 1.05);
    assertThat(a.points()).extracting(CapacitySearch.Point::rateRps)
        .containsExactlyElementsOf(b.points().stream().map(CapacitySearch.Point::rateRps).toList());
    // a class with looser targets than the requests' own changes nothing; tighter ones lower the rate
    CapacitySearch.DeploymentFactory tighter = (instances, c) -> linear(1).builder(instances, c)
        .sloTarget("standard", new io.blis.engine.SloTarget(100, 300)).sloTarget("batch", new io.blis.engine.SloTarget(1, 1));
    assertThat(new CapacitySearch(tighter, POISSON, SloSet.parse("goodput=95%"), FAST).maxRate(null).rateRps())
        .isLessThan(a.rateRps());
    // without class targets the question has no answer: one clear message
    assertThatThrownBy(() -> new CapacitySearch(linear(1), POISSON, SloSet.parse("goodput=95%"), FAST).maxRate(null))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("policy bundle's slo: section");
  }

  @Test
  void aTimeScaledWorkloadRunsAtTheRateAskedFor() {
    PointMetrics m = new CapacitySearch(constantSteps(8), EVEN, SloSet.parse("e2e_p99=10s"), FAST)
        .evaluate(10, 0, null).metrics();
    assertThat(m.offeredRps()).isCloseTo(10.0, within(0.05));
    assertThat(m.steady()).isTrue();
    assertThat(m.completed()).isEqualTo(m.measured());
  }
}
