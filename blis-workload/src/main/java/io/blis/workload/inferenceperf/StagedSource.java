package io.blis.workload.inferenceperf;

import io.blis.workload.RequestOutcome;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import io.blis.workload.Sampling;
import java.util.List;

/**
 * Synthetic inference-perf request stream. Stage k starts at {@code S_k}: {@code S_0 = 0}, {@code
 * S_{k+1}} = the time the last request of stage k finished (completed, timed out or rejected) +
 * the stage interval. Send times within a stage come from {@link StageArrivals}; the n-th request
 * of a stage uses prompt {@code n mod N}. Until stage k+1 may start, {@code next()} returns null
 * and {@code exhausted()} false.
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

  StagedSource(InferencePerfProfile profile, PromptSet prompts, long seed) {
    this.profile = profile;
    this.prompts = prompts;
    this.seed = seed;
    this.timeoutUs = Math.round(profile.clientTimeoutS() * 1e6);
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
          return request(offsetS);
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

  private RequestSpec request(double offsetS) {
    long arrivalUs = stageStartUs + Math.round(offsetS * 1e6);
    int p = sentInStage % prompts.size();
    sentInStage++;
    return new RequestSpec(
        nextId++, arrivalUs, prompts.tokens(p), profile.data().outputLen(), "standard", "",
        PromptSet.groupName(prompts.group(p)), prompts.prefixTokens(p), -1, 0, timeoutUs, stage);
  }

  @Override
  public boolean exhausted() {
    return done;
  }

  @Override
  public List<RequestSpec> onFinished(RequestSpec request, RequestOutcome outcome, long timeUs) {
    if (!done && request.stage() == stage) {
      finishedInStage++;
      lastFinishUs = Math.max(lastFinishUs, timeUs);
    }
    return List.of();
  }
}
