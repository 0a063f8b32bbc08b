package io.blis.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.blis.engine.EngineLimits;
import io.blis.engine.InstancePool;
import io.blis.engine.LinearTestModel;
import io.blis.engine.Simulation;
import io.blis.engine.disagg.Decider;
import io.blis.engine.disagg.Disaggregation;
import io.blis.engine.disagg.Role;
import io.blis.engine.policy.Routers;
import io.blis.engine.result.SimulationResult;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Go BLIS's law on the load imbalance of its {@code === PD Metrics ===} lines
 * (sim/cluster/pd_metrics_test.go::TestCollectPDMetrics_Invariant_LoadImbalanceGeq1, at
 * inference-sim/inference-sim f90a1e3a): the ratio of the busier phase's sub-request throughput to
 * the idler one's is never below 1, and is infinite when one phase did nothing. This project
 * prints that figure in {@link GoBlisOutput} from a run's result, so the law is checked on the
 * printed lines of real runs whose prefill and decode counts are balanced, skewed either way, or
 * one-sided. The scenarios and the law are Go BLIS's; the code is this project's.
 */
class GoBlisPdMetricsParityTest {

  /** The figures of one run's PD lines. */
  private record Pd(double prefill, double decode, String ratio) {}

  private static Pd pdLines(SimulationResult r) {
    String out = GoBlisOutput.render(r, "{}\n", false);
    int at = out.indexOf("=== PD Metrics ===\n");
    assertThat(at).as("a PD section is printed").isGreaterThanOrEqualTo(0);
    Double prefill = null;
    Double decode = null;
    String ratio = null;
    for (String l : out.substring(at).split("\n")) {
      if (l.startsWith("Prefill Throughput: ")) {
        prefill = Double.parseDouble(l.substring(20, l.indexOf(" sub-req/s")));
      } else if (l.startsWith("Decode Throughput: ")) {
        decode = Double.parseDouble(l.substring(19, l.indexOf(" sub-req/s")));
      } else if (l.startsWith("Load Imbalance Ratio: ")) {
        ratio = l.substring(22);
      }
    }
    assertThat(prefill).isNotNull();
    assertThat(decode).isNotNull();
    assertThat(ratio).isNotNull();
    return new Pd(prefill, decode, ratio);
  }

  /**
   * Go's law on one run: the ratio is "inf" exactly when one phase's throughput is 0 and the
   * other's is not; otherwise it is at least 1 and is the larger throughput over the smaller.
   * Returns the ratio (infinity for "inf").
   */
  private static double checkLaw(String what, Pd pd) {
    assertThat(pd.prefill()).as(what).isGreaterThanOrEqualTo(0);
    assertThat(pd.decode()).as(what).isGreaterThanOrEqualTo(0);
    boolean oneIdle = (pd.prefill() == 0) != (pd.decode() == 0);
    if (pd.ratio().startsWith("inf")) {
      assertThat(oneIdle).as("%s: inf only when one phase is idle (%s)", what, pd).isTrue();
      return Double.POSITIVE_INFINITY;
    }
    assertThat(oneIdle).as("%s: a phase is idle but the ratio is finite (%s)", what, pd).isFalse();
    double ratio = Double.parseDouble(pd.ratio());
    assertThat(ratio).as("%s: load imbalance ratio >= 1 (%s)", what, pd).isGreaterThanOrEqualTo(1.0);
    if (pd.prefill() > 0) {
      double hi = Math.max(pd.prefill(), pd.decode());
      double lo = Math.min(pd.prefill(), pd.decode());
      assertThat(ratio).as("%s: the ratio is max / min of the throughputs (%s)", what, pd)
          .isCloseTo(hi / lo, within(1e-3 * hi / lo + 1e-3));
    }
    return ratio;
  }

  /**
   * A run on {@code prefill} prefill, {@code decode} decode and {@code both} shared instances
   * (one 1 ms + 8 us/token test model), requests with {@code prompts[i]} prompt tokens (distinct
   * ids: nothing cached) and {@code outputs[i]} output tokens, {@code gapUs} apart; {@code
   * horizonUs} 0 for none.
   */
  private static SimulationResult run(Decider decider, int threshold, int prefill, int decode, int both,
      int[] prompts, int[] outputs, long gapUs, long horizonUs) {
    List<RequestSpec> reqs = new ArrayList<>();
    for (int i = 0; i < prompts.length; i++) {
      int[] tokens = IntStream.range(1_000 * (i + 1) * 10, 1_000 * (i + 1) * 10 + prompts[i]).toArray();
      reqs.add(RequestSpec.simple(i, i * gapUs, tokens, outputs[i]));
    }
    LinearTestModel m = new LinearTestModel(1000, 8, 0, 0, 0, 0);
    Disaggregation.PoolKv kv = new Disaggregation.PoolKv(1, 1000, 1000, "test-gpu", 8, 100e9, 10e9, 2, 10);
    Map<String, Role> roles = new HashMap<>();
    Map<String, Disaggregation.PoolKv> kvs = new HashMap<>();
    Simulation.Builder b = Simulation.builder().source(RequestSource.of(reqs));
    roles.put("p", Role.PREFILL);
    kvs.put("p", kv);
    b.addPool(InstancePool.of("p", prefill, i -> m, EngineLimits.defaults(), 4000, 16));
    roles.put("d", Role.DECODE);
    kvs.put("d", kv);
    b.addPool(InstancePool.of("d", decode, i -> m, EngineLimits.defaults(), 4000, 16));
    if (both > 0) {
      roles.put("x", Role.BOTH);
      kvs.put("x", kv);
      b.addPool(InstancePool.of("x", both, i -> m, EngineLimits.defaults(), 4000, 16));
    }
    b.disaggregation(new Disaggregation(decider, threshold, roles, kvs, Disaggregation.Transfer.links(),
        Routers.roundRobin(), Routers.leastLoaded()));
    if (horizonUs > 0) {
      b.horizonUs(horizonUs);
    }
    return b.build().run();
  }

  private static int[] filled(int n, int v) {
    int[] a = new int[n];
    java.util.Arrays.fill(a, v);
    return a;
  }

  /**
   * Go's four cases (balanced, prefill ahead, decode ahead, one against a hundred) and a phase
   * left idle, each a real run here, then 24 seeded random runs (deciders, thresholds, pool sizes
   * with or without shared instances, horizons cutting runs short): the printed ratio is never
   * below 1, is the larger throughput over the smaller, and is "inf" exactly when one phase did
   * nothing.
   */
  @Test
  @Timeout(60)
  void loadImbalanceRatioIsNeverBelowOne() {
    int n = 100;
    int[] prompts = IntStream.range(0, n).map(i -> 50 + (i * 37) % 250).toArray();
    // balanced: every request split and finished: one prefill and one decode sub-request each
    Pd balanced = pdLines(run(Decider.ALWAYS, 0, 2, 2, 0, prompts, filled(n, 20), 2_000, 0));
    assertThat(checkLaw("balanced", balanced)).isEqualTo(1.0);
    assertThat(balanced.ratio()).isEqualTo("1.0000");
    // prefill ahead: long decodes cut short by the horizon after most prefills ended
    Pd prefillAhead = pdLines(run(Decider.ALWAYS, 0, 2, 2, 0, prompts,
        IntStream.range(0, n).map(i -> 1 + (i * 53) % 400).toArray(), 1_000, 250_000));
    assertThat(prefillAhead.prefill()).as("setup: %s", prefillAhead).isGreaterThan(prefillAhead.decode());
    assertThat(checkLaw("prefill ahead", prefillAhead)).isGreaterThan(1.0);
    // decode ahead: only the long prompts are split; every request is decoded
    int[] alternating = IntStream.range(0, n).map(i -> i % 2 == 0 ? 50 : 400).toArray();
    Pd decodeAhead = pdLines(run(Decider.PREFIX_THRESHOLD, 200, 2, 2, 0, alternating, filled(n, 20), 2_000, 0));
    assertThat(decodeAhead.decode()).as("setup: %s", decodeAhead).isGreaterThan(decodeAhead.prefill());
    assertThat(checkLaw("decode ahead", decodeAhead)).isCloseTo(2.0, within(1e-3));
    // one against a hundred: a single prompt long enough to be split
    int[] oneLong = filled(n, 50);
    oneLong[n / 2] = 1000;
    Pd extreme = pdLines(run(Decider.PREFIX_THRESHOLD, 500, 1, 1, 0, oneLong, filled(n, 20), 2_000, 0));
    assertThat(checkLaw("1 vs 100", extreme)).isCloseTo(100.0, within(0.05));
    // one phase idle: nothing split
    Pd idle = pdLines(run(Decider.NEVER, 0, 1, 2, 0, prompts, filled(n, 20), 2_000, 0));
    assertThat(idle.prefill()).isZero();
    assertThat(checkLaw("never split", idle)).isInfinite();
    for (Pd pd : List.of(balanced, prefillAhead, decodeAhead, extreme, idle)) {
      System.out.println("PD lines: prefill " + pd.prefill() + " decode " + pd.decode() + " ratio " + pd.ratio());
    }

    int finiteAboveOne = 0;
    for (long seed = 1; seed <= 24; seed++) {
      SplittableRandom rnd = new SplittableRandom(seed);
      Decider decider = Decider.values()[rnd.nextInt(Decider.values().length)];
      int count = 40 + rnd.nextInt(80);
      int[] p = IntStream.range(0, count).map(i -> 16 + rnd.nextInt(700)).toArray();
      int[] o = IntStream.range(0, count).map(i -> 1 + rnd.nextInt(150)).toArray();
      long horizon = rnd.nextBoolean() ? 0 : 20_000 + rnd.nextInt(300_000);
      SimulationResult r = run(decider, rnd.nextInt(600), 1 + rnd.nextInt(3), 1 + rnd.nextInt(3), rnd.nextInt(3),
          p, o, 200 + rnd.nextInt(4_000), horizon);
      double ratio = checkLaw("seed " + seed + " (" + decider.label() + ")", pdLines(r));
      if (ratio > 1.0 && Double.isFinite(ratio)) {
        finiteAboveOne++;
      }
    }
    assertThat(finiteAboveOne).as("the random runs reach skewed, finite ratios").isPositive();
  }
}
