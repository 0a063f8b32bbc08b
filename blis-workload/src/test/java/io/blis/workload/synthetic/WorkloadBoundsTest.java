package io.blis.workload.synthetic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.blis.workload.PromptTokens;
import io.blis.workload.RequestOutcome;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import io.blis.workload.TestSupport;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The named bounds of the library: {@link RequestSpec#MAX_TOKENS} on every length, {@link
 * RequestSpec#MAX_TIME_US} on times and {@link ArrivalProcess#MIN_RATE_RPS} on rates. Beyond them
 * the library fails with a message, never with an OutOfMemoryError or an overflowed time.
 */
class WorkloadBoundsTest {

  static final LengthSpec TEN = LengthSpec.fixed(10);

  @Test
  void lengthDistributionsAreBoundedByMaxTokens() {
    int max = RequestSpec.MAX_TOKENS;
    assertThat(new LengthSpec(100, 10, 1, max).max()).isEqualTo(max);
    assertThatThrownBy(() -> new LengthSpec(100, 10, 1, max + 1))
        .hasMessage("gaussian max must be at most 10000000 tokens (the most tokens a request may"
            + " have), got 10000001");
    assertThatThrownBy(() -> new LengthSpec(100, 10, max + 1, max + 2))
        .hasMessage("gaussian min must be in [1, 10000000] tokens, got 10000001");
    assertThatThrownBy(() -> new LengthDistribution.Exponential(5, 1, Integer.MAX_VALUE))
        .hasMessageContaining("exponential max must be at most 10000000 tokens");
    assertThatThrownBy(() -> new LengthDistribution.LogNormal(5, 1, 1, Integer.MAX_VALUE))
        .hasMessageContaining("lognormal max must be at most 10000000 tokens");
    assertThatThrownBy(() -> new LengthDistribution.Constant(2_000_000_000))
        .hasMessageContaining("at most 10000000");
    assertThatThrownBy(() -> new LengthDistribution.Empirical(new int[] {5, max + 1}, new double[] {1, 1}))
        .hasMessageContaining("empirical length must be in [1, 10000000] tokens");
  }

  @Test
  void promptsAndRequestsAreBoundedByMaxTokens() {
    assertThatThrownBy(() -> PromptTokens.build(1, "", 0, 1, 2_000_000_000))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("a prompt of 2000000000 tokens is longer than the 10000000 a request may have");
    assertThatThrownBy(() -> RequestSpec.simple(1, 0, new int[] {5}, RequestSpec.MAX_TOKENS + 1))
        .hasMessageContaining("output length must be in [1, 10000000] tokens");
    assertThatThrownBy(() -> RequestSpec.simple(1, RequestSpec.MAX_TIME_US + 1, new int[] {5}, 1))
        .hasMessageContaining("beyond the latest simulated time");
    assertThatThrownBy(() -> new RequestSpec(1, 0, new int[] {5}, 1, "standard", "", "", 0, -1, 0,
        Long.MAX_VALUE, 0)).hasMessageContaining("timeout must be in [0, 31536000000000] us (365 days)");
    assertThatThrownBy(() -> SyntheticWorkload.poissonGaussian(1, 1, TEN, TEN, RequestSpec.MAX_TOKENS, 1))
        .hasMessage("prefix tokens must be in [0, 9999999], got 10000000");
  }

  @Test
  void aPrefixPlusContentBeyondMaxTokensFailsWhenTheRequestIsBuilt() {
    LengthSpec huge = LengthSpec.fixed(RequestSpec.MAX_TOKENS);
    try (RequestSource s = SyntheticWorkload.poissonGaussian(1, 1, huge, TEN, 5, 1)) {
      assertThatThrownBy(s::next).isInstanceOf(IllegalArgumentException.class)
          .hasMessage("client default: a prompt of 10000005 tokens (prefix 5 + 10000000) is longer"
              + " than the 10000000 a request may have; lower the input max or the prefix length");
    }
  }

  @Test
  void anAccumulatedSessionContextBeyondMaxTokensIsANamedError() {
    ClientSpec c = new ClientSpec("chat", "", "standard", new ArrivalProcess.Poisson(1),
        LengthSpec.fixed(4_000_000), LengthSpec.fixed(1_000_000), "", 0, 0,
        new SessionSpec(5, 0, true), List.of());
    try (RequestSource s = SyntheticWorkload.of(List.of(c), 1, 1, Long.MAX_VALUE)) {
      RequestSpec r = s.next();
      r = s.onFinished(r, RequestOutcome.COMPLETED, 2_000_000).get(0);
      assertThat(r.inputTokens()).isEqualTo(9_000_000);
      RequestSpec second = r;
      assertThatThrownBy(() -> s.onFinished(second, RequestOutcome.COMPLETED, 3_000_000))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("client chat: round 2 of session 0 would have a prompt of 14000000 tokens (the"
              + " accumulated context), longer than the 10000000 a request may have; use fewer"
              + " session rounds or shorter lengths");
    }
  }

  @Test
  void ratesAreBoundedBelowSoTheFirstGapFitsInSimulatedTime() {
    assertThat(ArrivalProcess.MIN_RATE_RPS * RequestSpec.MAX_TIME_US / 1e6).isEqualTo(1.0);
    for (ArrivalProcess ok : List.<ArrivalProcess>of(new ArrivalProcess.Poisson(ArrivalProcess.MIN_RATE_RPS),
        new ArrivalProcess.Constant(1e-7))) {
      assertThat(ok.rateRps()).isPositive();
    }
    assertThatThrownBy(() -> new ArrivalProcess.Poisson(1e-300))
        .hasMessage("poisson rate must be at least 3.17e-08 requests per second (one per 365 days,"
            + " the latest simulated time), got 1.0E-300");
    assertThatThrownBy(() -> new ArrivalProcess.Gamma(1e-9, 2)).hasMessageContaining("gamma rate must be at least");
    assertThatThrownBy(() -> new ArrivalProcess.Weibull(1e-9, 2)).hasMessageContaining("weibull rate must be at least");
    assertThatThrownBy(() -> new ArrivalProcess.Constant(1e-9)).hasMessageContaining("constant rate must be at least");
    assertThatThrownBy(() -> new ArrivalProcess.Gamma(1, 1e-200))
        .hasMessage("gamma cv 1.0E-200 is outside the supported range [0.01, 100.0]");
  }

  @Test
  void aWorkloadThatCanSendNothingIsRefusedWhenItIsCreated() {
    ClientSpec c = ClientSpec.simple("a", new ArrivalProcess.Constant(1), TEN, TEN);
    assertThatThrownBy(() -> SyntheticWorkload.of(List.of(c), 1, 10, 500_000))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("the workload sends no request: every client's first arrival falls after the"
            + " horizon (0.5 s) or after its last lifecycle window");
    // Asking for no requests is not an error: the caller said so.
    try (RequestSource none = SyntheticWorkload.of(List.of(c), 1, 0, 500_000)) {
      assertThat(none.next()).isNull();
    }
    try (RequestSource some = SyntheticWorkload.of(List.of(c), 1, 10, 2_500_000)) {
      assertThat(TestSupport.drain(some)).extracting(RequestSpec::arrivalTimeUs)
          .containsExactly(1_000_000L, 2_000_000L);
    }
  }

  @Test
  void arrivalsBeyondTheLatestSimulatedTimeAreAnErrorOnlyWhenNeeded() {
    // One request per 200 days: the first fits, the second (400 days) does not.
    double rate = 1 / (200 * 86_400.0);
    ClientSpec c = ClientSpec.simple("slow", new ArrivalProcess.Constant(rate), TEN, TEN);
    try (RequestSource one = SyntheticWorkload.of(List.of(c), 1, 1, Long.MAX_VALUE)) {
      assertThat(TestSupport.drain(one)).hasSize(1);
    }
    try (RequestSource two = SyntheticWorkload.of(List.of(c), 1, 2, Long.MAX_VALUE)) {
      assertThat(two.next().arrivalTimeUs()).isEqualTo(200L * 86_400 * 1_000_000);
      assertThatThrownBy(two::next).isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("client slow: a request would arrive after the latest simulated"
              + " time, 365 days");
    }
    // A horizon before the limit ends the workload there instead.
    try (RequestSource bounded = SyntheticWorkload.of(List.of(c), 1, 2, 300L * 86_400 * 1_000_000)) {
      assertThat(TestSupport.drain(bounded)).hasSize(1);
    }
    // Active from day 300: its first request would come on day 500.
    ClientSpec late = new ClientSpec("late", "", "standard", new ArrivalProcess.Constant(rate), TEN,
        TEN, "", 0, 0, SessionSpec.NONE,
        List.of(new ActiveWindow(300L * 86_400 * 1_000_000, Long.MAX_VALUE)));
    assertThatThrownBy(() -> SyntheticWorkload.of(List.of(late), 1, 1, Long.MAX_VALUE))
        .hasMessageStartingWith("client late: a request would arrive after the latest simulated time");
  }
}
