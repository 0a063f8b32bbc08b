package io.blis.engine.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.blis.workload.RequestOutcome;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ScopeMetricsTest {

  private record Done(long e2eUs, long ttftUs, long[] itl) implements CompletedRequest {
    @Override
    public int inputTokens() {
      return 100;
    }

    @Override
    public int outputTokens() {
      return itl.length + 1;
    }

    @Override
    public int preemptions() {
      return 0;
    }

    @Override
    public int cachedPromptTokens() {
      return 0;
    }

    @Override
    public long schedulingDelayUs() {
      return 10;
    }

    @Override
    public int itlCount() {
      return itl.length;
    }

    @Override
    public long itlUs(int i) {
      return itl[i];
    }
  }

  private static Done request(SplittableRandom rnd) {
    long[] itl = new long[1 + rnd.nextInt(200)];
    for (int i = 0; i < itl.length; i++) {
      itl[i] = 8_000 + rnd.nextInt(3_000) + (rnd.nextInt(500) == 0 ? 400_000 : 0);
    }
    return new Done(1_000_000 + rnd.nextInt(1_000_000), 50_000 + rnd.nextInt(50_000), itl);
  }

  /**
   * Two stages: the first shares the whole run's samples until the second appears, then keeps a
   * copy and its own. Every summary equals that of scopes that never shared, in both stores, and
   * whether the shared samples were still listed or already counted when the copy was made.
   */
  @ParameterizedTest
  @ValueSource(strings = {"exact-early", "exact-late", "streaming"})
  void aSharedStageSummarizesAsItsOwnSamplesWould(String kind) {
    boolean streaming = kind.equals("streaming");
    int firstStageRequests = kind.equals("exact-early") ? 20 : 3_000; // 2,000 samples or 300,000
    SplittableRandom rnd = new SplittableRandom(11);
    ScopeMetrics whole = new ScopeMetrics(-1, streaming);
    ScopeMetrics first = new ScopeMetrics(0, streaming);
    ScopeMetrics second = new ScopeMetrics(1, streaming);
    ScopeMetrics firstAlone = new ScopeMetrics(0, streaming);
    ScopeMetrics secondAlone = new ScopeMetrics(1, streaming);
    first.shareItl(whole);
    for (int i = 0; i < firstStageRequests; i++) {
      Done d = request(rnd);
      for (ScopeMetrics s : new ScopeMetrics[] {whole, first, firstAlone}) {
        s.onFinished(d, RequestOutcome.COMPLETED, i, "", true);
      }
    }
    assertThat(first.summarize()).isEqualTo(firstAlone.summarize());
    first.keepOwnItl(); // the second stage appears
    for (int i = 0; i < 2_000; i++) {
      Done d = request(rnd);
      boolean inFirst = i % 3 == 0;
      whole.onFinished(d, RequestOutcome.COMPLETED, i, "", true);
      (inFirst ? first : second).onFinished(d, RequestOutcome.COMPLETED, i, "", true);
      (inFirst ? firstAlone : secondAlone).onFinished(d, RequestOutcome.COMPLETED, i, "", true);
    }
    assertThat(first.summarize()).isEqualTo(firstAlone.summarize());
    assertThat(second.summarize()).isEqualTo(secondAlone.summarize());
    assertThat(first.summarize().itl()).isNotEqualTo(whole.summarize().itl());
  }

  @Test
  void aScopeWithoutSamplesCannotShare() {
    ScopeMetrics breakdown = new ScopeMetrics(-1, false, false);
    assertThatThrownBy(() -> breakdown.shareItl(new ScopeMetrics(-1, false)))
        .isInstanceOf(IllegalStateException.class);
  }
}
