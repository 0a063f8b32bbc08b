package io.blis.engine;

import static io.blis.engine.TestRequests.req;
import static org.assertj.core.api.Assertions.assertThat;

import io.blis.engine.result.SessionReport;
import io.blis.engine.result.SimulationResult;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Multi-turn sessions in the result: first-round and later-round TTFT, and each session's span. */
class SessionMetricsTest {

  private static final long MS = 1000;

  /** A request of {@code round} of session {@code session}: 20 prompt tokens, 10 output tokens. */
  private static RequestSpec turn(long id, long arrivalUs, long session, int round) {
    RequestSpec r = req(id, arrivalUs, 20, 10);
    return new RequestSpec(r.id(), r.arrivalTimeUs(), r.promptTokens(), r.outputTokens(), r.sloClass(), r.tenant(),
        r.prefixGroup(), r.prefixLength(), session, round, r.timeoutUs(), r.stage());
  }

  private static SimulationResult run(List<RequestSpec> reqs) {
    // every step 1 ms: a request alone has its first token 1 ms after it arrives and ends 10 ms after
    return Simulation.builder().instances(1).latencyModels(i -> LinearTestModel.constant(1000))
        .source(RequestSource.of(reqs)).build().run();
  }

  @Test
  void roundsSplitTheTtftAndASessionLastsFromItsFirstArrivalToItsLastCompletion() {
    SimulationResult r = run(List.of(
        turn(1, 0, 7, 0), // session 7: round 0 at 0, done at 10 ms
        turn(2, 100 * MS, 7, 1), // round 1 at 100 ms, done at 110 ms
        turn(3, 200 * MS, 7, 2), // round 2 at 200 ms, done at 210 ms
        turn(4, 300 * MS, 8, 1), // session 8 without its round 0: no span
        req(5, 400 * MS, 20, 10))); // no session
    SessionReport s = r.sessions().orElseThrow();
    assertThat(s.sessions()).isEqualTo(2);
    assertThat(s.ttftCold().count()).isEqualTo(1);
    assertThat(s.ttftCold().meanUs()).isEqualTo(1 * MS);
    assertThat(s.ttftWarm().count()).isEqualTo(3);
    assertThat(s.ttftWarm().meanUs()).isEqualTo(1 * MS);
    assertThat(s.duration().count()).isEqualTo(1);
    assertThat(s.duration().meanUs()).isEqualTo(210 * MS);
    assertThat(r.toJson().replaceAll("\\s", "")).contains("\"sessions\":{\"sessions\":2,\"ttft_cold_ms\":{\"count\":1,"
        + "\"mean\":1.0000").contains("\"duration_ms\":{\"count\":1,\"mean\":210.0000");
  }

  @Test
  void aRunWithoutSessionsHasNoSessionSection() {
    SimulationResult r = run(List.of(req(1, 0, 20, 10), req(2, 50 * MS, 20, 10)));
    assertThat(r.sessions()).isEmpty();
    assertThat(r.toJson()).doesNotContain("\"sessions\"");
  }
}
