package io.blis.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.blis.api.Phase;
import io.blis.api.RequestView;
import io.blis.workload.RequestOutcome;
import org.junit.jupiter.api.Test;

/** Go BLIS's post-hoc saturation verdicts, by hand. */
class PostHocSaturationTest {

  private static RequestView request(long id, long arrivalUs) {
    return new RequestView() {
      public long id() {
        return id;
      }

      public long arrivalTimeUs() {
        return arrivalUs;
      }

      public int inputTokens() {
        return 1;
      }

      public int progressIndex() {
        return 0;
      }

      public int newTokens() {
        return 0;
      }

      public int generatedTokens() {
        return 0;
      }

      public Phase phase() {
        return Phase.DECODE;
      }

      public int priority() {
        return 1;
      }

      public String sloClass() {
        return "standard";
      }

      public String tenant() {
        return "";
      }
    };
  }

  /** 25 arrivals a second apart; request i completes after (i + 1) x 100 ms, all but the last {@code lost}. */
  private static PostHocSaturation run(String detector, double thresholdMs, int lost) {
    PostHocSaturation p = new PostHocSaturation(detector, thresholdMs, null);
    for (int i = 0; i < 25; i++) {
      RequestView r = request(i, i * 1_000_000L);
      p.onArrived(r, r.arrivalTimeUs());
      if (i < 25 - lost) {
        p.onFinished(0, r, RequestOutcome.COMPLETED, 0, r.arrivalTimeUs() + (i + 1) * 100_000L);
      }
    }
    return p;
  }

  @Test
  void aRisingLatencyIsOverloaded() {
    ObjectNode v = run("composite", 0, 0).verdict();
    // 25 latencies 100..2500 ms in completion order: first 12 average 650, last 13 average 1,900:
    // trend 1,900/650 - 1 = 1.92, at most 1; quarters of 6 rise; noise floor 1/5
    assertThat(v.get("level").asText()).isEqualTo("OVERLOADED");
    assertThat(v.get("score").asDouble()).isEqualTo(1.0);
    assertThat(v.at("/signals/rate_deficit").asDouble()).isZero();
    assertThat(v.at("/signals/noise_floor").asDouble()).isEqualTo(0.2);
    assertThat(v.at("/signals/quartile_monotone").asDouble()).isEqualTo(1.0);
    assertThat(v.get("confidence").asDouble()).isEqualTo(1.0);
  }

  @Test
  void fewCompletionsAreADeficitWithoutATrend() {
    ObjectNode v = run("composite", 0, 10).verdict();
    // 15 of 25 completed: deficit 0.4 above the 0.2 floor; under 20 completions no trend counts
    assertThat(v.get("level").asText()).isEqualTo("BACKLOGGED");
    assertThat(v.get("score").asDouble()).isEqualTo(0.4);
    assertThat(v.at("/signals/latency_trend").asDouble()).isZero();
  }

  @Test
  void theThresholdComparesTheMeanE2e() {
    // mean E2E 1,300 ms
    ObjectNode stable = run("threshold", 2600, 0).verdict();
    assertThat(stable.get("level").asText()).isEqualTo("STABLE");
    assertThat(stable.get("score").asDouble()).isEqualTo(0.25);
    assertThat(stable.at("/signals/mean_e2e").asDouble()).isEqualTo(1300.0);
    assertThat(stable.get("confidence").asDouble()).isEqualTo(0.803884); // 1 - 1/sqrt(26)
    ObjectNode over = run("threshold", 1000, 0).verdict();
    assertThat(over.get("level").asText()).isEqualTo("OVERLOADED");
    assertThat(over.get("score").asDouble()).isEqualTo(0.825); // 0.75 + 0.3 / 4
  }
}
