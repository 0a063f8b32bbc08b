package io.blis.engine;

import io.blis.engine.result.MetricsSummary;
import io.blis.engine.result.RequestRecord;
import io.blis.engine.result.SimulationResult;
import static io.blis.engine.TestRequests.concat;
import static io.blis.engine.TestRequests.req;
import static io.blis.engine.TestRequests.tokens;
import static io.blis.engine.TestRequests.withStage;
import static io.blis.engine.TestRequests.withTimeout;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.blis.workload.RequestOutcome;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Small scenarios whose results are computed by hand. */
class EngineScenarioTest {

  private static SimulationResult run(LinearTestModel model, List<RequestSpec> reqs,
      Simulation.Builder extra) {
    return extra.latencyModel(model).source(RequestSource.of(reqs)).recordRequests(true)
        .build().run();
  }

  private static RequestRecord only(SimulationResult r, long id) {
    return r.requests().stream().filter(x -> x.id() == id).findFirst().orElseThrow();
  }

  @Test
  void singleRequestTimelineMatchesHandComputation() {
    // queue 50, scheduling 7, per output token 3, every step 1000 us
    LinearTestModel m = new LinearTestModel(1000, 0, 50, 7, 3, 0);
    SimulationResult res = run(m, List.of(req(1, 1000, 100, 5)), Simulation.builder());
    RequestRecord r = only(res, 1);
    // queued at 1050, prefill step ends 2050, token 1 seen at 2050 + 7 + 1*3
    assertThat(r.outcome()).isEqualTo(RequestOutcome.COMPLETED);
    assertThat(r.schedulingDelayUs()).isEqualTo(50);
    assertThat(r.ttftUs()).isEqualTo(2060 - 1000);
    // 4 decode steps end at 3050..6050; token 5 seen at 6050 + 7 + 5*3
    assertThat(r.e2eUs()).isEqualTo(6072 - 1000);
    assertThat(r.outputTokens()).isEqualTo(5);
    MetricsSummary o = res.overall();
    assertThat(o.itl().count()).isEqualTo(4);
    assertThat(o.itl().meanUs()).isEqualTo(1003.0);
    assertThat(o.e2e().p99Us()).isEqualTo(5072.0);
    assertThat(res.engine().steps()).isEqualTo(5);
    assertThat(res.simulatedDurationUs()).isEqualTo(6072);
    assertThat(o.durationUs()).isEqualTo(6072 - 1000);
    assertThat(o.outputTokensPerS()).isEqualTo(5 / 0.005072);
  }

  @Test
  void asyncSchedulingAdmitsARequestQueuedMidStepOneStepLater() {
    // Every step 1000 us. Request 1 arrives at 0 and decodes for a while; request 2 joins the
    // queue at 1500, during the step that started at 1000.
    List<RequestSpec> reqs = List.of(req(1, 0, 10, 10), req(2, 1500, 10, 2));
    SimulationResult sync = run(LinearTestModel.constant(1000), reqs,
        Simulation.builder().limits(EngineLimits.defaults().withAsyncScheduling(false)));
    SimulationResult async = run(LinearTestModel.constant(1000), reqs,
        Simulation.builder().limits(EngineLimits.defaults()));
    // Synchronous: formed at 2000, prefill step 2000-3000, first token at 3000.
    assertThat(only(sync, 2).schedulingDelayUs()).isEqualTo(500);
    assertThat(only(sync, 2).ttftUs()).isEqualTo(1500);
    // Async: the batch starting at 2000 was formed at 1000, before request 2 was queued, so it
    // joins the step starting at 3000 and sees its first token at 4000.
    assertThat(only(async, 2).schedulingDelayUs()).isEqualTo(1500);
    assertThat(only(async, 2).ttftUs()).isEqualTo(2500);
    assertThat(only(async, 2).e2eUs()).isEqualTo(3500);
    // Request 1 continues every step either way.
    assertThat(only(async, 1).e2eUs()).isEqualTo(only(sync, 1).e2eUs()).isEqualTo(10_000);
  }

  @Test
  void asyncEngineThatWouldIdleSchedulesAWaitingRequestAtOnce() {
    // Request 1 finishes at 1000 (one token); request 2 queued at 500 during that step. Nothing
    // else runs at 1000, so an idle engine schedules request 2 immediately.
    List<RequestSpec> reqs = List.of(req(1, 0, 10, 1), req(2, 500, 10, 1));
    SimulationResult async = run(LinearTestModel.constant(1000), reqs, Simulation.builder());
    assertThat(only(async, 2).ttftUs()).isEqualTo(1500);
  }

  @Test
  void singleOutputTokenRequestEndsWithItsPrefillStep() {
    SimulationResult res = run(LinearTestModel.constant(400), List.of(req(1, 0, 30, 1)),
        Simulation.builder());
    assertThat(only(res, 1).ttftUs()).isEqualTo(400);
    assertThat(only(res, 1).e2eUs()).isEqualTo(400);
    assertThat(res.overall().itl().count()).isZero();
  }

  @Test
  void chunkedPrefillTakesCeilOfPromptOverBudgetSteps() {
    // 5000-token prompt, budget 2048: chunks 2048, 2048, 904, then one decode step
    LinearTestModel m = new LinearTestModel(100, 1, 0, 0, 0, 0);
    List<Long> stepUs = new ArrayList<>();
    List<Integer> tokens = new ArrayList<>();
    SimulationResult res = run(m, List.of(req(1, 0, 5000, 2)), Simulation.builder()
        .stepObserver((t, dt, batch, running, w, pool) -> {
          stepUs.add(dt);
          tokens.add(batch.totalNewTokens());
        }));
    assertThat(tokens).containsExactly(2048, 2048, 904, 1);
    assertThat(stepUs).containsExactly(2148L, 2148L, 1004L, 101L);
    assertThat(only(res, 1).ttftUs()).isEqualTo(2148 + 2148 + 1004);
    assertThat(only(res, 1).e2eUs()).isEqualTo(2148 + 2148 + 1004 + 101);
  }

  @Test
  void longPrefillThresholdCapsChunks() {
    List<Integer> tokens = new ArrayList<>();
    run(LinearTestModel.constant(10), List.of(req(1, 0, 1000, 1)), Simulation.builder()
        .limits(new EngineLimits(256, 2048, 300, 0))
        .stepObserver((t, dt, batch, running, w, pool) -> tokens.add(batch.totalNewTokens())));
    assertThat(tokens).containsExactly(300, 300, 300, 100);
  }

  @Test
  void sharedPrefixIsServedFromTheCache() {
    int[] prefix = tokens(7, 64);
    RequestSpec a = RequestSpec.simple(1, 0, concat(prefix, tokens(1000, 10)), 2);
    RequestSpec b = RequestSpec.simple(2, 50_000, concat(prefix, tokens(2000, 10)), 2);
    // the same prompt again: capped so its last token is computed: 3 of 4 full blocks
    RequestSpec c = RequestSpec.simple(3, 100_000, prefix, 2);
    List<Integer> firstStepTokens = new ArrayList<>();
    SimulationResult res = run(LinearTestModel.constant(1000), List.of(a, b, c),
        Simulation.builder().stepObserver((t, dt, batch, running, w, pool) -> {
          if (t == 50_000 || t == 100_000) {
            firstStepTokens.add(batch.totalNewTokens());
          }
        }));
    assertThat(only(res, 1).cachedPromptTokens()).isZero();
    assertThat(only(res, 2).cachedPromptTokens()).isEqualTo(64);
    assertThat(only(res, 3).cachedPromptTokens()).isEqualTo(48);
    assertThat(firstStepTokens).containsExactly(10, 16);
    assertThat(res.overall().kvHitRate()).isEqualTo((64.0 + 48) / (74 + 74 + 64));
    assertThat(res.engine().tokenHitRate()).isEqualTo((64.0 + 48) / (74 + 74 + 64));
  }

  @Test
  void tooSmallCacheForcesPreemptionAndEverythingCompletes() {
    // 10 blocks of 16 tokens; each request needs ceil((40 + 40 - 1) / 16) = 5 blocks at the end
    List<RequestSpec> reqs = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      reqs.add(req(i + 1, 0, 40, 40));
    }
    LinearTestModel m = new LinearTestModel(100, 0, 0, 0, 0, 25);
    SimulationResult res = run(m, reqs, Simulation.builder().totalKvBlocks(10));
    assertThat(res.overall().completedRequests()).isEqualTo(4);
    assertThat(res.engine().preemptions()).isPositive();
    assertThat(res.overall().preemptions()).isEqualTo(res.engine().preemptions());
    assertThat(res.requests()).allSatisfy(r -> assertThat(r.outputTokens()).isEqualTo(40));
    RequestRecord preempted = res.requests().stream().filter(r -> r.preemptions() > 0)
        .findFirst().orElseThrow();
    assertThat(preempted.e2eUs()).isGreaterThan(40 * 100);
  }

  @Test
  void unservableRequestsAreRejectedWithTheirReasons() {
    List<RequestSpec> reqs = List.of(
        req(1, 0, 100, 5), // prompt >= max-model-len
        req(2, 10, 60, 50), // 110 > max-model-len
        req(3, 20, 60, 10), // fits max-model-len, but 69 tokens need 5 blocks of 16 > 4
        req(4, 30, 20, 5));
    SimulationResult res = run(LinearTestModel.constant(100), reqs, Simulation.builder()
        .limits(new EngineLimits(256, 2048, 0, 100)).totalKvBlocks(4));
    assertThat(only(res, 1).rejectReason()).isEqualTo(Engine.REJECT_PROMPT_TOO_LONG);
    assertThat(only(res, 2).rejectReason()).isEqualTo(Engine.REJECT_TOTAL_TOO_LONG);
    assertThat(only(res, 3).rejectReason()).isEqualTo(Engine.REJECT_KV_CAPACITY);
    assertThat(only(res, 4).outcome()).isEqualTo(RequestOutcome.COMPLETED);
    MetricsSummary o = res.overall();
    assertThat(o.rejectedRequests()).isEqualTo(3);
    assertThat(o.rejectedByReason()).containsEntry(Engine.REJECT_PROMPT_TOO_LONG, 1L)
        .containsEntry(Engine.REJECT_TOTAL_TOO_LONG, 1L)
        .containsEntry(Engine.REJECT_KV_CAPACITY, 1L);
    assertThat(o.completedRequests()).isEqualTo(1);
    assertThat(res.toJson()).contains("\"prompt_exceeds_max_model_len\" : 1");
  }

  @Test
  void timeoutAbortsTheRequestAndFreesItsBlocks() {
    RequestSpec slow = withTimeout(req(1, 0, 64, 100), 2500);
    RequestSpec later = req(2, 10_000, 32, 2);
    List<Integer> usedAtLaterStep = new ArrayList<>();
    SimulationResult res = run(LinearTestModel.constant(1000), List.of(slow, later),
        Simulation.builder().stepObserver((t, dt, batch, running, w, pool) -> {
          if (t >= 10_000) {
            usedAtLaterStep.add(pool.usedBlocks());
          }
        }));
    RequestRecord r = only(res, 1);
    assertThat(r.outcome()).isEqualTo(RequestOutcome.TIMED_OUT);
    assertThat(r.e2eUs()).isEqualTo(2500);
    assertThat(r.outputTokens()).isEqualTo(2); // steps ending at 1000 and 2000
    assertThat(only(res, 2).outcome()).isEqualTo(RequestOutcome.COMPLETED);
    assertThat(usedAtLaterStep.get(0)).isEqualTo(2); // only request 2's blocks
    assertThat(res.overall().timedOutRequests()).isEqualTo(1);
    assertThat(res.overall().e2e().count()).isEqualTo(1); // timeouts are not in latency stats
  }

  @Test
  void theDeadlineOfARequestThatCompletedDoesNotLengthenTheRun() {
    // a deadline an hour away is never reached: the run ends with its last token, as without one
    SimulationResult with = run(LinearTestModel.constant(1000), List.of(withTimeout(req(1, 0, 10, 3), 3_600_000_000L)),
        Simulation.builder());
    SimulationResult without = run(LinearTestModel.constant(1000), List.of(req(1, 0, 10, 3)), Simulation.builder());
    assertThat(only(with, 1).outcome()).isEqualTo(RequestOutcome.COMPLETED);
    assertThat(with.simulatedDurationUs()).isEqualTo(without.simulatedDurationUs()).isLessThan(10_000);
  }

  @Test
  void requestFinishingAfterItsDeadlineCountsAsTimedOut() {
    // 3 steps of 1000 us; last token seen at 3000 + 3 * 100 = 3300 > deadline 3100
    LinearTestModel m = new LinearTestModel(1000, 0, 0, 0, 100, 0);
    SimulationResult res = run(m, List.of(withTimeout(req(1, 0, 10, 3), 3100)),
        Simulation.builder());
    assertThat(only(res, 1).outcome()).isEqualTo(RequestOutcome.TIMED_OUT);
    assertThat(only(res, 1).e2eUs()).isEqualTo(3100);
  }

  @Test
  void stageBarrierSourceIsAskedAgainAfterEveryFinish() {
    // stage 0: two requests; stage 1 starts 500 us after the last stage-0 request ended
    RequestSource source = new RequestSource() {
      int sent;
      int finished;
      long lastEnd;

      @Override
      public RequestSpec next() {
        if (sent < 2) {
          sent++;
          return withStage(req(sent, sent * 10L, 20, 3), 0);
        }
        if (sent < 4 && finished >= 2) {
          sent++;
          return withStage(req(sent, lastEnd + 500, 20, 3), 1);
        }
        return null;
      }

      @Override
      public boolean exhausted() {
        return sent >= 4;
      }

      @Override
      public List<RequestSpec> onFinished(RequestSpec request, RequestOutcome outcome, long t) {
        finished++;
        lastEnd = Math.max(lastEnd, t);
        return List.of();
      }
    };
    SimulationResult res = Simulation.builder().latencyModel(LinearTestModel.constant(100))
        .source(source).recordRequests(true).build().run();
    assertThat(res.overall().completedRequests()).isEqualTo(4);
    assertThat(res.stages()).extracting(MetricsSummary::stage).containsExactly(0, 1);
    long stage0End = res.requests().stream().filter(r -> r.stage() == 0)
        .mapToLong(r -> r.arrivalUs() + r.e2eUs()).max().orElseThrow();
    assertThat(res.requests().stream().filter(r -> r.stage() == 1))
        .allSatisfy(r -> assertThat(r.arrivalUs()).isEqualTo(stage0End + 500));
  }

  @Test
  void closedLoopFollowUpsAreInjected() {
    RequestSource source = new RequestSource() {
      boolean sent;

      @Override
      public RequestSpec next() {
        if (sent) {
          return null;
        }
        sent = true;
        return req(1, 0, 10, 2);
      }

      @Override
      public List<RequestSpec> onFinished(RequestSpec request, RequestOutcome outcome, long t) {
        return request.id() < 3 ? List.of(req(request.id() + 1, t + 1000, 10, 2)) : List.of();
      }
    };
    SimulationResult res = Simulation.builder().latencyModel(LinearTestModel.constant(100))
        .source(source).recordRequests(true).build().run();
    assertThat(res.requests()).extracting(RequestRecord::id).containsExactly(1L, 2L, 3L);
    assertThat(res.requests()).extracting(RequestRecord::arrivalUs)
        .containsExactly(0L, 1200L, 2400L);
  }

  @Test
  void sourceGoingBackInTimeIsReportedClearly() {
    List<RequestSpec> reqs = List.of(req(1, 1000, 10, 1), req(2, 10, 10, 1));
    assertThatThrownBy(() -> run(LinearTestModel.constant(10), reqs, Simulation.builder()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("request 2 arrives at 10 us, before the current simulation time");
  }

  @Test
  void maxNumSeqsQueuesTheRest() {
    List<RequestSpec> reqs = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      reqs.add(req(i + 1, 0, 10, 3));
    }
    SimulationResult res = run(LinearTestModel.constant(100), reqs,
        Simulation.builder().limits(new EngineLimits(2, 2048, 0, 0)));
    // pairs: (1,2) steps 0-300, (3,4) 300-600, (5) 600-900
    assertThat(res.requests()).extracting(RequestRecord::e2eUs)
        .containsExactly(300L, 300L, 600L, 600L, 900L);
    assertThat(res.requests()).extracting(RequestRecord::schedulingDelayUs)
        .containsExactly(0L, 0L, 300L, 300L, 600L);
  }

  @Test
  void horizonCutsTheRunAndCountsLeftovers() {
    List<RequestSpec> reqs = List.of(req(1, 0, 10, 50), req(2, 100, 10, 50), req(3, 99_999, 10, 5));
    SimulationResult res = run(LinearTestModel.constant(100), reqs,
        Simulation.builder().horizonUs(1000));
    MetricsSummary o = res.overall();
    assertThat(o.injectedRequests()).isEqualTo(2);
    assertThat(o.stillRunning()).isEqualTo(2);
    assertThat(o.completedRequests()).isZero();
    assertThat(res.simulatedDurationUs()).isEqualTo(1000);
  }

  @Test
  void cpuTierReloadsAnEvictedPrefixInsteadOfRecomputingIt() {
    int[] prompt = tokens(5, 64);
    RequestSpec a = RequestSpec.simple(1, 0, prompt, 2);
    RequestSpec b = RequestSpec.simple(2, 100_000, tokens(900, 64), 2); // evicts a's blocks
    RequestSpec c = RequestSpec.simple(3, 200_000, prompt, 2);
    LinearTestModel m = new LinearTestModel(100, 10, 0, 0, 0, 0);
    SimulationResult withCpu = run(m, List.of(a, b, c),
        Simulation.builder().totalKvBlocks(5).cpuKvTier(100, 100));
    SimulationResult gpuOnly = run(m, List.of(a, b, c), Simulation.builder().totalKvBlocks(5));
    // GPU only: c recomputes 64 tokens: step 100 + 640
    assertThat(only(gpuOnly, 3).cachedPromptTokens()).isZero();
    assertThat(only(gpuOnly, 3).ttftUs()).isEqualTo(740);
    // CPU tier: 3 blocks (capped below the last prompt token) load in 300 us, then 16 tokens
    assertThat(only(withCpu, 3).cachedPromptTokens()).isEqualTo(48);
    assertThat(only(withCpu, 3).ttftUs()).isEqualTo(300 + 100 + 160);
    assertThat(only(withCpu, 3).schedulingDelayUs()).isEqualTo(300);
    assertThat(withCpu.engine().cpuLoadedBlocks()).isEqualTo(3);
    assertThat(withCpu.toJson()).contains("\"kv_cpu_loaded_blocks\" : 3");
  }
}
