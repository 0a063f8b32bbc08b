package io.blis.workload.synthetic;

import static org.assertj.core.api.Assertions.assertThat;

import io.blis.workload.MiniEngine;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A Go BLIS spec's num_requests counts the rounds of multi-turn sessions, as Go BLIS does. */
class GoBlisCountTest {

  private static ClientSpec chat(ArrivalProcess arrival, int rounds, long thinkUs) {
    return new ClientSpec("chat", "", "standard", arrival, LengthSpec.fixed(100), LengthSpec.fixed(20), "", 0, 0,
        new SessionSpec(rounds, thinkUs, true), List.of());
  }

  private static List<RequestSpec> firstRounds(RequestSource s) {
    List<RequestSpec> out = new ArrayList<>();
    RequestSpec r;
    while ((r = s.next()) != null) {
      out.add(r);
    }
    return out;
  }

  /**
   * Sessions every 0.5 s, 3 rounds 0.1 s apart, 10 requests: the first ten stamped times are the
   * three rounds of the first three sessions and the first of the fourth, so 4 sessions run.
   */
  @Test
  void theCountEndsWhereTheStampedRoundsReachIt() {
    ClientSpec c = chat(new ArrivalProcess.Constant(2), 3, 100_000);
    try (RequestSource s = SyntheticWorkload.ofGoBlis(List.of(c), 1, 10, Long.MAX_VALUE)) {
      List<RequestSpec> first = firstRounds(s);
      assertThat(first).hasSize(4).allMatch(r -> r.round() == 0 && r.sessionId() >= 0);
    }
    try (RequestSource own = SyntheticWorkload.of(List.of(c), 1, 10, Long.MAX_VALUE)) {
      assertThat(firstRounds(own)).as("this project's count: sessions").hasSize(10);
    }
    // every round of the 4 sessions is sent, each after the previous ended
    try (RequestSource s = SyntheticWorkload.ofGoBlis(List.of(c), 1, 10, Long.MAX_VALUE)) {
      List<MiniEngine.Served> all = MiniEngine.run(s, r -> 50_000);
      assertThat(all).hasSize(12);
    }
  }

  /**
   * Go BLIS's demo: sessions at 500/s, 5 rounds 0.5 s apart, 500 requests. A client generates
   * sessions until their rounds reach twice the count (200 sessions), all of which start before any
   * second round: 200 sessions, 1,000 requests (Go BLIS prints 1,000 for its
   * examples/multiturn-chat-demo.yaml).
   */
  @Test
  void aClientStartsNoSessionOnceItsRoundsReachTwiceTheCount() {
    ClientSpec c = chat(new ArrivalProcess.Poisson(500), 5, 500_000);
    try (RequestSource s = SyntheticWorkload.ofGoBlis(List.of(c), 42, 500, Long.MAX_VALUE)) {
      assertThat(MiniEngine.run(s, r -> 30_000)).hasSize(1_000);
    }
  }

  @Test
  void singleRequestsCountAsTheyDoHere() {
    ClientSpec api = new ClientSpec("api", "", "standard", new ArrivalProcess.Poisson(20), LengthSpec.fixed(100),
        LengthSpec.fixed(20), "", 0, 0, SessionSpec.NONE, List.of());
    try (RequestSource go = SyntheticWorkload.ofGoBlis(List.of(api), 3, 300, Long.MAX_VALUE);
        RequestSource own = SyntheticWorkload.of(List.of(api), 3, 300, Long.MAX_VALUE)) {
      assertThat(firstRounds(go)).hasSize(300).isEqualTo(firstRounds(own));
    }
  }
}
