package io.blis.engine;

import io.blis.engine.result.InstanceStatus;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.blis.api.RequestView;
import io.blis.engine.policy.Routers;
import io.blis.workload.RequestOutcome;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import io.blis.workload.synthetic.LengthSpec;
import io.blis.workload.synthetic.SyntheticWorkload;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

class LiveSimulationTest {

  private static List<RequestSpec> workload(long seed) {
    List<RequestSpec> out = new ArrayList<>();
    try (RequestSource s = SyntheticWorkload.poissonGaussian(40, 300, new LengthSpec(300, 150, 2, 1500),
        new LengthSpec(60, 40, 1, 300), 64, seed)) {
      for (RequestSpec r = s.next(); r != null; r = s.next()) {
        out.add(r);
      }
    }
    return out;
  }

  private static Simulation.Builder builder(int instances) {
    return Simulation.builder().latencyModel(new LinearTestModel(3000, 20, 500, 300, 40, 1000))
        .instances(instances).router(Routers.leastLoaded()).totalKvBlocks(400)
        .limits(new EngineLimits(32, 512, 0, 4096)).recordRequests(true);
  }

  /** Collects every token a listener is told of, as (id, index, client time). */
  private static final class Tokens implements EngineListener {
    final List<long[]> seen = new ArrayList<>();
    final List<Long> finished = new ArrayList<>();

    @Override
    public void onToken(int instance, RequestView request, int tokenIndex, long timeUs, long clientTimeUs) {
      assertThat(clientTimeUs).isGreaterThanOrEqualTo(timeUs);
      seen.add(new long[] {request.id(), tokenIndex, clientTimeUs});
    }

    @Override
    public void onFinished(int instance, RequestView request, RequestOutcome outcome, long engineEndUs,
        long clientEndUs) {
      finished.add(request.id());
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {1, 3})
  void submittingLiveGivesTheBatchRunByteForByte(int instances) {
    List<RequestSpec> requests = workload(7);
    Tokens batchTokens = new Tokens();
    String batch = builder(instances).source(RequestSource.of(requests)).listener(batchTokens).build().run().toJson();

    Tokens liveTokens = new Tokens();
    LiveSimulation live = builder(instances).listener(liveTokens).buildLive();
    for (RequestSpec r : requests) {
      live.advanceTo(r.arrivalTimeUs());
      assertThat(live.nowUs()).isEqualTo(r.arrivalTimeUs());
      live.submit(r);
    }
    while (live.nextEventUs() != Long.MAX_VALUE) {
      live.advanceTo(live.nextEventUs());
    }
    assertThat(live.end().toJson()).isEqualTo(batch);
    assertThat(liveTokens.seen).hasSameSizeAs(batchTokens.seen);
    for (int i = 0; i < liveTokens.seen.size(); i++) {
      assertThat(liveTokens.seen.get(i)).containsExactly(batchTokens.seen.get(i));
    }
    long expectedTokens = requests.stream().mapToLong(RequestSpec::outputTokens).sum();
    assertThat(liveTokens.seen).hasSize((int) expectedTokens);
  }

  @Test
  void tokensOfARequestAreNumberedFromOneInClientTimeOrder() {
    Tokens t = new Tokens();
    LiveSimulation live = builder(1).listener(t).buildLive();
    live.submit(TestRequests.req(5, 0, 100, 4));
    live.advanceTo(1_000_000);
    assertThat(t.seen).extracting(a -> a[1]).containsExactly(1L, 2L, 3L, 4L);
    for (int i = 1; i < t.seen.size(); i++) {
      assertThat(t.seen.get(i)[2]).isGreaterThan(t.seen.get(i - 1)[2]);
    }
    assertThat(t.finished).containsExactly(5L);
    assertThat(live.status().get(0).running()).isZero();
  }

  @Test
  void statusShowsTheBatchAndAbortFreesTheBlocks() {
    Tokens t = new Tokens();
    LiveSimulation live = builder(1).listener(t).buildLive();
    live.submit(TestRequests.req(1, 0, 160, 1000));
    live.advanceTo(20_000);
    InstanceStatus s = live.status().get(0);
    assertThat(s.running()).isEqualTo(1);
    assertThat(s.kvUsedBlocks()).isGreaterThanOrEqualTo(10);
    assertThat(live.abort(1)).isTrue();
    assertThat(live.abort(1)).isFalse();
    assertThat(live.status().get(0).kvUsedBlocks()).isZero();
    assertThat(live.status().get(0).running()).isZero();
    live.advanceTo(10_000_000);
    assertThat(t.seen.size()).isLessThan(1000);
    assertThat(live.end().overall().toString()).isNotEmpty();
  }

  @Test
  void refusesArrivalsInThePastAndUseAfterEnd() {
    LiveSimulation live = builder(1).buildLive();
    live.advanceTo(1000);
    assertThatThrownBy(() -> live.submit(TestRequests.req(1, 999, 10, 2)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("before the current simulation time");
    assertThatThrownBy(() -> live.advanceTo(10)).isInstanceOf(IllegalArgumentException.class);
    live.end();
    assertThatThrownBy(() -> live.advanceTo(2000)).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> builder(1).source(RequestSource.of(List.of())).buildLive())
        .isInstanceOf(IllegalArgumentException.class);
  }
}
