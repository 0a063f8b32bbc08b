package io.blis.workload.inferenceperf;

import io.blis.workload.RequestOutcome;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import io.blis.workload.Sampling;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Synthetic inference-perf request stream. Stage k starts at {@code S_k}: {@code S_0 = 0}, {@code
 * S_{k+1}} = the time the last request of stage k finished + the stage interval. Within a stage,
 * {@code n = int(rate x duration)} exponential gaps are drawn and rescaled to sum to the duration;
 * request i (1-based) is sent at {@code S_k + 1 s + duration x (g_1 + ... + g_i) / (g_1 + ... +
 * g_n)} and uses prompt {@code (i - 1) mod N}. The gaps are drawn twice from the same seed (once to
 * sum them, once to emit them), so nothing per request is stored.
 */
final class StagedSource implements RequestSource {

  static final double STAGE_START_DELAY_S = 1.0;

  private final InferencePerfProfile profile;
  private final PromptSet prompts;
  private final long seed;
  private final long timeoutUs;
  private int stage = -1;
  private long stageStartUs;
  private int stageCount;
  private int sentInStage;
  private int finishedInStage;
  private long lastFinishUs;
  private SplittableRandom gaps;
  private double gapSum;
  private double cumulative;
  private long nextId;
  private boolean done;

  StagedSource(InferencePerfProfile profile, PromptSet prompts, long seed) {
    this.profile = profile;
    this.prompts = prompts;
    this.seed = seed;
    this.timeoutUs = Math.round(profile.clientTimeoutS() * 1e6);
    startStage(0, 0);
  }

  private void startStage(int k, long startUs) {
    while (k < profile.stages().size() && profile.stages().get(k).numRequests() == 0) {
      startUs += Math.round(profile.stageIntervalS() * 1e6);
      k++;
    }
    if (k >= profile.stages().size()) {
      done = true;
      return;
    }
    stage = k;
    stageStartUs = startUs;
    stageCount = profile.stages().get(k).numRequests();
    sentInStage = 0;
    finishedInStage = 0;
    lastFinishUs = startUs;
    long stageSeed = Sampling.mix(Sampling.subSeed(seed, "inference-perf:stage"), k);
    SplittableRandom sum = new SplittableRandom(stageSeed);
    gapSum = 0;
    for (int i = 0; i < stageCount; i++) {
      gapSum += Sampling.exponential(sum, 1.0);
    }
    gaps = new SplittableRandom(stageSeed);
    cumulative = 0;
  }

  @Override
  public RequestSpec next() {
    if (done || sentInStage == stageCount) {
      return null;
    }
    cumulative += Sampling.exponential(gaps, 1.0);
    double durationS = profile.stages().get(stage).durationS();
    double offsetS = STAGE_START_DELAY_S + durationS * Math.min(1.0, cumulative / gapSum);
    long arrivalUs = stageStartUs + Math.round(offsetS * 1e6);
    int p = sentInStage % prompts.size();
    sentInStage++;
    int[] tokens = prompts.tokens(p);
    return new RequestSpec(
        nextId++, arrivalUs, tokens, profile.data().outputLen(), "standard", "",
        PromptSet.groupName(prompts.group(p)), prompts.prefixTokens(p), -1, 0, timeoutUs, stage);
  }

  @Override
  public boolean exhausted() {
    return done;
  }

  @Override
  public List<RequestSpec> onFinished(RequestSpec request, RequestOutcome outcome, long timeUs) {
    if (done || request.stage() != stage) {
      return List.of();
    }
    finishedInStage++;
    lastFinishUs = Math.max(lastFinishUs, timeUs);
    if (finishedInStage == stageCount) {
      startStage(stage + 1, lastFinishUs + Math.round(profile.stageIntervalS() * 1e6));
    }
    return List.of();
  }
}
