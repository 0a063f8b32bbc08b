package io.blis.cli;

import static io.blis.cli.BlisCliTest.blis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

/** {@code run --concurrency N --think-time-ms T}: Go BLIS's closed-loop users. */
class ClosedLoopUsersCliTest {

  /**
   * Little's law for closed-loop users: N users each cycling through a request (its end-to-end
   * time) and a think time complete N / (mean E2E + think) requests a second, here within 3%.
   */
  @Test
  void usersCompleteAtTheRateTheirCycleAllows() throws Exception {
    BlisCliTest.Outcome o = blis("run", "--model", "qwen/qwen3-14b", "--concurrency", "16", "--think-time-ms", "500",
        "--num-requests", "800");
    assertThat(o.code()).as(o.err()).isZero();
    JsonNode overall = new ObjectMapper().readTree(o.out()).get("overall");
    assertThat(overall.get("completed_requests").asLong()).isEqualTo(800);
    double cycleS = overall.at("/e2e_ms/mean").asDouble() / 1000 + 0.5;
    assertThat(overall.get("requests_per_s").asDouble()).isCloseTo(16 / cycleS, within(0.03 * 16 / cycleS));
  }

  @Test
  void usersExcludeARateAndTheThinkTimeNeedsThem() {
    BlisCliTest.Outcome both = blis("run", "--concurrency", "4", "--rate", "3");
    assertThat(both.code()).isEqualTo(2);
    assertThat(both.err()).contains("--concurrency and --rate exclude each other");
    BlisCliTest.Outcome alone = blis("run", "--think-time-ms", "100");
    assertThat(alone.code()).isEqualTo(2);
    assertThat(alone.err()).contains("--think-time-ms goes with --concurrency");
    BlisCliTest.Outcome zero = blis("run", "--concurrency", "0");
    assertThat(zero.code()).isEqualTo(2);
    assertThat(zero.err()).contains("--concurrency must be in [1, 1000000] users, got 0");
  }
}
