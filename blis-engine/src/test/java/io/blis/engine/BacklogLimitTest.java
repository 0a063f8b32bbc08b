package io.blis.engine;

import static io.blis.engine.TestRequests.req;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.blis.engine.result.SimulationResult;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The backlog limit: requests arrived and not yet finished. */
class BacklogLimitTest {

  /** {@code n} requests of 10 prompt and 3 output tokens, one every {@code gapUs}. */
  private static List<RequestSpec> arrivals(int n, long gapUs) {
    List<RequestSpec> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(req(i + 1, i * gapUs, 10, 3));
    }
    return out;
  }

  private static Simulation.Builder oneAtATime(List<RequestSpec> requests) {
    // one request in the batch at a time, 100 us a step: 300 us a request
    return Simulation.builder().latencyModel(LinearTestModel.constant(100))
        .limits(new EngineLimits(1, 2048, 0, 0)).source(RequestSource.of(requests));
  }

  @Test
  void aBurstBeyondTheLimitStopsTheRunWhereItIsPassed() {
    // 20 requests at once: the 11th arrival is the one past a limit of 10
    assertThatThrownBy(() -> oneAtATime(arrivals(20, 0)).maxBacklog(10).build().run())
        .isInstanceOfSatisfying(BacklogLimitException.class, e -> {
          assertThat(e.limit()).isEqualTo(10);
          assertThat(e.atUs()).isZero();
        })
        .hasMessageContaining("more than 10 requests arrived and not yet finished at simulated time 0.000 s");
  }

  @Test
  void aBurstAtTheLimitRuns() {
    SimulationResult r = oneAtATime(arrivals(10, 0)).maxBacklog(10).build().run();
    assertThat(r.overall().completedRequests()).isEqualTo(10);
  }

  @Test
  void finishedRequestsLeaveTheBacklog() {
    // one every 400 us, each done in 300 us: never more than one at once, however many arrive
    SimulationResult r = oneAtATime(arrivals(500, 400)).maxBacklog(1).build().run();
    assertThat(r.overall().completedRequests()).isEqualTo(500);
    // one every 200 us: at 600 us the 4th arrives before the 2nd ends (arrivals go first): 3 at once
    assertThatThrownBy(() -> oneAtATime(arrivals(500, 200)).maxBacklog(2).build().run())
        .isInstanceOfSatisfying(BacklogLimitException.class, e -> assertThat(e.atUs()).isEqualTo(600));
  }

  @Test
  void theLimitIsAtLeastOne() {
    assertThatThrownBy(() -> Simulation.builder().maxBacklog(0))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least 1 request");
  }
}
