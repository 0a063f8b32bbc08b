package io.blis.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.blis.api.LatencyModel;
import io.blis.engine.result.SimulationResult;
import io.blis.engine.spec.AcceptanceProfile;
import io.blis.engine.spec.SpeculativeConfig;
import io.blis.engine.spec.SpeculativeMethod;
import io.blis.engine.spec.SpeculativeModel;
import io.blis.engine.spec.Speculator;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The engine's side of speculative decoding: tokens scheduled, KV reserved, tokens emitted. */
class SpeculativeEngineTest {

  private static SpeculativeConfig config(SpeculativeMethod m, int k, double... rates) {
    return new SpeculativeConfig(m, k, AcceptanceProfile.ofPositionRates(rates), "test", "", 1, 0);
  }

  private static LatencyModel speculating(LatencyModel target, LatencyModel drafter, SpeculativeConfig c, long seed) {
    return new SpeculativeModel(target, drafter, new Speculator(c, seed, 0));
  }

  private static RecordedRun run(LatencyModel model, List<RequestSpec> reqs, EngineLimits limits, long blocks, int blockSize) {
    return RecordedRun.of(Simulation.builder().latencyModel(model).limits(limits).totalKvBlocks(blocks)
        .blockSizeTokens(blockSize).source(RequestSource.of(reqs)));
  }

  @Test
  void everyDraftAcceptedEmitsKPlusOneTokensAStepAndStopsAtTheRequestsLength() {
    SpeculativeConfig c = config(SpeculativeMethod.EAGLE3, 3, 1, 1, 1);
    RecordedRun run = run(speculating(LinearTestModel.constant(1000), null, c, 1),
        List.of(TestRequests.req(1, 0, 16, 9)), EngineLimits.defaults(), 100, 16);
    // prefill emits token 1; two verifications emit 4 each (the second exactly reaches 9)
    assertThat(run.steps()).hasSize(3);
    assertThat(run.steps().get(1).decodeTokens()).as("the last token and 3 drafts").isEqualTo(4);
    assertThat(run.result().overall().outputTokens()).isEqualTo(9);
    var counts = run.result().speculative().orElseThrow();
    assertThat(counts.drafts()).isEqualTo(2);
    assertThat(counts.draftTokens()).isEqualTo(6);
    assertThat(counts.acceptedTokens()).isEqualTo(6);
    assertThat(counts.meanAcceptanceLength()).isEqualTo(4.0);
    // one streamed chunk per step: two inter-token gaps, each a whole step
    assertThat(run.result().overall().itl().count()).isEqualTo(2);
  }

  @Test
  void noDraftAcceptedStillVerifiesKPlusOneTokensAndEmitsOne() {
    SpeculativeConfig c = config(SpeculativeMethod.EAGLE3, 3, 0, 0, 0);
    RecordedRun run = run(speculating(LinearTestModel.constant(1000), null, c, 1),
        List.of(TestRequests.req(1, 0, 16, 5)), EngineLimits.defaults(), 100, 16);
    assertThat(run.steps()).hasSize(5);
    for (StepRecord s : run.steps().subList(1, 5)) {
      assertThat(s.decodeTokens()).isEqualTo(4);
    }
    assertThat(run.result().speculative().orElseThrow().acceptanceRate()).isZero();
  }

  @Test
  void eagleReservesLookaheadSlotsAndNgramDoesNot() {
    // block size 4, prompt 4: the first verification schedules 4 tokens after 4 computed ones;
    // EAGLE-3 reserves 3 lookahead slots more (11 tokens, 3 blocks), n-gram none (8 tokens, 2 blocks)
    List<RequestSpec> one = List.of(TestRequests.req(1, 0, 4, 3));
    RecordedRun eagle = run(speculating(LinearTestModel.constant(1000), null, config(SpeculativeMethod.EAGLE3, 3, 0, 0, 0), 1),
        one, EngineLimits.defaults(), 100, 4);
    RecordedRun ngram = run(speculating(LinearTestModel.constant(1000), null, config(SpeculativeMethod.NGRAM, 3, 0, 0, 0), 1),
        one, EngineLimits.defaults(), 100, 4);
    StepRecord.RequestState e = eagle.steps().get(1).requests().get(0);
    StepRecord.RequestState n = ngram.steps().get(1).requests().get(0);
    assertThat(e.blocksAllocated()).isEqualTo(3);
    assertThat(n.blocksAllocated()).isEqualTo(2);
    // admission itself reserves no lookahead, as vLLM's: the prefill step held one block
    assertThat(eagle.steps().get(0).requests().get(0).blocksAllocated()).isEqualTo(1);
  }

  @Test
  void lookaheadSlotsCountAgainstTheKvCacheAndPreemptEarlier() {
    // 8 requests of 16 prompt tokens, 48 output tokens; 40 blocks of 4 tokens (160 tokens) do not
    // hold them all: the lookahead makes the cache run out sooner, so more preemptions
    List<RequestSpec> reqs = new ArrayList<>();
    for (int i = 1; i <= 8; i++) {
      reqs.add(TestRequests.req(i, 0, 16, 48));
    }
    SimulationResult withLookahead = run(speculating(LinearTestModel.constant(1000), null,
        config(SpeculativeMethod.EAGLE3, 4, 0.5), 3), reqs, EngineLimits.defaults(), 40, 4).result();
    SimulationResult without = run(speculating(LinearTestModel.constant(1000), null,
        config(SpeculativeMethod.NGRAM, 4, 0.5), 3), reqs, EngineLimits.defaults(), 40, 4).result();
    assertThat(withLookahead.overall().completedRequests()).isEqualTo(8);
    assertThat(withLookahead.engine().preemptions()).isGreaterThan(without.engine().preemptions());
  }

  @Test
  void draftsAreTrimmedToTheStepsTokenBudget() {
    // two decoding requests, K = 3, a budget of 6 tokens: the first verifies 4, the second only 2
    List<RequestSpec> reqs = List.of(TestRequests.req(1, 0, 2, 6), TestRequests.req(2, 0, 2, 6));
    RecordedRun run = run(speculating(LinearTestModel.constant(1000), null, config(SpeculativeMethod.EAGLE3, 3, 0, 0, 0), 1),
        reqs, new EngineLimits(256, 6, 0, 0), 100, 16);
    StepRecord firstDecode = run.steps().get(1);
    assertThat(firstDecode.decodeTokens()).isEqualTo(6);
    assertThat(firstDecode.requests()).extracting(StepRecord.RequestState::scheduledTokens).containsExactly(4, 2);
  }

  @Test
  void theDraftersPassesAreChargedOnTopOfTheTargetsStep() {
    // target 1000 us a step, drafter 100 us a pass, no host time: a decoding step costs 1000 + 3 x 100
    SpeculativeConfig c = config(SpeculativeMethod.EAGLE3, 3, 0, 0, 0);
    RecordedRun run = run(speculating(LinearTestModel.constant(1000), LinearTestModel.constant(100), c, 1),
        List.of(TestRequests.req(1, 0, 16, 3)), EngineLimits.defaults(), 100, 16);
    assertThat(run.steps().get(1).durationUs()).isEqualTo(1300);
    // the host time per pass bounds each pass from below and adds one for the step's bookkeeping
    SpeculativeConfig hosted = new SpeculativeConfig(SpeculativeMethod.EAGLE3, 3,
        AcceptanceProfile.ofPositionRates(0, 0, 0), "test", "", 1, 250);
    RecordedRun h = run(speculating(LinearTestModel.constant(1000), LinearTestModel.constant(100), hosted, 1),
        List.of(TestRequests.req(1, 0, 16, 3)), EngineLimits.defaults(), 100, 16);
    assertThat(h.steps().get(1).durationUs()).isEqualTo(1000 + 250 + 3 * 250);
  }

  @Test
  void theSameSeedGivesTheSameRunAndAnotherSeedOtherDraws() {
    List<RequestSpec> reqs = new ArrayList<>();
    for (int i = 1; i <= 20; i++) {
      reqs.add(TestRequests.req(i, i * 1000L, 64, 100));
    }
    SpeculativeConfig c = config(SpeculativeMethod.EAGLE3, 3, 0.7, 0.5, 0.35);
    String a = run(speculating(LinearTestModel.constant(1000), null, c, 5), reqs, EngineLimits.defaults(), 1000, 16)
        .result().toJson();
    String b = run(speculating(LinearTestModel.constant(1000), null, c, 5), reqs, EngineLimits.defaults(), 1000, 16)
        .result().toJson();
    String other = run(speculating(LinearTestModel.constant(1000), null, c, 6), reqs, EngineLimits.defaults(), 1000,
        16).result().toJson();
    assertThat(a).isEqualTo(b);
    assertThat(other).isNotEqualTo(a);
  }

  @Test
  void aWorkloadsOwnAcceptanceAppliesToItsRequests() {
    // code (a tenant) accepts every draft, chat (an SLO class) none, the rest the default's half
    SpeculativeConfig c = new SpeculativeConfig(SpeculativeMethod.EAGLE3, 3, AcceptanceProfile.ofPositionRates(0.5),
        "test", "", 1, 0, java.util.Map.of("code", AcceptanceProfile.ofPositionRates(1, 1, 1), "chat",
            AcceptanceProfile.ofPositionRates(0, 0, 0)));
    RequestSpec code = TestRequests.req(1, 0, 16, 9);
    RequestSpec chat = TestRequests.req(2, 0, 16, 9);
    code = new RequestSpec(code.id(), 0, code.promptTokens(), 9, "batch", "code", code.prefixGroup(),
        code.prefixLength(), code.sessionId(), code.round(), 0, code.stage());
    chat = new RequestSpec(chat.id(), 0, chat.promptTokens(), 9, "chat", "", chat.prefixGroup(),
        chat.prefixLength(), chat.sessionId(), chat.round(), 0, chat.stage());
    RecordedRun run = run(speculating(LinearTestModel.constant(1000), null, c, 1), List.of(code, chat),
        EngineLimits.defaults(), 100, 16);
    var counts = run.result().speculative().orElseThrow();
    // code: 2 verifications keeping 3 each; chat: 8 verifications keeping none
    assertThat(counts.drafts()).isEqualTo(10);
    assertThat(counts.acceptedTokens()).isEqualTo(6);
    assertThat(c.acceptanceFor("other", "standard")).isEqualTo(c.acceptance());
  }
}
