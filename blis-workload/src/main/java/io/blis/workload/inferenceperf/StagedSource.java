package io.blis.workload.inferenceperf;

import io.blis.workload.RequestOutcome;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import io.blis.workload.Sampling;
import java.util.ArrayDeque;
import java.util.List;

/**
 * Synthetic inference-perf request stream. Stage k starts at {@code S_k}: {@code S_0 = 0}, {@code
 * S_{k+1}} = the time the last request of stage k finished (completed, timed out or rejected) +
 * the stage interval. Send times within a stage come from {@link StageArrivals}; the n-th request
 * of a stage uses prompt {@code n mod N}. Until stage k+1 may start, {@code next()} returns null
 * and {@code exhausted()} false.
 *
 * <p>Multi-turn chat (newer inference-perf): prompt {@code u} is user u's session (session id u,
 * rounds counted per user over the whole run). A user's prompt is its group's shared prefix, its
 * context, then its question; after a completed round the context grows by the question, the
 * response ({@code output_len} tokens) and a joining token, so each round's prompt extends the
 * previous one (same token ids). Rounds of a user are serialized: a request scheduled while the
 * user's previous round is in flight is sent when that round ends (returned by {@code
 * onFinished}), at its scheduled time or the end time, whichever is later. Contexts persist
 * across stages (the sessions live in the data generator, which inference-perf creates once).
 */
final class StagedSource implements RequestSource {

  private final InferencePerfProfile profile;
  private final PromptSet prompts;
  private final long seed;
  private final long timeoutUs;
  private int stage;
  private long stageStartUs;
  private StageArrivals arrivals;
  private boolean allSent;
  private int sentInStage;
  private int finishedInStage;
  private long lastFinishUs;
  private long nextId;
  private boolean done;
  /** Multi-turn state per user (send position): context tokens, rounds sent, busy, parked sends. */
  private final int[] contextTokens;
  private final int[] roundsSent;
  private final boolean[] busy;
  private final ArrayDeque<long[]>[] parked;

  StagedSource(InferencePerfProfile profile, PromptSet prompts, long seed) {
    this.profile = profile;
    this.prompts = prompts;
    this.seed = seed;
    this.timeoutUs = Math.round(profile.clientTimeoutS() * 1e6);
    int users = profile.multiTurnChat() ? prompts.size() : 0;
    this.contextTokens = new int[users];
    this.roundsSent = new int[users];
    this.busy = new boolean[users];
    @SuppressWarnings("unchecked")
    ArrayDeque<long[]>[] queues = new ArrayDeque[users];
    this.parked = queues;
    startStage(0, 0);
  }

  private void startStage(int k, long startUs) {
    if (k >= profile.stages().size()) {
      done = true;
      return;
    }
    stage = k;
    stageStartUs = startUs;
    arrivals = new StageArrivals(
        profile.stages().get(k), profile.loadType(),
        Sampling.mix(Sampling.subSeed(seed, "inference-perf:stage"), k));
    allSent = false;
    sentInStage = 0;
    finishedInStage = 0;
    lastFinishUs = startUs;
  }

  @Override
  public RequestSpec next() {
    while (!done) {
      if (!allSent) {
        double offsetS = arrivals.next();
        if (!Double.isNaN(offsetS)) {
          RequestSpec r = request(offsetS);
          if (r != null) {
            return r;
          }
          continue;
        }
        allSent = true;
      }
      if (finishedInStage < sentInStage) {
        return null;
      }
      // Every request of the stage finished (or the stage had none).
      startStage(stage + 1, lastFinishUs + Math.round(profile.stageIntervalS() * 1e6));
    }
    return null;
  }

  /** The request scheduled at {@code offsetS}, or null when it is parked behind its user. */
  private RequestSpec request(double offsetS) {
    long arrivalUs = stageStartUs + Math.round(offsetS * 1e6);
    int p = sentInStage % prompts.size();
    sentInStage++;
    if (profile.multiTurnChat()) {
      if (busy[p]) {
        if (parked[p] == null) {
          parked[p] = new ArrayDeque<>();
        }
        parked[p].add(new long[] {arrivalUs, stage});
        return null;
      }
      return turn(p, arrivalUs, stage);
    }
    return new RequestSpec(
        nextId++, arrivalUs, prompts.tokens(p), prompts.outputTokens(p), "standard", "",
        prompts.groupName(p), prompts.prefixTokens(p), -1, 0, timeoutUs, stage);
  }

  @Override
  public boolean exhausted() {
    return done;
  }

  private RequestSpec turn(int p, long arrivalUs, int requestStage) {
    busy[p] = true;
    int prefix = prompts.prefixTokens(p);
    int question = prompts.inputTokens(p) - prefix;
    long length = (long) prefix + contextTokens[p] + question;
    if (length > RequestSpec.MAX_TOKENS) {
      throw new IllegalArgumentException("multi-turn chat: round " + roundsSent[p] + " of user " + p
          + " would have a prompt of " + length + " tokens (the accumulated context), more than the "
          + RequestSpec.MAX_TOKENS + " a request may have; shorten the stages or the lengths");
    }
    int[] tokens = contextTokens[p] == 0 ? prompts.tokens(p) : prompts.build(p, (int) length);
    return new RequestSpec(
        nextId++, arrivalUs, tokens, prompts.outputTokens(p), "standard", "",
        prompts.groupName(p), prefix, p, roundsSent[p]++, timeoutUs, requestStage);
  }

  @Override
  public List<RequestSpec> onFinished(RequestSpec request, RequestOutcome outcome, long timeUs) {
    if (!done && request.stage() == stage) {
      finishedInStage++;
      lastFinishUs = Math.max(lastFinishUs, timeUs);
    }
    if (!profile.multiTurnChat() || request.sessionId() < 0) {
      return List.of();
    }
    int p = (int) request.sessionId();
    busy[p] = false;
    if (outcome == RequestOutcome.COMPLETED) {
      int question = prompts.inputTokens(p) - prompts.prefixTokens(p);
      contextTokens[p] = (int) Math.min(Integer.MAX_VALUE,
          (long) contextTokens[p] + question + prompts.outputTokens(p) + 1);
    }
    if (parked[p] == null || parked[p].isEmpty()) {
      return List.of();
    }
    long[] next = parked[p].poll();
    return List.of(turn(p, Math.max(next[0], timeUs), (int) next[1]));
  }
}
