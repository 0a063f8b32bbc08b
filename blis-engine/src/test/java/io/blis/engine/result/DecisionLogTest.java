package io.blis.engine.result;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The decision log hands back every decision in order, from memory and from its spill file alike. */
class DecisionLogTest {

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
  void spilledDecisionsReadBackEqualAndInOrderEveryTime() {
    List<RoutingDecision> all = decisions(1000);
    DecisionLog log = new DecisionLog(64);
    all.forEach(log::append);
    assertThat(log.spilled()).isEqualTo(936);
    assertThat(log).hasSize(1000).containsExactlyElementsOf(all);
    assertThat(new ArrayList<>(log)).isEqualTo(all); // a second pass reads the file again
    assertThat(log.get(500)).isEqualTo(all.get(500));
  }

  @Test
  void belowTheLimitNothingIsSpilledAndTheLogIsReadOnly() {
    DecisionLog log = new DecisionLog();
    decisions(10).forEach(log::append);
    assertThat(log.spilled()).isZero();
    assertThat(log).containsExactlyElementsOf(decisions(10));
    assertThatThrownBy(() -> log.add(decisions(1).get(0))).isInstanceOf(UnsupportedOperationException.class);
    ClusterReport r = new ClusterReport(List.of(), java.util.Map.of(), java.util.Map.of(),
        new Anomalies(0, 0, java.util.Map.of()), null, log);
    assertThat(r.decisions()).isSameAs(log);
  }
}
