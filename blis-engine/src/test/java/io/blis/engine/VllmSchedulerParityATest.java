package io.blis.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.blis.api.LatencyModel;
import io.blis.api.RequestView;
import io.blis.engine.result.RequestRecord;
import io.blis.engine.result.SimulationResult;
import io.blis.workload.RequestOutcome;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * vLLM's own scheduler tests ({@code tests/v1/core/test_scheduler.py}, first part) re-expressed
 * as scenarios of this engine: the same requests, budgets, block size, cache size and arrival
 * order, and vLLM's expected facts checked on the engine's steps.
 *
 * <p>Mapping of vLLM's test harness: a call of {@code add_request} before the k-th {@code
 * schedule()} is an arrival during step k-1 (half a step before step k starts; every step takes
 * 1,000 us); vLLM's synchronous {@code Scheduler} is the engine with async scheduling off. vLLM's
 * helper defaults ({@code tests/v1/core/utils.py}): 16 sequences, 8,192 tokens a step, blocks of
 * 16 tokens, 10,000 blocks of which one is vLLM's null block (so 9,999 here), prompts of 10
 * tokens, 16 output tokens. vLLM's scheduler does not check {@code max_model_len} (its front end
 * does), so scenarios whose prompts exceed the helper's default length run without a limit here.
 */
class VllmSchedulerParityATest {

  static final long STEP_US = 1_000;
  static final int VLLM_DEFAULT_SEQS = 16;
  static final int VLLM_DEFAULT_BUDGET = 8192;
  static final long VLLM_DEFAULT_BLOCKS = 9_999;

  /** Steps, preemptions and the result of one run. */
  static final class Trace implements EngineListener {
    final List<StepRecord> steps = new ArrayList<>();
    /** {step id, request id} of every preemption, in order. */
    final List<long[]> preemptions = new ArrayList<>();
    SimulationResult result;

    @Override
    public void onStep(int instance, StepRecord step) {
      steps.add(step);
    }

    @Override
    public void onPreempted(int instance, RequestView request, long stepId, long timeUs) {
      preemptions.add(new long[] {stepId, request.id()});
    }

    /** The k-th step, from 1. */
    StepRecord step(int k) {
      return steps.get(k - 1);
    }

    /** The recorded requests by id. */
    List<RequestRecord> byId() {
      return result.requests().stream().sorted(Comparator.comparingLong(RequestRecord::id)).toList();
    }

    RequestRecord request(long id) {
      return result.requests().stream().filter(r -> r.id() == id).findFirst().orElseThrow();
    }
  }

  static Trace run(Simulation.Builder b) {
    Trace t = new Trace();
    t.result = b.recordRequests(true).listener(t).build().run();
    return t;
  }

  /** A builder with constant 1,000 us steps and vLLM's synchronous scheduler. */
  static Simulation.Builder engine(int maxNumSeqs, int budget, int threshold, int maxModelLen,
      long blocks, int blockSize, List<RequestSpec> requests) {
    return engine(LinearTestModel.constant(STEP_US), maxNumSeqs, budget, threshold, maxModelLen,
        blocks, blockSize, requests);
  }

  /** As above with another latency model (a speculating one). */
  static Simulation.Builder engine(LatencyModel model, int maxNumSeqs, int budget, int threshold,
      int maxModelLen, long blocks, int blockSize, List<RequestSpec> requests) {
    List<RequestSpec> sorted = new ArrayList<>(requests);
    sorted.sort(Comparator.comparingLong(RequestSpec::arrivalTimeUs));
    return Simulation.builder().latencyModel(model)
        .limits(new EngineLimits(maxNumSeqs, budget, threshold, maxModelLen, false))
        .totalKvBlocks(blocks).blockSizeTokens(blockSize).source(RequestSource.of(sorted));
  }

  /** Request id to tokens scheduled, in batch order. */
  static Map<Long, Integer> scheduled(StepRecord s) {
    Map<Long, Integer> m = new LinkedHashMap<>();
    for (StepRecord.RequestState r : s.requests()) {
      m.put(r.requestId(), r.scheduledTokens());
    }
    return m;
  }

  static StepRecord.RequestState state(StepRecord s, long id) {
    return s.requests().stream().filter(r -> r.requestId() == id).findFirst().orElseThrow();
  }

  /** A prompt of {@code n} copies of {@code token} (vLLM's test prompts are one repeated id). */
  static int[] repeated(int token, int n) {
    return IntStream.generate(() -> token).limit(n).toArray();
  }

  static RequestSpec req(long id, long arrivalUs, int input, int output) {
    return TestRequests.req(id, arrivalUs, input, output);
  }

  // ------------------------------------------------------------------ queues

  /**
   * vLLM {@code tests/v1/core/test_scheduler.py::test_add_requests}: each request added joins the
   * waiting queue, whose length is then the number added so far. Here a running request holds the
   * only slot (max-num-seqs 1), so the ten requests, arriving one a step, pile up in the queue.
   */
  @Test
  void addedRequestsPileUpInTheWaitingQueueOneByOne() {
    List<RequestSpec> reqs = new ArrayList<>();
    reqs.add(req(100, 0, 10, 20)); // holds the only slot for 20 steps
    for (int i = 0; i < 10; i++) {
      reqs.add(req(i, 500 + STEP_US * i, 10, 16));
    }
    Trace t = run(engine(1, VLLM_DEFAULT_BUDGET, 0, 0, VLLM_DEFAULT_BLOCKS, 16, reqs));
    for (int k = 2; k <= 11; k++) {
      assertThat(t.step(k).waitingDepth()).as("waiting at step %d", k).isEqualTo(k - 1);
      assertThat(t.step(k).runningDepth()).isEqualTo(1);
      assertThat(scheduled(t.step(k))).containsOnlyKeys(100L);
    }
  }

  /**
   * vLLM {@code tests/v1/core/test_scheduler.py::test_finish_request} and {@code
   * ::test_get_num_unfinished_requests}: waiting requests finished one by one leave the queue and
   * the count of unfinished requests drops by one each. The engine's only way to end a waiting
   * request is its client giving up (an abort), one per step here.
   */
  @Test
  void waitingRequestsEndedOneByOneLeaveTheQueue() {
    List<RequestSpec> reqs = new ArrayList<>();
    reqs.add(req(100, 0, 10, 20)); // holds the only slot
    for (int i = 0; i < 10; i++) {
      // request i gives up at 1,500 + 1,000 i us, in the middle of step i + 2
      reqs.add(TestRequests.withTimeout(req(i, 1, 10, 16), 1_499 + STEP_US * i));
    }
    Trace t = run(engine(1, VLLM_DEFAULT_BUDGET, 0, 0, VLLM_DEFAULT_BLOCKS, 16, reqs));
    assertThat(t.step(2).waitingDepth()).isEqualTo(10);
    for (int k = 3; k <= 12; k++) {
      int left = 12 - k;
      assertThat(t.step(k).waitingDepth()).as("waiting at step %d", k).isEqualTo(left);
      // unfinished = the running request and those still waiting
      assertThat(t.step(k).runningDepth() + t.step(k).waitingDepth()).isEqualTo(1 + left);
    }
    for (int i = 0; i < 10; i++) {
      assertThat(t.request(i).outcome()).isEqualTo(RequestOutcome.TIMED_OUT);
    }
    assertThat(t.request(100).outcome()).isEqualTo(RequestOutcome.COMPLETED);
  }

  // ------------------------------------------------------------------ first steps

  /**
   * vLLM {@code tests/v1/core/test_scheduler.py::test_schedule} (both cases: prefix caching on or
   * off, distinct prompts): ten requests of 10 tokens are all scheduled in the first step with
   * their whole prompt, in arrival order, and none is left waiting.
   */
  @Test
  void tenShortPromptsAreAllScheduledWholeInTheFirstStep() {
    List<RequestSpec> reqs = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      reqs.add(req(i, 0, 10, 16));
    }
    Trace t = run(engine(VLLM_DEFAULT_SEQS, VLLM_DEFAULT_BUDGET, 0, VLLM_DEFAULT_BUDGET,
        VLLM_DEFAULT_BLOCKS, 16, reqs));
    StepRecord first = t.step(1);
    assertThat(first.prefillRequests()).isEqualTo(10);
    assertThat(first.decodeRequests()).isZero();
    assertThat(scheduled(first)).containsExactly(Map.entry(0L, 10), Map.entry(1L, 10),
        Map.entry(2L, 10), Map.entry(3L, 10), Map.entry(4L, 10), Map.entry(5L, 10),
        Map.entry(6L, 10), Map.entry(7L, 10), Map.entry(8L, 10), Map.entry(9L, 10));
    assertThat(first.waitingDepth()).isZero();
    assertThat(first.runningDepth()).isEqualTo(10);
  }

  /**
   * vLLM {@code tests/v1/core/test_scheduler.py::test_schedule_concurrent_partial_requests} (both
   * cases of prefix caching; distinct prompts): three 800-token prompts, 1,024 tokens a step, a
   * long-prefill threshold of 400. Step 1: 400, 400, 224. Step 2: the same. Step 3: the first two
   * decode one token each and the third gets its last 352.
   */
  @Test
  void longPrefillThresholdSplitsThreeLongPromptsAcrossThreeSteps() {
    List<RequestSpec> reqs = List.of(req(0, 0, 800, 16), req(1, 0, 800, 16), req(2, 0, 800, 16));
    Trace t = run(engine(VLLM_DEFAULT_SEQS, 1024, 400, 1024, VLLM_DEFAULT_BLOCKS, 16, reqs));
    assertThat(scheduled(t.step(1))).containsExactly(Map.entry(0L, 400), Map.entry(1L, 400),
        Map.entry(2L, 224));
    assertThat(t.step(1).runningDepth()).isEqualTo(3);
    assertThat(scheduled(t.step(2))).containsExactly(Map.entry(0L, 400), Map.entry(1L, 400),
        Map.entry(2L, 224));
    assertThat(t.step(2).prefillRequests()).isEqualTo(3);
    assertThat(scheduled(t.step(3))).containsExactly(Map.entry(0L, 1), Map.entry(1L, 1),
        Map.entry(2L, 800 - 224 - 224));
    assertThat(state(t.step(3), 0).prefill()).isFalse();
    assertThat(state(t.step(3), 1).prefill()).isFalse();
    assertThat(state(t.step(3), 2).prefill()).isTrue();
    assertThat(state(t.step(3), 2).computedTokens()).isEqualTo(448);
  }

  /**
   * vLLM {@code tests/v1/core/test_scheduler.py::test_schedule_order} (chunked prefill on; the
   * case with chunked prefill off is not expressible): two 800-token prompts then two 10-token
   * ones, 1,024 tokens a step, 3 sequences. The first step takes the first long prompt whole and a
   * 224-token chunk of the second; the short ones behind do not jump ahead.
   */
  @Test
  void chunkedPrefillTakesTheSecondLongPromptBeforeTheShortOnes() {
    List<RequestSpec> reqs = List.of(req(1, 0, 800, 16), req(2, 0, 800, 16), req(3, 0, 10, 16),
        req(4, 0, 10, 16));
    Trace t = run(engine(3, 1024, 0, 1024, VLLM_DEFAULT_BLOCKS, 16, reqs));
    assertThat(t.step(1).prefillRequests()).isEqualTo(2);
    assertThat(scheduled(t.step(1))).containsExactly(Map.entry(1L, 800), Map.entry(2L, 224));
    assertThat(t.step(1).waitingDepth()).isEqualTo(2);
  }

  /**
   * vLLM {@code tests/v1/core/test_scheduler.py::test_scheduler_stats_waiting_queues} (the
   * capacity part; the queue of requests waiting for remote KV is not expressible): three 50-token
   * prompts, 100 tokens a step. Two are scheduled, one waits; the step reports 2 running and 1
   * waiting.
   */
  @Test
  void aTokenBudgetOfTwoPromptsLeavesTheThirdWaiting() {
    List<RequestSpec> reqs = List.of(req(0, 0, 50, 16), req(1, 0, 50, 16), req(2, 0, 50, 16));
    Trace t = run(engine(VLLM_DEFAULT_SEQS, 100, 0, 100, VLLM_DEFAULT_BLOCKS, 16, reqs));
    assertThat(scheduled(t.step(1))).containsExactly(Map.entry(0L, 50), Map.entry(1L, 50));
    assertThat(t.step(1).runningDepth()).isEqualTo(2);
    assertThat(t.step(1).waitingDepth()).isEqualTo(1);
  }

  // ------------------------------------------------------------------ KV cache

  /**
   * vLLM {@code
   * tests/v1/core/test_scheduler.py::test_prefix_cache_stats_counted_once_for_retried_then_scheduled_request}:
   * a request whose 32-token prefix is cached but that cannot get its blocks at first, and is
   * admitted later, counts its prefix-cache query (48 tokens) and hits (32 tokens) once. The
   * failed first try is made by a full cache here (vLLM's test forces it): 4 blocks of 16, the
   * seed's two prompt blocks cached and free, a running request holding the other two.
   */
  @Test
  void aRequestThatWaitsForBlocksCountsItsPrefixHitsOnce() {
    int[] zeros48 = repeated(0, 48);
    int[] zeros32 = repeated(0, 32);
    List<RequestSpec> reqs = List.of(
        RequestSpec.simple(1, 0, zeros32, 2), // the seed: prefill, one decode, done at 2,000 us
        req(2, 1_500, 20, 5), // holds two blocks from step 3 to step 7
        RequestSpec.simple(3, 1_600, zeros48, 1)); // the retried request
    Trace t = run(engine(VLLM_DEFAULT_SEQS, VLLM_DEFAULT_BUDGET, 0, 0, 4, 16, reqs));
    // step 3: request 2 is admitted; request 3 (2 cached blocks + 1 new) finds no free block
    assertThat(scheduled(t.step(3))).containsOnlyKeys(2L);
    assertThat(t.step(3).waitingDepth()).isEqualTo(1);
    // it waits while request 2 runs (steps 3 to 7), then is admitted with its 32 cached tokens
    for (int k = 4; k <= 7; k++) {
      assertThat(scheduled(t.step(k))).as("step %d", k).containsOnlyKeys(2L);
    }
    StepRecord.RequestState retried = state(t.step(8), 3);
    assertThat(retried.computedTokens()).isEqualTo(32);
    assertThat(retried.cachedPromptTokens()).isEqualTo(32);
    assertThat(retried.scheduledTokens()).isEqualTo(16);
    assertThat(t.request(3).cachedPromptTokens()).isEqualTo(32);
    // queried: 32 (seed) + 20 + 48 = 100 tokens once each; served: the retried request's 32
    assertThat(t.result.engine().tokenHitRate()).isEqualTo(32.0 / 100.0);
  }

  /**
   * vLLM {@code tests/v1/core/test_scheduler.py::test_memory_leak}: five requests of 10 tokens
   * and 10 output tokens, one added before each of the first five steps, run to completion with
   * prefix caching; then every block is free again (vLLM: all blocks but the null block free, none
   * referenced). Here a probe request arriving long after shows the pool: only its own block used.
   */
  @Test
  void everyBlockIsFreeAgainAfterAllRequestsFinish() {
    List<RequestSpec> reqs = new ArrayList<>();
    reqs.add(req(0, 0, 10, 10));
    for (int i = 1; i < 5; i++) {
      reqs.add(req(i, 500 + STEP_US * (i - 1), 10, 10));
    }
    reqs.add(req(9, 1_000_000, 10, 1)); // the probe
    Trace t = run(engine(VLLM_DEFAULT_SEQS, VLLM_DEFAULT_BUDGET, 0, VLLM_DEFAULT_BUDGET,
        VLLM_DEFAULT_BLOCKS, 16, reqs));
    for (int k = 1; k <= 5; k++) {
      StepRecord.RequestState added = state(t.step(k), k - 1);
      assertThat(added.prefill()).as("request %d prefills in step %d", k - 1, k).isTrue();
      assertThat(added.scheduledTokens()).isEqualTo(10);
    }
    for (int i = 0; i < 5; i++) {
      assertThat(t.request(i).outcome()).isEqualTo(RequestOutcome.COMPLETED);
      assertThat(t.request(i).outputTokens()).isEqualTo(10);
    }
    StepRecord probe = t.steps.get(t.steps.size() - 1);
    assertThat(scheduled(probe)).containsOnlyKeys(9L);
    assertThat(probe.runningDepth()).isEqualTo(1);
    assertThat(probe.waitingDepth()).isZero();
    assertThat(probe.kvBlocksFree()).isEqualTo(VLLM_DEFAULT_BLOCKS - 1);
  }
}
