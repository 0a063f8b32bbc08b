package io.blis.workload.inferenceperf;

import static org.assertj.core.api.Assertions.assertThat;

import io.blis.workload.MiniEngine;
import io.blis.workload.RequestSpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class MultiTurnChatTest {

  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {3, 17})
  void roundsOfAUserAreSerializedAndExtendTheContext(long seed) {
    // 6 users, 20 req/s: a user is due every 0.3 s but a round takes 0.5-1.5 s, so many sends wait.
    InferencePerfProfile p = new InferencePerfProfile(
        new SharedPrefixData(2, 3, 40, 30, 20), List.of(new LoadStage(20, 30), new LoadStage(10, 20)),
        1, 300, InferencePerfProfile.LoadType.CONSTANT, true);
    List<MiniEngine.Served> served = MiniEngine.run(InferencePerfWorkload.synthetic(p, seed),
        r -> 500_000L + 1_000L * (r.id() * 7919 % 1000));
    assertThat(served).hasSize(600 + 200);
    Map<Long, List<MiniEngine.Served>> users = new TreeMap<>();
    for (MiniEngine.Served s : served) {
      users.computeIfAbsent(s.request().sessionId(), k -> new ArrayList<>()).add(s);
    }
    assertThat(users).hasSize(6);
    long delayed = 0;
    for (List<MiniEngine.Served> rounds : users.values()) {
      rounds.sort(Comparator.comparingInt(s -> s.request().round()));
      for (int k = 1; k < rounds.size(); k++) {
        RequestSpec prev = rounds.get(k - 1).request();
        RequestSpec cur = rounds.get(k).request();
        assertThat(cur.round()).isEqualTo(k);
        assertThat(cur.arrivalTimeUs()).isGreaterThanOrEqualTo(rounds.get(k - 1).finishUs());
        if (cur.arrivalTimeUs() == rounds.get(k - 1).finishUs()) {
          delayed++;
        }
        // context + question: previous prompt, its 20 output tokens, a join, the question again
        int question = rounds.get(0).request().inputTokens() - prev.prefixLength();
        assertThat(cur.inputTokens()).isEqualTo(prev.inputTokens() + 20 + 1 + question);
        assertThat(Arrays.copyOf(cur.promptTokens(), prev.inputTokens())).isEqualTo(prev.promptTokens());
      }
    }
    assertThat(delayed).isGreaterThan(100);
    // Stage 1 starts after every stage-0 round finished.
    long lastStage0 = served.stream().filter(s -> s.request().stage() == 0)
        .mapToLong(MiniEngine.Served::finishUs).max().orElseThrow();
    assertThat(served.stream().filter(s -> s.request().stage() == 1))
        .allSatisfy(s -> assertThat(s.request().arrivalTimeUs()).isGreaterThan(lastStage0 + 2_000_000L));
  }
}
