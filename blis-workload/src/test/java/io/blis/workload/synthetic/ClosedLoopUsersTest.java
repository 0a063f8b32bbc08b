package io.blis.workload.synthetic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.blis.workload.MiniEngine;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import io.blis.workload.spec.SpecWriter;
import io.blis.workload.spec.WorkloadFile;
import io.blis.workload.spec.WorkloadSpec;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Closed-loop users: a benchmark's concurrency. */
class ClosedLoopUsersTest {

  private static ClientSpec users(int n, long thinkUs) {
    return new ClientSpec("users", "", "standard", new ArrivalProcess.Constant(1), LengthSpec.fixed(100),
        LengthSpec.fixed(20), "", 0, 0, SessionSpec.users(n, thinkUs), List.of());
  }

  /**
   * 4 users thinking 1 s, each request served in 0.3 s: user u starts at u x 0.25 s, then sends
   * every 1.3 s; 40 requests in all, never more than 4 at once, each a fresh prompt.
   */
  @Test
  void eachUserSendsAThinkTimeAfterItsLastRequestCompleted() {
    try (RequestSource s = SyntheticWorkload.of(List.of(users(4, 1_000_000)), 7, 40, Long.MAX_VALUE)) {
      assertThat(s.readableAhead()).isFalse();
      List<MiniEngine.Served> all = MiniEngine.run(s, r -> 300_000);
      assertThat(all).hasSize(40);
      Map<Long, List<MiniEngine.Served>> byUser = new HashMap<>();
      for (MiniEngine.Served x : all) {
        byUser.computeIfAbsent(x.request().sessionId(), k -> new ArrayList<>()).add(x);
      }
      assertThat(byUser).hasSize(4);
      List<Long> starts = new ArrayList<>();
      for (List<MiniEngine.Served> user : byUser.values()) {
        user.sort((a, b) -> Long.compare(a.request().arrivalTimeUs(), b.request().arrivalTimeUs()));
        starts.add(user.get(0).request().arrivalTimeUs());
        assertThat(user).hasSize(10);
        for (int k = 1; k < user.size(); k++) {
          assertThat(user.get(k).request().arrivalTimeUs()).isEqualTo(user.get(k - 1).finishUs() + 1_000_000);
          assertThat(user.get(k).request().promptTokens()).isNotEqualTo(user.get(k - 1).request().promptTokens());
          assertThat(user.get(k).request().inputTokens()).isEqualTo(100); // no context carried over
        }
      }
      assertThat(starts).containsExactlyInAnyOrder(0L, 250_000L, 500_000L, 750_000L);
      // in flight at any time: at most the users
      for (MiniEngine.Served x : all) {
        long t = x.request().arrivalTimeUs();
        long busy = all.stream().filter(y -> y.request().arrivalTimeUs() <= t && y.finishUs() > t).count();
        assertThat(busy).isLessThanOrEqualTo(4);
      }
    }
  }

  @Test
  void theHorizonEndsTheUsersWhenNoCountDoes() {
    try (RequestSource s = SyntheticWorkload.of(List.of(users(2, 0)), 7, Long.MAX_VALUE, 10_000_000)) {
      List<MiniEngine.Served> all = MiniEngine.run(s, r -> 1_000_000);
      // both start at 0 (no think time to stagger over) and send back to back: 11 each by 10 s
      assertThat(all).hasSize(22);
      assertThat(all).allMatch(x -> x.request().arrivalTimeUs() <= 10_000_000);
    }
  }

  @Test
  void specsOfBothFormatsNameThem() {
    WorkloadSpec ours = WorkloadFile.parse("""
        num_requests: 100
        clients:
          - id: bench
            input: {type: constant, value: 200}
            output: {type: constant, value: 50}
            session: {users: 8, think_time_s: 0.5}
        """, "ours.yaml").spec();
    SessionSpec s = ours.clients().get(0).session();
    assertThat(s.users()).isEqualTo(8);
    assertThat(s.thinkTimeUs()).isEqualTo(500_000);
    // written and read back: the same clients
    WorkloadSpec again = WorkloadFile.parse(SpecWriter.toYaml(ours, List.of()), "again.yaml").spec();
    assertThat(again.clients().get(0).session()).isEqualTo(s);

    WorkloadSpec go = WorkloadFile.parse("""
        version: "2"
        seed: 3
        num_requests: 100
        clients:
          - id: agents
            concurrency: 8
            think_time_us: 500000
            input_distribution: {type: constant, params: {value: 200}}
            output_distribution: {type: constant, params: {value: 50}}
        """, "go.yaml").spec();
    assertThat(go.clients().get(0).session()).isEqualTo(s);

    assertThatThrownBy(() -> WorkloadFile.parse("""
        num_requests: 100
        clients:
          - id: bench
            rate: 5
            input: {type: constant, value: 200}
            output: {type: constant, value: 50}
            session: {users: 8}
        """, "both.yaml")).hasMessageContaining("rate does not go with session.users");
  }

  @Test
  void aUserStaggerNeverOverflows() {
    ClientSpec many = users(SessionSpec.MAX_USERS, RequestSpec.MAX_TIME_US);
    try (RequestSource s = SyntheticWorkload.of(List.of(many), 1, 3, Long.MAX_VALUE)) {
      assertThat(s.next().arrivalTimeUs()).isZero();
      assertThat(s.next().arrivalTimeUs()).isEqualTo(RequestSpec.MAX_TIME_US / SessionSpec.MAX_USERS);
    }
  }
}
