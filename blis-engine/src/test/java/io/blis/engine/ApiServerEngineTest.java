package io.blis.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.blis.engine.frontend.ApiServer;
import io.blis.engine.result.RequestRecord;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The API server in front of an instance: it delays what clients see and when requests enter, never the steps. */
class ApiServerEngineTest {

  private static RecordedRun run(ApiServer server, List<RequestSpec> reqs) {
    return RecordedRun.of(Simulation.builder().latencyModel(LinearTestModel.constant(1000))
        .limits(new EngineLimits(256, 8192, 0, 4096, false)).totalKvBlocks(1000).blockSizeTokens(16)
        .source(RequestSource.of(reqs)).apiServer(server));
  }

  private static List<RequestSpec> burst(int n, int output) {
    List<RequestSpec> reqs = new ArrayList<>();
    for (int i = 1; i <= n; i++) {
      reqs.add(TestRequests.req(i, 0, 16, output));
    }
    return reqs;
  }

  @Test
  void aServerSlowerThanTheStepsSetsTheGapsClientsSeeAndLeavesTheStepsAlone() {
    RecordedRun plain = run(ApiServer.NONE, burst(4, 5));
    RecordedRun slow = run(new ApiServer(0, 0, 600), burst(4, 5));
    // the engine's steps are the same: one prefill step of the four prompts, four decode steps
    assertThat(slow.steps()).extracting(StepRecord::startUs).containsExactlyElementsOf(
        plain.steps().stream().map(StepRecord::startUs).toList());
    assertThat(slow.steps()).hasSize(5);
    // without the server every gap is a step; with it, four chunks of 600 us a round: 2,400 us
    assertThat(plain.result().overall().itl().meanUs()).isEqualTo(1000.0);
    assertThat(slow.result().overall().itl().meanUs()).isEqualTo(2400.0);
    List<RequestRecord> r = slow.byId();
    // the first step ends at 1,000 us; its four chunks leave at 1,600, 2,200, 2,800 and 3,400
    assertThat(r).extracting(RequestRecord::ttftUs).containsExactly(1600L, 2200L, 2800L, 3400L);
    // the last step ends at 5,000 us behind 16 chunks already queued (the server is busy until 10,600)
    assertThat(r.get(0).e2eUs()).isEqualTo(11_200L);
    assertThat(r.get(3).e2eUs()).isEqualTo(13_000L);
  }

  @Test
  void requestsEnterTheEngineOneAfterAnotherAsTheServerTakesThemIn() {
    RecordedRun run = run(new ApiServer(500, 0, 0), burst(3, 2));
    // the first request reaches the engine at 500 us and prefills alone (the engine never idles
    // while a request waits); the others reach it at 1,000 and 1,500, and the synchronous
    // scheduler takes both into the next step, at 1,500
    assertThat(run.steps().get(0).startUs()).isEqualTo(500);
    assertThat(run.steps().get(0).prefillRequests()).isEqualTo(1);
    assertThat(run.byId().get(0).ttftUs()).isEqualTo(1500);
    assertThat(run.byId()).extracting(RequestRecord::schedulingDelayUs).containsExactly(500L, 1500L, 1500L);
  }

  @Test
  void sameInputsGiveTheSameResult() {
    ApiServer s = new ApiServer(300, 0.5, 250);
    assertThat(run(s, burst(20, 30)).byId()).isEqualTo(run(s, burst(20, 30)).byId());
  }
}
