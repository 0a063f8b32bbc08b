package io.blis.engine.result;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.blis.workload.RequestOutcome;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** A spilled list hands back every element, from memory and from its files alike, in its order. */
class SpilledListTest {

  private static List<RoutingDecision> decisions(int n) {
    List<RoutingDecision> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      if (i % 3 == 0) {
        out.add(new RoutingDecision("admission", i, 10L * i, i % 2 == 0, i % 2 == 0 ? "" : "rate-limited é", -1,
            List.of(), List.of(), -1));
      } else {
        out.add(new RoutingDecision("routing", i, 10L * i, true, "", i % 4,
            List.of(new RoutingDecision.Candidate(0, 0.25 * i, 100L * i), new RoutingDecision.Candidate(1, Double.NaN, 7)),
            i % 2 == 0 ? List.of(1) : List.of(), i % 2 == 0 ? 93L * i : -1));
      }
    }
    return out;
  }

  @Test
  void spilledDecisionsReadBackEqualAndInTheOrderTakenEveryTime() {
    List<RoutingDecision> all = decisions(1000);
    SpilledList<RoutingDecision> log = SpilledList.decisions(64);
    all.forEach(log::append);
    assertThat(log.spilled()).isEqualTo(960); // 15 full runs written, 40 in memory
    assertThat(log).hasSize(1000).containsExactlyElementsOf(all);
    assertThat(new ArrayList<>(log)).isEqualTo(all); // a second pass reads the files again
    assertThat(log.get(500)).isEqualTo(all.get(500));
  }

  /**
   * Records appended in the order requests finish come back by arrival then id, exactly as a
   * stable sort of them all puts them, equal keys in the order appended.
   */
  @Test
  void recordsComeBackSortedAcrossRunsAsOneStableSortWould() {
    SplittableRandom rnd = new SplittableRandom(7);
    List<RequestRecord> finished = new ArrayList<>();
    for (int i = 0; i < 5000; i++) {
      long arrival = rnd.nextInt(2000); // many ties
      long id = rnd.nextInt(3000); // some repeated (arrival, id) pairs too
      RequestOutcome outcome = RequestOutcome.values()[rnd.nextInt(RequestOutcome.values().length)];
      finished.add(new RequestRecord(id, rnd.nextInt(3), arrival, 1 + rnd.nextInt(900), 1 + rnd.nextInt(300), outcome,
          rnd.nextInt(100000), rnd.nextInt(1000000), rnd.nextInt(5000), rnd.nextInt(3), 16 * rnd.nextInt(20),
          outcome == RequestOutcome.REJECTED ? "kv_capacity" : null, rnd.nextInt(8) - 1,
          i % 5 == 0 ? "batch" : RequestRecord.DEFAULT_SLO_CLASS));
    }
    SpilledList<RequestRecord> log = SpilledList.requestRecords(333);
    finished.forEach(log::append);
    List<RequestRecord> expected = new ArrayList<>(finished);
    expected.sort(Comparator.comparingLong(RequestRecord::arrivalUs).thenComparingLong(RequestRecord::id));
    assertThat(log.seal()).containsExactlyElementsOf(expected);
    assertThat(log.spilled()).isEqualTo(4995);
    assertThatThrownBy(() -> log.append(finished.get(0))).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void belowARunNothingIsSpilledAndTheListIsReadOnly() {
    SpilledList<RoutingDecision> log = SpilledList.decisions();
    decisions(10).forEach(log::append);
    assertThat(log.spilled()).isZero();
    assertThat(log).containsExactlyElementsOf(decisions(10));
    assertThatThrownBy(() -> log.add(decisions(1).get(0))).isInstanceOf(UnsupportedOperationException.class);
    ClusterReport r = new ClusterReport(List.of(), java.util.Map.of(), java.util.Map.of(),
        new Anomalies(0, 0, java.util.Map.of()), null, log);
    assertThat(r.decisions()).isSameAs(log);
    assertThat(SpilledList.requestRecords().seal()).isEmpty();
  }
}
