package io.blis.latency.fit;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * A small hand-computed run, rebuilt from its journeys and step summaries. Token budget 8 per
 * step; every event as vLLM's journey tracing writes it ({@code scheduler.step}: the step being
 * formed on SCHEDULED and PREEMPTED, the step whose output it was on FIRST_TOKEN and FINISHED):
 *
 * <pre>
 * A: prompt 10, 3 outputs. Scheduled by step 1 (chunk 8), prompt done in step 2 (chunk 2, first
 *    token), decodes in steps 3 and 4, finished by step 4.
 * B: prompt 5, 2 outputs. Scheduled by step 2 (chunk 5, first token), decodes in step 3, finished.
 * C: prompt 6 of which 2 in the prefix cache, 4 outputs. Scheduled by step 3 (chunk 4, first
 *    token), decodes in step 4, preempted while step 5 was formed; resumed by step 6, where it
 *    computes its prompt and 2 outputs again (8 tokens, none cached: first token 3), decodes in
 *    step 7 and finishes.
 * D: prompt 7, 1 output. Scheduled by step 5 (chunk 7), first token and finished.
 *
 * step 1: A 8 @0                          prefill 1 req 8 tokens
 * step 2: A 2 @8, B 5 @0                  prefill 2 req 7 tokens
 * step 3: A 1 @10, B 1 @5, C 4 @2         prefill 1 req 4 tokens, decode 2 req 2 tokens
 * step 4: A 1 @11, C 1 @6                 decode 2 req 2 tokens
 * step 5: D 7 @0                          prefill 1 req 7 tokens
 * step 6: C 8 @0 (recompute)              prefill 1 req 8 tokens (vLLM: decode, it has outputs)
 * step 7: C 1 @8                          decode 1 req 1 token
 * </pre>
 */
class BatchReconstructionTest {

  private long clock;

  private TracedJourney.Event ev(String name, long step, int prefillDone, int prompt, int outputs,
      int preemptions, String detail) {
    return new TracedJourney.Event(name, clock += 1000, step, prefillDone, prompt, outputs,
        preemptions, detail);
  }

  private List<TracedJourney> journeys() {
    clock = 0;
    List<TracedJourney> js = new ArrayList<>();
    js.add(new TracedJourney("A", "0", List.of(), List.of(
        ev("QUEUED", -1, 0, 10, 0, 0, ""),
        ev("SCHEDULED", 1, 0, 10, 0, 0, "FIRST"),
        ev("FIRST_TOKEN", 2, 10, 10, 1, 0, ""),
        ev("FINISHED", 4, 10, 10, 3, 0, "length"))));
    js.add(new TracedJourney("B", "0", List.of(), List.of(
        ev("QUEUED", -1, 0, 5, 0, 0, ""),
        ev("SCHEDULED", 2, 0, 5, 0, 0, "FIRST"),
        ev("FIRST_TOKEN", 2, 5, 5, 1, 0, ""),
        ev("FINISHED", 3, 5, 5, 2, 0, "stopped"))));
    js.add(new TracedJourney("C", "0", List.of(), List.of(
        ev("QUEUED", -1, 0, 6, 0, 0, ""),
        ev("SCHEDULED", 3, 2, 6, 0, 0, "FIRST"),
        ev("FIRST_TOKEN", 3, 6, 6, 1, 0, ""),
        ev("PREEMPTED", 5, 6, 6, 2, 1, ""),
        ev("QUEUED", -1, 6, 6, 2, 1, ""),
        ev("SCHEDULED", 6, 6, 6, 2, 1, "RESUME"),
        ev("FINISHED", 7, 6, 6, 4, 1, "length"))));
    js.add(new TracedJourney("D", "0", List.of(), List.of(
        ev("QUEUED", -1, 0, 7, 0, 0, ""),
        ev("SCHEDULED", 5, 0, 7, 0, 0, "FIRST"),
        ev("FIRST_TOKEN", 5, 7, 7, 1, 0, ""),
        ev("FINISHED", 5, 7, 7, 1, 0, "length"))));
    return js;
  }

  private static TracedStep summary(long id, int prefillReqs, long prefillTokens, int decodeReqs,
      long decodeTokens) {
    return new TracedStep("0", id, id * 10_000, id * 10_000 + 5_000, 5, prefillReqs, decodeReqs,
        prefillTokens, decodeTokens, -1, -1, 100, 50, 0, 0, List.of());
  }

  /** The summaries of steps 1-7 (step 6 counted as the simulator counts a recompute). */
  private static final Map<Long, TracedStep> SUMMARIES = Map.of(
      1L, summary(1, 1, 8, 0, 0),
      2L, summary(2, 2, 7, 0, 0),
      3L, summary(3, 1, 4, 2, 2),
      4L, summary(4, 0, 0, 2, 2),
      5L, summary(5, 1, 7, 0, 0),
      6L, summary(6, 1, 8, 0, 0),
      7L, summary(7, 0, 0, 1, 1));

  private static TracedStep.Request q(String id, boolean prefill, int prompt, int context,
      int outputs, int preemptions, int tokens) {
    return new TracedStep.Request(id, prefill, prompt, context, outputs, preemptions, tokens, -1, -1);
  }

  /** Each step's batch, as computed by hand above. */
  private static final Map<Long, Set<TracedStep.Request>> BATCHES = Map.of(
      1L, Set.of(q("A", true, 10, 0, 0, 0, 8)),
      2L, Set.of(q("A", true, 10, 8, 0, 0, 2), q("B", true, 5, 0, 0, 0, 5)),
      3L, Set.of(q("A", false, 10, 10, 1, 0, 1), q("B", false, 5, 5, 1, 0, 1),
          q("C", true, 6, 2, 0, 0, 4)),
      4L, Set.of(q("A", false, 10, 11, 2, 0, 1), q("C", false, 6, 6, 1, 0, 1)),
      5L, Set.of(q("D", true, 7, 0, 0, 0, 7)),
      6L, Set.of(q("C", true, 6, 0, 2, 1, 8)),
      7L, Set.of(q("C", false, 6, 8, 3, 1, 1)));

  private static List<TracedStep> steps(long... ids) {
    List<TracedStep> out = new ArrayList<>();
    for (long id : ids) {
      out.add(SUMMARIES.get(id));
    }
    return out;
  }

  private static Map<Long, Set<TracedStep.Request>> batches(BatchReconstruction.Result r) {
    Map<Long, Set<TracedStep.Request>> out = new TreeMap<>();
    for (TracedStep s : r.steps()) {
      out.put(s.stepId(), Set.copyOf(s.requests()));
    }
    return out;
  }

  private static Map<Long, Set<TracedStep.Request>> expected(long... ids) {
    Map<Long, Set<TracedStep.Request>> out = new TreeMap<>();
    for (long id : ids) {
      out.put(id, BATCHES.get(id));
    }
    return out;
  }

  @Test
  void everyStepTracedRebuildsEveryBatchExactly() {
    BatchReconstruction.Result r = BatchReconstruction.reconstruct(steps(1, 2, 3, 4, 5, 6, 7),
        journeys());
    assertThat(batches(r)).isEqualTo(expected(1, 2, 3, 4, 5, 6, 7));
    assertThat(r.leftOut()).isEmpty();
    // the summaries are carried over unchanged
    assertThat(r.steps().get(2).decodeRequests()).isEqualTo(2);
    assertThat(r.steps().get(2).startNs()).isEqualTo(30_000);
  }

  @Test
  void sampledStepsTakeTheUnknownChunkFromTheSummaryAndTheContextFromThePrefillsEnd() {
    // step 1 not traced: A's first chunk is unknown, its second is step 2's total minus B's 5,
    // and its context is A's prompt minus that chunk; C's restart point follows from step 6
    BatchReconstruction.Result r = BatchReconstruction.reconstruct(steps(2, 4, 6), journeys());
    assertThat(batches(r)).isEqualTo(expected(2, 4, 6));
    assertThat(r.leftOut()).isEmpty();
  }

  @Test
  void vllmsPhaseSplitIsAcceptedToo() {
    // vLLM counts C's recompute in step 6 as decode (it has output tokens)
    List<TracedStep> steps = steps(1, 2, 3, 4, 5, 7);
    steps.add(summary(6, 0, 0, 1, 8));
    BatchReconstruction.Result r = BatchReconstruction.reconstruct(steps, journeys());
    assertThat(batches(r)).isEqualTo(expected(1, 2, 3, 4, 5, 6, 7));
  }

  @Test
  void aStepWhoseSummaryDisagreesIsLeftOutAndCounted() {
    List<TracedStep> steps = steps(1, 2, 3, 5, 6, 7);
    steps.add(summary(4, 0, 0, 2, 3)); // three decode tokens for two decoding requests
    steps.add(summary(8, 0, 0, 1, 1)); // no journey puts a request in step 8
    BatchReconstruction.Result r = BatchReconstruction.reconstruct(steps, journeys());
    assertThat(batches(r)).isEqualTo(expected(1, 2, 3, 5, 6, 7));
    assertThat(r.leftOut()).containsExactlyInAnyOrderEntriesOf(
        Map.of("disagrees_with_summary", 1L, "untraced_requests", 1L));
  }

  @Test
  void stepsWithAnUntracedRequestAreLeftOutNotFittedPartially() {
    // B's journey was not sampled: steps 2 and 3 have a request the journeys do not show; A's
    // second chunk still follows from its prompt and step 1
    List<TracedJourney> js = journeys().stream().filter(j -> !j.requestId().equals("B")).toList();
    BatchReconstruction.Result r = BatchReconstruction.reconstruct(steps(1, 2, 3, 4, 5, 6, 7), js);
    assertThat(batches(r)).isEqualTo(expected(1, 4, 5, 6, 7));
    assertThat(r.leftOut()).isEqualTo(Map.of("untraced_requests", 2L));
  }

  @Test
  void twoUnknownChunksInOneStepAreNotGuessed() {
    // B resumed (its restart point unknown) in step 2 next to A's second chunk, step 1 untraced
    List<TracedJourney> js = new ArrayList<>(journeys());
    clock = 100_000;
    js.set(1, new TracedJourney("B", "0", List.of(), List.of(
        ev("QUEUED", -1, 0, 5, 0, 1, ""),
        ev("SCHEDULED", 2, 3, 5, 0, 1, "RESUME"),
        ev("FIRST_TOKEN", 2, 5, 5, 1, 1, ""),
        ev("FINISHED", 3, 5, 5, 2, 1, "stopped"))));
    BatchReconstruction.Result r = BatchReconstruction.reconstruct(steps(2, 4), js);
    assertThat(batches(r)).isEqualTo(expected(4));
    assertThat(r.leftOut()).isEqualTo(Map.of("prefill_chunks_undetermined", 1L));
    // with step 1 traced, A's chunks are known and B's 5 follows
    BatchReconstruction.Result all = BatchReconstruction.reconstruct(steps(1, 2, 4), js);
    assertThat(batches(all).get(2L)).isEqualTo(Set.of(q("A", true, 10, 8, 0, 0, 2),
        q("B", true, 5, 0, 0, 1, 5)));
  }

  @Test
  void requestsCutByTheTracesStartOrEndMakeTheirStepsUncertain() {
    List<TracedJourney> js = new ArrayList<>(journeys());
    clock = 100_000;
    // C's span ended before it finished (the trace was cut after its resume)
    js.set(2, new TracedJourney("C", "0", List.of(), js.get(2).core().subList(0, 6)));
    // E ran from before the trace began: first token in step 1, decodes in 2-4, finished by 4
    js.add(new TracedJourney("E", "0", List.of(), List.of(
        ev("FIRST_TOKEN", 1, 9, 9, 1, 0, ""),
        ev("FINISHED", 4, 9, 9, 4, 0, "length"))));
    List<TracedStep> steps = new ArrayList<>();
    steps.add(summary(1, 2, 9, 0, 0)); // A's 8 and E's last prompt token: E uncertain here
    steps.add(summary(2, 2, 7, 1, 1));
    steps.add(summary(3, 1, 4, 3, 3));
    steps.add(summary(4, 0, 0, 3, 3));
    steps.add(summary(5, 1, 7, 0, 0));
    steps.add(summary(6, 1, 8, 0, 0));
    steps.add(summary(7, 0, 0, 1, 1));
    BatchReconstruction.Result r = BatchReconstruction.reconstruct(steps, js);
    Map<Long, Set<TracedStep.Request>> want = expected(2, 3, 4, 5);
    want.put(2L, plus(BATCHES.get(2L), q("E", false, 9, 9, 1, 0, 1)));
    want.put(3L, plus(BATCHES.get(3L), q("E", false, 9, 10, 2, 0, 1)));
    want.put(4L, plus(BATCHES.get(4L), q("E", false, 9, 11, 3, 0, 1)));
    assertThat(batches(r)).isEqualTo(want);
    assertThat(r.leftOut()).isEqualTo(Map.of("uncertain_journeys", 3L));
  }

  @Test
  void aRequestEndedByNoStepIsUncertainOnlyInTheStepsStartedBeforeItsEnd() {
    // E (prompt 3) scheduled by step 5 next to D, timed out at 55,000 ns while step 5 ran
    // (steps start at id x 10,000 ns): no step ended it, so step 5 may or may not have run it,
    // and steps 6 and 7, started after, did not
    List<TracedJourney> js = new ArrayList<>(journeys());
    js.add(new TracedJourney("E", "0", List.of(), List.of(
        new TracedJourney.Event("QUEUED", 40_000, -1, 0, 3, 0, 0, ""),
        new TracedJourney.Event("SCHEDULED", 49_000, 5, 0, 3, 0, 0, "FIRST"),
        new TracedJourney.Event("FINISHED", 55_000, -1, 0, 3, 0, 0, "aborted"))));
    List<TracedStep> steps = steps(1, 2, 3, 4, 6, 7);
    steps.add(summary(5, 2, 10, 0, 0));
    BatchReconstruction.Result r = BatchReconstruction.reconstruct(steps, js);
    assertThat(batches(r)).isEqualTo(expected(1, 2, 3, 4, 6, 7));
    assertThat(r.leftOut()).isEqualTo(Map.of("uncertain_journeys", 1L));
  }

  @Test
  void aRequestRejectedBeforeItRanIsNoUncertainty() {
    List<TracedJourney> js = new ArrayList<>(journeys());
    clock = 100_000;
    js.add(new TracedJourney("R", "0", List.of(), List.of(ev("FINISHED", 4, 0, 9000, 0, 0, "error"))));
    BatchReconstruction.Result r = BatchReconstruction.reconstruct(steps(1, 2, 3, 4, 5, 6, 7), js);
    assertThat(batches(r)).isEqualTo(expected(1, 2, 3, 4, 5, 6, 7));
  }

  private static Set<TracedStep.Request> plus(Set<TracedStep.Request> s, TracedStep.Request q) {
    Set<TracedStep.Request> out = new java.util.HashSet<>(s);
    out.add(q);
    return out;
  }

  @Test
  void theRebuiltBatchIsWhatTheStepFitSees() {
    BatchReconstruction.Result r = BatchReconstruction.reconstruct(steps(3), journeys());
    TracedBatch b = new TracedBatch(r.steps().get(0));
    List<String> seen = new ArrayList<>();
    for (int i = 0; i < b.size(); i++) {
      var v = b.get(i);
      seen.add(v.phase() + " " + v.inputTokens() + " " + v.progressIndex() + " " + v.newTokens()
          + " " + v.generatedTokens());
    }
    assertThat(seen.stream().sorted().collect(Collectors.toList())).containsExactly(
        "DECODE 10 10 1 1", "DECODE 5 5 1 1", "PREFILL 6 2 4 0");
  }
}
