package io.blis.engine.flow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.blis.engine.TestViews;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Who joins, who is shed and who leaves the gateway queue next. */
class GatewayQueueTest {

  private static FlowControl config(FlowControl.DispatchOrder order, FlowControl.Fairness fairness,
      int perBand, int maxDepth, boolean shedding, Map<String, Long> targets) {
    return new FlowControl(FlowControl.Detector.NEVER, 5, 0.8, 64, order, fairness, perBand, maxDepth,
        shedding, 1000, 0, targets);
  }

  private static List<String> drain(GatewayQueue<String> q) {
    List<String> out = new ArrayList<>();
    GatewayQueue.Entry<String> e;
    while ((e = q.poll()) != null) {
      out.add(e.item());
    }
    return out;
  }

  @Test
  void fifoTakesTheEarliestArrivalOverEveryBand() {
    GatewayQueue<String> q = new GatewayQueue<>(config(FlowControl.DispatchOrder.FIFO,
        FlowControl.Fairness.GLOBAL_STRICT, 0, 0, false, Map.of()));
    q.offer("s1", 6, "", "sheddable", 0);
    q.offer("c1", 0, "", "critical", 1);
    q.offer("s2", 6, "", "sheddable", 2);
    assertThat(drain(q)).containsExactly("s1", "c1", "s2");
    assertThat(q.maxSize()).isEqualTo(3);
  }

  @Test
  void priorityTakesTheMostUrgentBandFirstAndRoundRobinTakesTheTenantsInTurn() {
    GatewayQueue<String> strict = new GatewayQueue<>(config(FlowControl.DispatchOrder.PRIORITY,
        FlowControl.Fairness.GLOBAL_STRICT, 0, 0, false, Map.of()));
    GatewayQueue<String> rr = new GatewayQueue<>(config(FlowControl.DispatchOrder.PRIORITY,
        FlowControl.Fairness.ROUND_ROBIN, 0, 0, false, Map.of()));
    for (GatewayQueue<String> q : List.of(strict, rr)) {
      q.offer("b-a1", 5, "a", "batch", 0);
      q.offer("b-a2", 5, "a", "batch", 1);
      q.offer("b-a3", 5, "a", "batch", 2);
      q.offer("b-b1", 5, "b", "batch", 3);
      q.offer("c-b1", 0, "b", "critical", 4);
    }
    assertThat(drain(strict)).containsExactly("c-b1", "b-a1", "b-a2", "b-a3", "b-b1");
    assertThat(drain(rr)).containsExactly("c-b1", "b-a1", "b-b1", "b-a2", "b-a3");
  }

  @Test
  void sloDeadlineTakesTheEarliestDeadlineWithinAFlow() {
    // one band (priority 1) holding two classes with different targets: the tighter one first
    GatewayQueue<String> q = new GatewayQueue<>(config(FlowControl.DispatchOrder.SLO_DEADLINE,
        FlowControl.Fairness.GLOBAL_STRICT, 0, 0, false, Map.of("interactive", 100L, "standard", 10_000L)));
    q.offer("std", 1, "", "standard", 0);
    q.offer("none", 1, "", "unknown-class", 5);
    q.offer("fast", 1, "", "interactive", 50);
    assertThat(drain(q)).containsExactly("fast", "std", "none");
  }

  @Test
  void aFullBandOrQueueRejectsAndSheddingDisplacesTheNewestLessUrgentSheddableRequest() {
    GatewayQueue<String> perBand = new GatewayQueue<>(config(FlowControl.DispatchOrder.FIFO,
        FlowControl.Fairness.GLOBAL_STRICT, 1, 0, false, Map.of()));
    assertThat(perBand.offer("c1", 0, "", "critical", 0).accepted()).isTrue();
    assertThat(perBand.offer("c2", 0, "", "critical", 1).accepted()).isFalse();
    assertThat(perBand.offer("s1", 6, "", "sheddable", 2).accepted()).isTrue();

    GatewayQueue<String> q = new GatewayQueue<>(config(FlowControl.DispatchOrder.FIFO,
        FlowControl.Fairness.GLOBAL_STRICT, 0, 3, true, Map.of()));
    q.offer("b1", 5, "", "batch", 0);
    q.offer("s1", 6, "", "sheddable", 1);
    q.offer("s2", 6, "", "sheddable", 2);
    // a sheddable request cannot displace one of its own band
    assertThat(q.offer("s3", 6, "", "sheddable", 3).accepted()).isFalse();
    // a critical one displaces the newest of the least urgent band
    GatewayQueue.Offer<String> o = q.offer("c1", 0, "", "critical", 4);
    assertThat(o.accepted()).isTrue();
    assertThat(o.shed().item()).isEqualTo("s2");
    assertThat(o.shed().queued()).isFalse();
    // then the next sheddable one, then the batch one; standard requests (band 1) are never shed
    assertThat(q.offer("c2", 0, "", "critical", 5).shed().item()).isEqualTo("s1");
    assertThat(q.offer("c3", 0, "", "critical", 6).shed().item()).isEqualTo("b1");
    assertThat(q.offer("c4", 0, "", "critical", 7).accepted()).isFalse();
    assertThat(drain(q)).containsExactly("c1", "c2", "c3");
  }

  @Test
  void aRemovedEntryIsSkippedAndCountedOut() {
    GatewayQueue<String> q = new GatewayQueue<>(config(FlowControl.DispatchOrder.FIFO,
        FlowControl.Fairness.GLOBAL_STRICT, 0, 0, false, Map.of()));
    GatewayQueue.Entry<String> first = q.offer("r1", 1, "", "standard", 0).entry();
    q.offer("r2", 1, "", "standard", 1);
    assertThat(q.remove(first)).isTrue();
    assertThat(q.remove(first)).isFalse();
    assertThat(q.size()).isEqualTo(1);
    assertThat(q.queued()).extracting(GatewayQueue.Entry::item).containsExactly("r2");
    assertThat(drain(q)).containsExactly("r2");
    assertThat(q.size()).isZero();
  }

  @Test
  void badSettingsAreRefusedWithTheirNames() {
    FlowControl d = FlowControl.DEFAULTS;
    assertThatThrownBy(() -> new FlowControl(d.detector(), 0, 0.8, 64, d.dispatchOrder(), d.fairness(), 0, 0,
        false, 1000, 0, Map.of())).hasMessageContaining("queue depth threshold must be a finite number > 0, got 0.0");
    assertThatThrownBy(() -> new FlowControl(d.detector(), 5, 0.8, 0, d.dispatchOrder(), d.fairness(), 0, 0,
        false, 1000, 0, Map.of())).hasMessageContaining("max concurrency must be at least 1");
    assertThatThrownBy(() -> new FlowControl(d.detector(), 5, 0.8, 64, d.dispatchOrder(), d.fairness(), -1, 0,
        false, 1000, 0, Map.of())).hasMessageContaining("queue capacities must be >= 0");
    assertThatThrownBy(() -> FlowControl.parse(FlowControl.Detector.class, "busy", "--saturation-detector"))
        .hasMessage("--saturation-detector: unknown value 'busy', expected one of utilization, concurrency, never");
  }

  @Test
  void saturationFollowsGatewayApiInferenceExtensionFormulas() {
    FlowControl d = FlowControl.DEFAULTS;
    // queue 10 and 0, KV 0.4 and 0.6, in flight 30 and 50
    TestViews.View two = new TestViews.View(0, new TestViews.Inst(0, 10, 0, 0.4, 30, 0),
        new TestViews.Inst(1, 0, 0, 0.6, 50, 0));
    // utilization: mean of max(10 / 5, 0.4 / 0.8) = 2 and max(0, 0.6 / 0.8) = 0.75
    FlowControl util = new FlowControl(FlowControl.Detector.UTILIZATION, 5, 0.8, 100, d.dispatchOrder(),
        d.fairness(), 0, 0, false, 1000, 0, Map.of());
    assertThat(util.saturation(two)).isEqualTo((2.0 + 0.75) / 2);
    // never (Go BLIS's default): nothing is held
    assertThat(d.saturation(two)).isZero();
    FlowControl conc = new FlowControl(FlowControl.Detector.CONCURRENCY, 5, 0.8, 40, d.dispatchOrder(),
        d.fairness(), 0, 0, false, 1000, 0, Map.of());
    assertThat(conc.saturation(two)).isEqualTo(80.0 / 80);
  }
}
