package io.blis.engine.metrics;

import io.blis.engine.result.Distribution;
import io.blis.engine.result.MetricsSummary;
import io.blis.workload.RequestOutcome;
import java.util.Map;
import java.util.TreeMap;

/**
 * Counters and latency samples of one scope: one load stage, the whole run, one instance, one SLO
 * class or one tenant. Breakdown scopes keep no inter-token samples (the whole run has them).
 */
public final class ScopeMetrics {

  private final int stage;
  private final ValueStore e2e;
  private final ValueStore ttft;
  /** Inter-token samples; null in breakdown scopes. */
  private ValueStore itl;
  /**
   * While not null, the scope whose inter-token samples are exactly this scope's (the whole run's,
   * for the only load stage of a run): this scope adds none of its own and reads that one's.
   */
  private ScopeMetrics itlSharedWith;
  private final ValueStore schedulingDelay;
  private final Map<String, Long> rejectedByReason = new TreeMap<>();
  private long injected;
  private long completed;
  private long timedOut;
  private long rejected;
  private long stillQueued;
  private long stillRunning;
  private long inputTokens;
  private long outputTokens;
  private long preemptions;
  private long cachedPromptTokens;
  private long good;
  private long firstArrivalUs = Long.MAX_VALUE;
  private long lastEndUs = Long.MIN_VALUE;

  public ScopeMetrics(int stage, boolean streaming) {
    this(stage, streaming, true);
  }

  public ScopeMetrics(int stage, boolean streaming, boolean withItl) {
    this.stage = stage;
    e2e = ValueStore.create(streaming);
    ttft = ValueStore.create(streaming);
    itl = withItl ? ValueStore.create(streaming) : null;
    schedulingDelay = ValueStore.create(streaming);
  }

  /** Counts a request left waiting at the end of the run. */
  public void onStillQueued() {
    stillQueued++;
  }

  /** Counts a request left running at the end of the run. */
  public void onStillRunning() {
    stillRunning++;
  }

  /** Requests injected and not yet finished (completed, timed out or rejected). */
  public long unfinished() {
    return injected - completed - timedOut - rejected;
  }

  public void onInjected(long arrivalUs) {
    injected++;
    firstArrivalUs = Math.min(firstArrivalUs, arrivalUs);
  }

  /**
   * Records the end of {@code r}.
   *
   * @param metSlo for a completed request, whether it met its SLO class's targets
   */
  public void onFinished(CompletedRequest r, RequestOutcome outcome, long endUs, String reason,
      boolean metSlo) {
    lastEndUs = Math.max(lastEndUs, endUs);
    switch (outcome) {
      case REJECTED -> {
        rejected++;
        rejectedByReason.merge(reason, 1L, Long::sum);
      }
      case TIMED_OUT -> timedOut++;
      case COMPLETED -> {
        completed++;
        inputTokens += r.inputTokens();
        outputTokens += r.outputTokens();
        preemptions += r.preemptions();
        cachedPromptTokens += Math.max(0, r.cachedPromptTokens());
        e2e.add(r.e2eUs());
        ttft.add(r.ttftUs());
        schedulingDelay.add(r.schedulingDelayUs());
        if (metSlo) {
          good++;
        }
        if (itl != null && itlSharedWith == null) {
          for (int i = 0, n = r.itlCount(); i < n; i++) {
            itl.add(r.itlUs(i));
          }
        }
      }
    }
  }

  /**
   * From now until {@link #keepOwnItl}, this scope's inter-token samples are {@code whole}'s: the
   * caller passes every completed request of this scope to {@code whole} too, and no other. Saves
   * adding each of hundreds of millions of samples twice in a run of one load stage.
   */
  public void shareItl(ScopeMetrics whole) {
    if (itl == null || whole.itl == null || whole == this) {
      throw new IllegalStateException("only two scopes with inter-token samples can share them");
    }
    itlSharedWith = whole;
  }

  /**
   * Ends {@link #shareItl}: this scope's samples become a copy of the shared ones (all of them were
   * this scope's until now) and it adds its own from here on.
   */
  public void keepOwnItl() {
    if (itlSharedWith != null) {
      itl = itlSharedWith.itl.copy();
      itlSharedWith = null;
    }
  }

  public MetricsSummary summarize() {
    long span = firstArrivalUs == Long.MAX_VALUE || lastEndUs < firstArrivalUs
        ? 0 : lastEndUs - firstArrivalUs;
    double seconds = span / 1e6;
    return new MetricsSummary(stage, injected, completed, timedOut, rejected, rejectedByReason,
        stillQueued, stillRunning, inputTokens, outputTokens, span,
        rate(completed, seconds), rate(inputTokens, seconds), rate(outputTokens, seconds),
        e2e.summarize(), ttft.summarize(),
        itl == null ? Distribution.EMPTY : (itlSharedWith != null ? itlSharedWith.itl : itl).summarize(),
        schedulingDelay.summarize(), preemptions,
        inputTokens == 0 ? 0.0 : (double) cachedPromptTokens / inputTokens, good,
        rate(good, seconds));
  }

  private static double rate(long count, double seconds) {
    return seconds > 0 ? count / seconds : 0.0;
  }
}
