package io.blis.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.blis.api.RequestView;
import io.blis.api.Scheduler;
import io.blis.engine.result.RequestRecord;
import io.blis.engine.sched.Schedulers;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The scenarios of the second half of vLLM's {@code tests/v1/core/test_scheduler.py} (upstream
 * commit 003df2961dd8830c317a61f9745ccd557da9fa06) that this engine can express, re-set here and
 * checked against the facts vLLM's tests expect. See {@code docs/vllm-parity-b.md} for every
 * upstream test of that range, including those that cannot be expressed.
 *
 * <p>Conventions of the translation. vLLM's helper schedulers are synchronous, so async
 * scheduling is off. vLLM's {@code num_blocks} counts its reserved null block, so the pool here
 * has one block fewer. vLLM's tests add every request before the first {@code schedule()} call;
 * here each request keeps its vLLM arrival time (in microseconds) and a latency model holds it
 * until a common queue-entry time, so all of them are waiting when the first batch is formed.
 * Request ids are vLLM's. Steps take 1 ms each.
 */
class VllmSchedulerParityBTest {

  private static final long STEP_US = 1000;

  /**
   * Constant-time steps; a request that arrives before {@code queueAtUs} joins the waiting queue
   * at {@code queueAtUs}, later ones at once. No other delays.
   */
  private static final class HeldModel extends LinearTestModel {
    private final long queueAtUs;

    HeldModel(long stepUs, long queueAtUs) {
      super(stepUs, 0, 0, 0, 0, 0);
      this.queueAtUs = queueAtUs;
    }

    @Override
    public long queueingTime(RequestView request) {
      return Math.max(0, queueAtUs - request.arrivalTimeUs());
    }
  }

  /** A synchronous engine's builder: vLLM's helper defaults unless overridden. */
  private static Simulation.Builder engine(int maxNumSeqs, int maxNumBatchedTokens, long gpuBlocks,
      int blockSize, long queueAtUs, List<RequestSpec> reqs) {
    return Simulation.builder().latencyModel(new HeldModel(STEP_US, queueAtUs))
        .limits(new EngineLimits(maxNumSeqs, maxNumBatchedTokens, 0, maxNumBatchedTokens, false))
        .totalKvBlocks(gpuBlocks).blockSizeTokens(blockSize).source(RequestSource.of(reqs));
  }

  /** {@link #engine} with the priority scheduler and the priority of each request id. */
  private static Simulation.Builder priorityEngine(int maxNumSeqs, int maxNumBatchedTokens,
      long gpuBlocks, int blockSize, long queueAtUs, List<RequestSpec> reqs,
      Map<Long, Integer> priorities) {
    Scheduler s = Schedulers.priorityFcfs();
    return engine(maxNumSeqs, maxNumBatchedTokens, gpuBlocks, blockSize, queueAtUs, reqs)
        .scheduler(s).priorityPolicy((r, nowUs) -> priorities.get(r.id()));
  }

  /**
   * Requests with vLLM's ids 0..n-1, each arriving at {@code arrivalsUs[id]}, listed in arrival
   * order as the request source needs.
   */
  private static List<RequestSpec> requests(long[] arrivalsUs, int input, int output) {
    List<RequestSpec> out = new ArrayList<>();
    for (int id = 0; id < arrivalsUs.length; id++) {
      out.add(TestRequests.req(id, arrivalsUs[id], input, output));
    }
    out.sort((a, b) -> Long.compare(a.arrivalTimeUs(), b.arrivalTimeUs()));
    return out;
  }

  private static Map<Long, Integer> priorities(int... p) {
    java.util.HashMap<Long, Integer> m = new java.util.HashMap<>();
    for (int id = 0; id < p.length; id++) {
      m.put((long) id, p[id]);
    }
    return m;
  }

  /** The request ids of a step's batch, in batch order. */
  private static List<Long> ids(StepRecord step) {
    return step.requests().stream().map(StepRecord.RequestState::requestId).toList();
  }

  private static StepRecord.RequestState state(StepRecord step, long id) {
    return step.requests().stream().filter(s -> s.requestId() == id).findFirst().orElseThrow(
        () -> new AssertionError("request " + id + " is not in step " + step.stepId()));
  }

  /** Request ids in the order they were first scheduled (first admission). */
  private static List<Long> admissionOrder(RecordedRun run) {
    Set<Long> seen = new LinkedHashSet<>();
    for (StepRecord s : run.steps()) {
      for (StepRecord.RequestState r : s.requests()) {
        seen.add(r.requestId());
      }
    }
    return List.copyOf(seen);
  }

  /** The first step in which request {@code id} was scheduled. */
  private static StepRecord firstStepOf(RecordedRun run, long id) {
    return run.steps().stream().filter(s -> ids(s).contains(id)).findFirst().orElseThrow();
  }

  // ------------------------------------------------------------------ priority ordering

  /**
   * vLLM {@code tests/v1/core/test_scheduler.py::test_priority_scheduling_preemption_victim_selection}.
   * One sequence slot, three 10-token prompts of priorities 3, 2, 0 arriving in that order: the
   * most urgent (the last to arrive) runs first, and the other two wait in priority order, so the
   * middle one is next.
   */
  @Test
  void oneSlotRunsTheMostUrgentAndKeepsTheRestInPriorityOrder() {
    RecordedRun run = RecordedRun.of(priorityEngine(1, 8192, 9999, 16, 10,
        requests(new long[] {1, 2, 3}, 10, 16), priorities(3, 2, 0)));
    StepRecord first = run.steps().get(0);
    assertThat(first.startUs()).isEqualTo(10); // all three were waiting together
    assertThat(ids(first)).containsExactly(2L);
    assertThat(state(first, 2).scheduledTokens()).isEqualTo(10);
    assertThat(first.waitingDepth()).isEqualTo(2);
    assertThat(first.runningDepth()).isEqualTo(1);
    // the waiting queue held 1 (priority 2) ahead of 0 (priority 3)
    assertThat(admissionOrder(run)).containsExactly(2L, 1L, 0L);
    assertThat(run.steps()).allSatisfy(s -> assertThat(s.requests()).hasSize(1));
  }

  /**
   * vLLM {@code tests/v1/core/test_scheduler.py::test_priority_scheduling_equal_priority_preemption}.
   * Three requests of equal priority added in id order 0, 1, 2 but with arrival times 3, 1, 2: the
   * arrival time, not the id or the order of adding, breaks the tie (1, then 2, then 0).
   */
  @Test
  void equalPrioritiesAreOrderedByArrivalTime() {
    RecordedRun run = RecordedRun.of(priorityEngine(1, 8192, 9999, 16, 10,
        requests(new long[] {3, 1, 2}, 10, 16), priorities(2, 2, 2)));
    StepRecord first = run.steps().get(0);
    assertThat(first.startUs()).isEqualTo(10);
    assertThat(ids(first)).containsExactly(1L);
    assertThat(first.waitingDepth()).isEqualTo(2);
    assertThat(admissionOrder(run)).containsExactly(1L, 2L, 0L);
  }

  /**
   * vLLM {@code tests/v1/core/test_scheduler.py::test_priority_scheduling_waiting_queue_order}.
   * One slot, four requests of priorities 3, 1, 2, 0 arriving in id order: 3 runs first, and the
   * queue behind it is 1, 2, 0.
   */
  @Test
  void theWaitingQueueIsKeptInPriorityOrder() {
    RecordedRun run = RecordedRun.of(priorityEngine(1, 8192, 9999, 16, 10,
        requests(new long[] {1, 2, 3, 4}, 10, 16), priorities(3, 1, 2, 0)));
    StepRecord first = run.steps().get(0);
    assertThat(first.startUs()).isEqualTo(10);
    assertThat(ids(first)).containsExactly(3L);
    assertThat(first.waitingDepth()).isEqualTo(3);
    assertThat(admissionOrder(run)).containsExactly(3L, 1L, 2L, 0L);
  }

  /**
   * vLLM {@code tests/v1/core/test_scheduler.py::test_priority_scheduling_fcfs_fallback}. Four
   * requests of the same priority with arrival times 4, 1, 3, 2 (ids 0..3) all fit in the first
   * step (16 slots, 8192 tokens); they are scheduled in arrival order: 1, 3, 2, 0.
   */
  @Test
  void samePriorityFallsBackToArrivalOrderWithinOneStep() {
    RecordedRun run = RecordedRun.of(priorityEngine(16, 8192, 9999, 16, 10,
        requests(new long[] {4, 1, 3, 2}, 10, 16), priorities(1, 1, 1, 1)));
    StepRecord first = run.steps().get(0);
    assertThat(ids(first)).containsExactly(1L, 3L, 2L, 0L);
    assertThat(first.requests()).allSatisfy(r -> {
      assertThat(r.prefill()).isTrue();
      assertThat(r.scheduledTokens()).isEqualTo(10);
    });
    assertThat(first.waitingDepth()).isZero();
  }

  /**
   * vLLM {@code tests/v1/core/test_scheduler.py::test_priority_scheduling_with_limited_slots}. Two
   * slots, a 1000-token budget, priorities 3, 1, 2, 0: the first step takes 3 and 1 and leaves 2
   * ahead of 0 in the queue, which shows when the two slots free up.
   */
  @Test
  void limitedSlotsGoToTheTwoMostUrgent() {
    RecordedRun run = RecordedRun.of(priorityEngine(2, 1000, 9999, 16, 10,
        requests(new long[] {1, 2, 3, 4}, 10, 16), priorities(3, 1, 2, 0)));
    StepRecord first = run.steps().get(0);
    assertThat(ids(first)).containsExactlyInAnyOrder(3L, 1L);
    assertThat(first.waitingDepth()).isEqualTo(2);
    assertThat(first.runningDepth()).isEqualTo(2);
    assertThat(run.steps()).allSatisfy(s -> assertThat(s.requests().size()).isLessThanOrEqualTo(2));
    // 3 and 1 finish together (16 tokens each); the next step admits the queue in its order
    StepRecord next = firstStepOf(run, 2);
    assertThat(ids(next)).containsExactly(2L, 0L);
    assertThat(next.stepId()).isEqualTo(17);
  }

  /**
   * vLLM {@code tests/v1/core/test_scheduler.py::test_priority_scheduling_heap_property}. One slot
   * and eight one-token requests of priorities 5, 1, 8, 3, 2, 7, 4, 6 (arrival = id): each step
   * admits the most urgent waiting one, so priorities come out sorted.
   */
  @Test
  void requestsLeaveTheQueueInSortedPriorityOrder() {
    int[] prio = {5, 1, 8, 3, 2, 7, 4, 6};
    RecordedRun run = RecordedRun.of(priorityEngine(1, 8192, 9999, 16, 10,
        requests(new long[] {0, 1, 2, 3, 4, 5, 6, 7}, 10, 1), priorities(prio)));
    assertThat(run.steps()).hasSize(8);
    assertThat(run.steps().get(0).waitingDepth()).isEqualTo(7);
    List<Integer> scheduledPriorities = run.steps().stream()
        .map(s -> prio[(int) (long) ids(s).get(0)]).toList();
    assertThat(scheduledPriorities).containsExactly(1, 2, 3, 4, 5, 6, 7, 8);
    assertThat(admissionOrder(run)).containsExactly(1L, 4L, 3L, 6L, 0L, 7L, 5L, 2L);
  }

  /**
   * vLLM {@code tests/v1/core/test_scheduler.py::test_schedule_skip_tokenizer_init}. Only its
   * scheduling fact is expressible (the engine has no tokenizer): five 10-token requests are all
   * scheduled as new requests in the first step.
   */
  @Test
  void fiveSmallRequestsAreAllScheduledInTheFirstStep() {
    RecordedRun run = RecordedRun.of(engine(16, 8192, 9999, 16, 0,
        requests(new long[] {0, 0, 0, 0, 0}, 10, 16)));
    StepRecord first = run.steps().get(0);
    assertThat(ids(first)).containsExactly(0L, 1L, 2L, 3L, 4L);
    assertThat(first.prefillTokens()).isEqualTo(50);
    assertThat(first.waitingDepth()).isZero();
  }

  /**
   * vLLM {@code tests/v1/core/test_scheduler.py::test_ec_connector_schedule_multiple_requests},
   * its scheduling facts only (the encoder cache and EC connector are not modelled): ten slots,
   * a 2048-token budget and ten 200-token prompts; all ten are new in the first step, each with
   * its whole prompt, and nothing is left waiting.
   */
  @Test
  void tenPromptsThatFitTheBudgetAreAllScheduledWhole() {
    RecordedRun run = RecordedRun.of(engine(10, 2048, 9999, 16, 0,
        requests(new long[10], 200, 16)));
    StepRecord first = run.steps().get(0);
    assertThat(ids(first)).containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L);
    assertThat(first.requests()).allSatisfy(r -> {
      assertThat(r.prefill()).isTrue();
      assertThat(r.computedTokens()).isZero();
      assertThat(r.scheduledTokens()).isEqualTo(200);
    });
    assertThat(first.waitingDepth()).isZero();
    assertThat(first.finished()).isZero();
  }

  // ------------------------------------------------------------------ preemption by priority

  /**
   * vLLM {@code tests/v1/core/test_scheduler.py::test_priority_scheduling_preemption_and_resumption_when_out_of_kv}
   * (the KV connector and model-runner parameters do not change the scheduling). Four usable
   * blocks of 16 tokens, two slots, 200-token budget. A 30-token request of priority 1 prefills;
   * a 32-token request of priority 0 (two output tokens) arrives and prefills next to its first
   * decode, filling the pool. In the third step the urgent one needs a third block: the less
   * urgent one is preempted (no longer in the batch) and only the urgent one decodes. When it
   * finishes, the preempted one resumes by recomputing its 30 prompt plus 2 generated tokens.
   */
  @Test
  void aLessUrgentRequestIsPreemptedForKvAndResumesWithItsGeneratedTokens() {
    List<RequestSpec> reqs = List.of(TestRequests.req(0, 0, 30, 16),
        TestRequests.req(1, STEP_US / 2, 32, 2));
    RecordedRun run = RecordedRun.of(priorityEngine(2, 200, 4, 16, 0, reqs, priorities(1, 0)));
    List<StepRecord> s = run.steps();

    assertThat(ids(s.get(0))).containsExactly(0L);
    assertThat(s.get(0).waitingDepth()).isZero();
    assertThat(s.get(0).runningDepth()).isEqualTo(1);

    // step 2: the low one decodes, the high one is new; the pool is full
    assertThat(ids(s.get(1))).containsExactlyInAnyOrder(0L, 1L);
    assertThat(state(s.get(1), 0).prefill()).isFalse();
    assertThat(state(s.get(1), 1).prefill()).isTrue();
    assertThat(state(s.get(1), 1).scheduledTokens()).isEqualTo(32);
    assertThat(s.get(1).kvBlocksFree()).isZero();
    assertThat(s.get(1).waitingDepth()).isZero();
    assertThat(s.get(1).runningDepth()).isEqualTo(2);

    // step 3: the low one is preempted, only the high one runs
    assertThat(ids(s.get(2))).containsExactly(1L);
    assertThat(state(s.get(2), 1).prefill()).isFalse();
    assertThat(s.get(2).preempted()).isEqualTo(1);
    assertThat(s.get(2).waitingDepth()).isEqualTo(1);
    assertThat(s.get(2).runningDepth()).isEqualTo(1);
    assertThat(s.get(2).finished()).isEqualTo(1);

    // step 4: the low one resumes alone with its 30 prompt and 2 generated tokens
    StepRecord resume = s.get(3);
    assertThat(ids(resume)).containsExactly(0L);
    assertThat(resume.waitingDepth()).isZero();
    assertThat(resume.runningDepth()).isEqualTo(1);
    StepRecord.RequestState low = state(resume, 0);
    assertThat(low.preemptions()).isEqualTo(1);
    assertThat(low.outputTokens()).isEqualTo(2);
    assertThat(low.promptTokens()).isEqualTo(30);
    assertThat(low.computedTokens() + low.scheduledTokens()).isEqualTo(32);

    List<RequestRecord> r = run.byId();
    assertThat(r).extracting(RequestRecord::preemptions).containsExactly(1, 0);
  }

  /**
   * vLLM {@code tests/v1/core/test_scheduler.py::test_priority_scheduling_ec_connector_preemption_and_resumption},
   * its KV-cache and scheduling facts (the encoder cache and EC connector are not modelled):
   * prefix caching on, 14 usable blocks of 16, two slots. A 94-token request of priority 1, then
   * a 128-token one of priority 0 with two output tokens; the pool is full after the second
   * step; in the third the urgent one needs a ninth block and the other is preempted; the urgent
   * one finishes; the preempted one resumes with its 94 + 2 tokens. As the upstream test notes,
   * only its last block is lost: its five full prompt blocks are still cached (the partial block
   * was the first reused), so it recomputes 16 tokens from 80.
   */
  @Test
  void thePreemptedRequestLosesOnlyItsLastBlockToThePreemptor() {
    List<RequestSpec> reqs = List.of(TestRequests.req(0, 0, 94, 16),
        TestRequests.req(1, STEP_US / 2, 128, 2));
    RecordedRun run = RecordedRun.of(priorityEngine(2, 8192, 14, 16, 0, reqs, priorities(1, 0)));
    List<StepRecord> s = run.steps();

    assertThat(ids(s.get(0))).containsExactly(0L);
    assertThat(state(s.get(0), 0).scheduledTokens()).isEqualTo(94);

    assertThat(ids(s.get(1))).containsExactlyInAnyOrder(0L, 1L);
    assertThat(state(s.get(1), 1).scheduledTokens()).isEqualTo(128);
    assertThat(s.get(1).kvBlocksFree()).isZero();
    assertThat(s.get(1).runningDepth()).isEqualTo(2);
    assertThat(s.get(1).waitingDepth()).isZero();

    assertThat(ids(s.get(2))).containsExactly(1L);
    assertThat(s.get(2).preempted()).isEqualTo(1);
    assertThat(s.get(2).waitingDepth()).isEqualTo(1);
    assertThat(s.get(2).runningDepth()).isEqualTo(1);
    assertThat(state(s.get(2), 1).blocksAllocated()).isEqualTo(9);
    assertThat(s.get(2).finished()).isEqualTo(1);

    StepRecord resume = s.get(3);
    assertThat(ids(resume)).containsExactly(0L);
    assertThat(resume.waitingDepth()).isZero();
    assertThat(resume.runningDepth()).isEqualTo(1);
    StepRecord.RequestState low = state(resume, 0);
    assertThat(low.preemptions()).isEqualTo(1);
    assertThat(low.outputTokens()).isEqualTo(2);
    assertThat(low.computedTokens()).isEqualTo(80);
    assertThat(low.scheduledTokens()).isEqualTo(16);
    assertThat(run.result().engine().preemptions()).isEqualTo(1);
  }

  // ------------------------------------------------------------------ allocation failure

  /**
   * vLLM {@code tests/v1/core/test_scheduler.py::test_ec_connector_unable_to_allocate}, its KV
   * facts (the EC connector is not modelled): blocks of 4 tokens, 9 usable, two 24-token
   * requests (6 blocks each) of two output tokens. Only the first fits; the second waits until
   * the first has finished and freed all its blocks (all nine are free when it is admitted),
   * then runs alone.
   */
  @Test
  void aRequestThatCannotGetBlocksWaitsUntilTheFirstHasFreedThem() {
    RecordedRun run = RecordedRun.of(engine(16, 8192, 9, 4, 0,
        requests(new long[] {0, 0}, 24, 2)));
    List<StepRecord> s = run.steps();
    assertThat(s).hasSize(4);

    assertThat(ids(s.get(0))).containsExactly(0L);
    assertThat(state(s.get(0), 0).scheduledTokens()).isEqualTo(24);
    assertThat(s.get(0).runningDepth()).isEqualTo(1);
    assertThat(s.get(0).waitingDepth()).isEqualTo(1);
    assertThat(s.get(0).kvBlocksFree()).isEqualTo(3);

    // its decode needs a seventh block; the second request still cannot get six
    assertThat(ids(s.get(1))).containsExactly(0L);
    assertThat(s.get(1).waitingDepth()).isEqualTo(1);
    assertThat(s.get(1).kvBlocksFree()).isEqualTo(2);
    assertThat(s.get(1).finished()).isEqualTo(1);

    // every block came back: 9 - 6 free once the second request is admitted
    assertThat(ids(s.get(2))).containsExactly(1L);
    assertThat(state(s.get(2), 1).scheduledTokens()).isEqualTo(24);
    assertThat(s.get(2).runningDepth()).isEqualTo(1);
    assertThat(s.get(2).waitingDepth()).isZero();
    assertThat(s.get(2).kvBlocksFree()).isEqualTo(3);

    assertThat(ids(s.get(3))).containsExactly(1L);
    assertThat(s.get(3).finished()).isEqualTo(1);
    assertThat(run.byId()).hasSize(2);
    // the second request never held blocks beside the first, and nothing was preempted
    assertThat(run.result().engine().peakUsedBlocks()).isEqualTo(7);
    assertThat(run.result().engine().preemptions()).isZero();
  }
}
