package io.blis.engine;

import static io.blis.engine.VllmSchedulerParityATest.STEP_US;
import static io.blis.engine.VllmSchedulerParityATest.VLLM_DEFAULT_BLOCKS;
import static io.blis.engine.VllmSchedulerParityATest.VLLM_DEFAULT_BUDGET;
import static io.blis.engine.VllmSchedulerParityATest.VLLM_DEFAULT_SEQS;
import static io.blis.engine.VllmSchedulerParityATest.engine;
import static io.blis.engine.VllmSchedulerParityATest.repeated;
import static io.blis.engine.VllmSchedulerParityATest.req;
import static io.blis.engine.VllmSchedulerParityATest.run;
import static io.blis.engine.VllmSchedulerParityATest.scheduled;
import static io.blis.engine.VllmSchedulerParityATest.state;
import static org.assertj.core.api.Assertions.assertThat;

import io.blis.engine.VllmSchedulerParityATest.Trace;
import io.blis.engine.sched.Schedulers;
import io.blis.engine.spec.AcceptanceProfile;
import io.blis.engine.spec.SpeculativeConfig;
import io.blis.engine.spec.SpeculativeCounts;
import io.blis.engine.spec.SpeculativeMethod;
import io.blis.engine.spec.SpeculativeModel;
import io.blis.engine.spec.Speculator;
import io.blis.workload.RequestOutcome;
import io.blis.workload.RequestSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

/**
 * vLLM's scheduler tests ({@code tests/v1/core/test_scheduler.py}, first part) on priority
 * scheduling and speculative decoding, re-expressed as scenarios of this engine (see {@link
 * VllmSchedulerParityATest} for the mapping of vLLM's harness).
 *
 * <p>Priority: vLLM's tests add every request before the first {@code schedule()} with distinct
 * arrival times. Here a blocker request (one output token) takes the first step alone while the
 * requests arrive during it, at 100 us per vLLM second, so all of them wait for step 2. Priorities
 * are given by a priority policy per request id.
 *
 * <p>Speculative decoding: vLLM's tests use the n-gram drafter (no lookahead slots) and feed
 * chosen drafts and sampled tokens; here acceptance rates of 1 and 0 per position make the
 * engine's draws deterministic.
 */
class VllmSchedulerParityA2Test {

  private static final long BLOCKER = 99;

  // ------------------------------------------------------------------ priority

  /** Requests {@code i} with priority {@code prio[i]}, arriving at {@code arrival[i]} vLLM seconds. */
  private static Trace priorityRun(int[] prio, double[] arrival, int maxNumSeqs, int budget) {
    List<RequestSpec> reqs = new ArrayList<>();
    Map<Long, Integer> priorities = new java.util.HashMap<>();
    reqs.add(req(BLOCKER, 0, 10, 1));
    priorities.put(BLOCKER, 0);
    for (int i = 0; i < prio.length; i++) {
      reqs.add(req(i, Math.round(arrival[i] * 100), 10, 16));
      priorities.put((long) i, prio[i]);
    }
    Trace t = run(engine(maxNumSeqs, budget, 0, budget, VLLM_DEFAULT_BLOCKS, 16, reqs)
        .scheduler(Schedulers.priorityFcfs()).priorityPolicy((r, now) -> priorities.get(r.id())));
    assertThat(scheduled(t.step(1))).containsOnlyKeys(BLOCKER);
    return t;
  }

  /**
   * vLLM {@code tests/v1/core/test_scheduler.py::test_priority_scheduling_basic_ordering}:
   * priorities 2, 0, 1 arriving in that order are scheduled 1, 2, 0 (lower value first).
   */
  @Test
  void waitingRequestsAreScheduledInPriorityOrder() {
    Trace t = priorityRun(new int[] {2, 0, 1}, new double[] {1, 2, 3}, VLLM_DEFAULT_SEQS,
        VLLM_DEFAULT_BUDGET);
    assertThat(t.step(2).prefillRequests()).isEqualTo(3);
    assertThat(scheduled(t.step(2)).keySet()).containsExactly(1L, 2L, 0L);
  }

  /**
   * vLLM {@code tests/v1/core/test_scheduler.py::test_priority_scheduling_arrival_time_tiebreaker}:
   * equal priorities, arrivals 3, 1, 2: scheduled in arrival order 1, 2, 0.
   */
  @Test
  void equalPrioritiesAreScheduledInArrivalOrder() {
    Trace t = priorityRun(new int[] {1, 1, 1}, new double[] {3, 1, 2}, VLLM_DEFAULT_SEQS,
        VLLM_DEFAULT_BUDGET);
    assertThat(scheduled(t.step(2)).keySet()).containsExactly(1L, 2L, 0L);
  }

  /**
   * vLLM {@code tests/v1/core/test_scheduler.py::test_priority_scheduling_mixed_priority_and_arrival}:
   * priorities 2, 1, 1, 0 arriving at 1, 3, 2, 4: scheduled 3, 2, 1, 0.
   */
  @Test
  void priorityFirstThenArrival() {
    Trace t = priorityRun(new int[] {2, 1, 1, 0}, new double[] {1, 3, 2, 4}, VLLM_DEFAULT_SEQS,
        VLLM_DEFAULT_BUDGET);
    assertThat(scheduled(t.step(2)).keySet()).containsExactly(3L, 2L, 1L, 0L);
  }

  /**
   * vLLM {@code tests/v1/core/test_scheduler.py::test_priority_scheduling_preemption}: blocks of
   * 16, 5 usable blocks (vLLM: 6 with the null block), 3 sequences, 200 tokens a step. A
   * priority-5 request of 32 tokens runs (2 blocks); a priority-0 request of 32 tokens arrives.
   * Step 2: the first decodes into a third block and the second is admitted (all 5 blocks used).
   * Step 3: the urgent one needs a third block; the priority-5 request is preempted, not it.
   */
  @Test
  void underBlockPressureTheLeastUrgentRunningRequestIsPreempted() {
    Map<Long, Integer> priorities = Map.of(1L, 5, 2L, 0);
    List<RequestSpec> reqs = List.of(req(1, 0, 32, 16), req(2, 500, 32, 16));
    Trace t = run(engine(3, 200, 0, 200, 5, 16, reqs).scheduler(Schedulers.priorityFcfs())
        .priorityPolicy((r, now) -> priorities.get(r.id())));
    assertThat(scheduled(t.step(1))).containsExactly(Map.entry(1L, 32));
    assertThat(state(t.step(1), 1).blocksAllocated()).isEqualTo(2);
    assertThat(scheduled(t.step(2))).containsExactly(Map.entry(1L, 1), Map.entry(2L, 32));
    assertThat(t.step(2).runningDepth()).isEqualTo(2);
    assertThat(t.step(2).kvBlocksFree()).isZero();
    // step 3: the priority-5 request is the victim; the priority-0 one runs alone
    assertThat(t.step(3).preempted()).isEqualTo(1);
    assertThat(t.preemptions).hasSize(1);
    assertThat(t.preemptions.get(0)).containsExactly(3, 1);
    assertThat(scheduled(t.step(3))).containsExactly(Map.entry(2L, 1));
    assertThat(t.step(3).runningDepth()).isEqualTo(1);
    assertThat(t.step(3).waitingDepth()).isEqualTo(1);
  }

  /**
   * vLLM {@code
   * tests/v1/core/test_scheduler.py::test_priority_scheduling_no_preemption_when_space_available}:
   * two priority-5 requests of 30 tokens run; a priority-0 request arrives and, with room left (3
   * sequences, 200 tokens, plenty of blocks), is admitted without preempting anyone.
   */
  @Test
  void anUrgentRequestWithRoomLeftPreemptsNobody() {
    Map<Long, Integer> priorities = Map.of(1L, 5, 2L, 5, 3L, 0);
    List<RequestSpec> reqs = List.of(req(1, 0, 30, 16), req(2, 0, 30, 16), req(3, 500, 30, 16));
    Trace t = run(engine(3, 200, 0, 200, VLLM_DEFAULT_BLOCKS, 16, reqs)
        .scheduler(Schedulers.priorityFcfs()).priorityPolicy((r, now) -> priorities.get(r.id())));
    assertThat(scheduled(t.step(1))).containsExactly(Map.entry(1L, 30), Map.entry(2L, 30));
    assertThat(scheduled(t.step(2))).containsExactly(Map.entry(1L, 1), Map.entry(2L, 1),
        Map.entry(3L, 30));
    assertThat(t.step(2).runningDepth()).isEqualTo(3);
    assertThat(t.step(2).waitingDepth()).isZero();
    assertThat(t.step(2).preempted()).isZero();
    assertThat(t.preemptions).isEmpty();
  }

  // ------------------------------------------------------------------ speculative decoding

  private static SpeculativeConfig ngram(int k, double... rates) {
    return new SpeculativeConfig(SpeculativeMethod.NGRAM, k, AcceptanceProfile.ofPositionRates(rates),
        "test", "", 1, 0);
  }

  private static Trace specRun(SpeculativeConfig c, int budget, List<RequestSpec> reqs) {
    SpeculativeModel model = new SpeculativeModel(LinearTestModel.constant(STEP_US), null,
        new Speculator(c, 1, 0));
    return run(engine(model, VLLM_DEFAULT_SEQS, budget, 0, 0, VLLM_DEFAULT_BLOCKS, 16, reqs));
  }

  private static RequestSpec ofTenant(long id, int input, int output, String tenant) {
    RequestSpec r = req(id, 0, input, output);
    return new RequestSpec(id, 0, r.promptTokens(), output, "standard", tenant, "", 0, -1, 0, 0, 0);
  }

  /**
   * vLLM {@code tests/v1/core/test_scheduler.py::test_schedule_spec_decoding_stats}, the cases
   * with K drafts a request ("perfect match", "early mismatch", "single token sequence",
   * "multiple mismatches"): 1-token prompts prefill with 1 token and no drafts, then verify 1 + K
   * tokens; the counters give drafts, draft tokens, accepted tokens and accepted per position.
   * Each request's length ends it right after that verification, so the counters hold only it.
   */
  @Test
  void oneVerificationCountsDraftsAndAcceptedTokensPerPosition() {
    // perfect match: K = 3, all accepted: 1 + 3 + 1 tokens emitted
    Trace perfect = specRun(ngram(3, 1, 1, 1), VLLM_DEFAULT_BUDGET, List.of(req(0, 0, 1, 5)));
    assertThat(scheduled(perfect.step(1))).containsExactly(Map.entry(0L, 1));
    assertThat(state(perfect.step(1), 0).prefill()).isTrue();
    assertThat(scheduled(perfect.step(2))).containsExactly(Map.entry(0L, 4));
    assertThat(perfect.steps).hasSize(2);
    assertCounts(perfect, 1, 3, 3, 1L, 1L, 1L);

    // early mismatch: the first draft accepted, the second rejected
    Trace early = specRun(ngram(3, 1, 0, 0), VLLM_DEFAULT_BUDGET, List.of(req(0, 0, 1, 3)));
    assertThat(scheduled(early.step(2))).containsExactly(Map.entry(0L, 4));
    assertThat(early.steps).hasSize(2);
    assertCounts(early, 1, 3, 1, 1L, 0L, 0L);

    // single token sequence: K = 1, accepted
    Trace single = specRun(ngram(1, 1), VLLM_DEFAULT_BUDGET, List.of(req(0, 0, 1, 3)));
    assertThat(scheduled(single.step(2))).containsExactly(Map.entry(0L, 2));
    assertCounts(single, 1, 1, 1, 1L);

    // multiple mismatches: two requests, K = 3, one keeps 2 drafts, the other 1
    SpeculativeConfig perTenant = new SpeculativeConfig(SpeculativeMethod.NGRAM, 3,
        AcceptanceProfile.ofPositionRates(0, 0, 0), "test", "", 1, 0,
        Map.of("a", AcceptanceProfile.ofPositionRates(1, 1, 0), "b",
            AcceptanceProfile.ofPositionRates(1, 0, 0)));
    Trace two = specRun(perTenant, VLLM_DEFAULT_BUDGET,
        List.of(ofTenant(0, 1, 4, "a"), ofTenant(1, 1, 3, "b")));
    assertThat(scheduled(two.step(1))).containsExactly(Map.entry(0L, 1), Map.entry(1L, 1));
    assertThat(scheduled(two.step(2))).containsExactly(Map.entry(0L, 4), Map.entry(1L, 4));
    assertThat(two.steps).hasSize(2);
    assertCounts(two, 2, 6, 3, 2L, 1L, 0L);
  }

  private static void assertCounts(Trace t, long drafts, long draftTokens, long accepted,
      Long... perPosition) {
    SpeculativeCounts c = t.result.speculative().orElseThrow();
    assertThat(c.drafts()).isEqualTo(drafts);
    assertThat(c.draftTokens()).isEqualTo(draftTokens);
    assertThat(c.acceptedTokens()).isEqualTo(accepted);
    assertThat(c.acceptedPerPosition()).containsExactly(perPosition);
  }

  /**
   * vLLM {@code tests/v1/core/test_scheduler.py::test_no_spec_tokens_scheduled_for_prefill_chunks}:
   * K = 3, 50 tokens a step, an 80-token prompt: 50, then the remaining 30 without drafts, then a
   * verification of 1 + 3 tokens.
   */
  @Test
  void aPrefillChunkNeverCarriesDrafts() {
    Trace t = specRun(ngram(3, 0, 0, 0), 50, List.of(req(0, 0, 80, 16)));
    assertThat(scheduled(t.step(1))).containsExactly(Map.entry(0L, 50));
    assertThat(scheduled(t.step(2))).containsExactly(Map.entry(0L, 30));
    assertThat(state(t.step(2), 0).prefill()).isTrue();
    assertThat(scheduled(t.step(3))).containsExactly(Map.entry(0L, 4));
    assertThat(state(t.step(3), 0).prefill()).isFalse();
  }

  /**
   * vLLM {@code tests/v1/core/test_scheduler.py::test_spec_decode_padding_first_decode_step}: K =
   * 3, prefix caching, blocks of 16. Two identical 33-token prompts; the first prefills and then
   * verifies drafts; the second arrives, finds 32 tokens cached, and its first step (1 token to
   * compute) is padded with 3 placeholder drafts to 4 tokens, the shape of the other decodes.
   */
  @Test
  @Disabled("differs: a request whose prompt is cached but for its last token is scheduled 1 token,"
      + " vLLM pads it to 1 + K with placeholder drafts")
  void aFirstDecodeStepAfterAFullPrefixHitIsPaddedToTheDraftShape() {
    int[] prompt = repeated(0, 33);
    List<RequestSpec> reqs = List.of(RequestSpec.simple(1, 0, prompt, 16),
        RequestSpec.simple(2, 500, prompt, 16));
    Trace t = specRun(ngram(3, 0, 0, 0), VLLM_DEFAULT_BUDGET, reqs);
    assertThat(scheduled(t.step(1))).containsExactly(Map.entry(1L, 33));
    assertThat(state(t.step(2), 2).computedTokens()).isEqualTo(32);
    assertThat(scheduled(t.step(2))).containsExactly(Map.entry(1L, 4), Map.entry(2L, 4));
  }

  /**
   * vLLM {@code tests/v1/core/test_scheduler.py::test_spec_decode_padding_skipped_with_prefill_in_batch}:
   * K = 3, 64 tokens a step. A 33-token prompt is cached (its request, of one output token,
   * finishes after its prefill); a 100-token prompt prefills 64 tokens; then a request with the
   * cached prompt arrives and, next to the long prompt's last 36-token chunk, gets exactly 1
   * token (no padding with a prefill in the batch).
   */
  @Test
  void aFirstDecodeStepNextToAPrefillChunkIsNotPadded() {
    int[] prompt = repeated(0, 33);
    List<RequestSpec> reqs = List.of(RequestSpec.simple(0, 0, prompt, 1), req(1, 1_500, 100, 16),
        RequestSpec.simple(2, 2_000, prompt, 16));
    Trace t = specRun(ngram(3, 0, 0, 0), 64, reqs);
    assertThat(scheduled(t.step(1))).containsExactly(Map.entry(0L, 33));
    assertThat(t.step(1).finished()).isEqualTo(1);
    assertThat(t.request(0).outcome()).isEqualTo(RequestOutcome.COMPLETED);
    assertThat(scheduled(t.step(2))).containsExactly(Map.entry(1L, 64));
    assertThat(scheduled(t.step(3))).containsExactly(Map.entry(1L, 36), Map.entry(2L, 1));
    assertThat(state(t.step(3), 2).computedTokens()).isEqualTo(32);
  }

  /**
   * vLLM {@code tests/v1/core/test_scheduler.py::test_stop_via_update_from_output}, its
   * "stop on max tokens" case (the EOS, stop-token and ignore-EOS cases are not expressible): K =
   * 2, every draft accepted; a request with 1 output token left after its prefill verifies 3
   * tokens that would give 3, keeps only what its length allows and finishes, while the other
   * request keeps running.
   */
  @Test
  void aVerificationThatOvershootsTheLengthIsTruncatedAndFinishesTheRequest() {
    Trace t = specRun(ngram(2, 1, 1), VLLM_DEFAULT_BUDGET,
        List.of(req(0, 0, 10, 3), req(1, 0, 10, 16)));
    assertThat(scheduled(t.step(2))).containsExactly(Map.entry(0L, 3), Map.entry(1L, 3));
    assertThat(t.step(2).finished()).isEqualTo(1);
    assertThat(t.request(0).outcome()).isEqualTo(RequestOutcome.COMPLETED);
    assertThat(t.request(0).outputTokens()).isEqualTo(3);
    assertThat(t.request(0).e2eUs()).isEqualTo(2 * STEP_US);
    assertThat(scheduled(t.step(3))).containsOnlyKeys(1L);
    assertThat(t.step(3).runningDepth()).isEqualTo(1);
    assertThat(t.request(1).outputTokens()).isEqualTo(16);
  }
}
