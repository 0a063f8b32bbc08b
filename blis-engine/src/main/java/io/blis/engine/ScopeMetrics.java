package io.blis.engine;

import io.blis.workload.RequestOutcome;
import java.util.Map;
import java.util.TreeMap;

/**
 * Counters and latency samples of one scope: one load stage, the whole run, one instance, one SLO
 * class or one tenant. Breakdown scopes keep no inter-token samples (the whole run has them).
 */
final class ScopeMetrics {

  private final int stage;
  private final ValueStore e2e;
  private final ValueStore ttft;
  /** Inter-token samples; null in breakdown scopes. */
  private final ValueStore itl;
  private final ValueStore schedulingDelay;
  private final Map<String, Long> rejectedByReason = new TreeMap<>();
  long injected;
  long completed;
  long timedOut;
  long rejected;
  long stillQueued;
  long stillRunning;
  private long inputTokens;
  private long outputTokens;
  private long preemptions;
  private long cachedPromptTokens;
  private long good;
  private long firstArrivalUs = Long.MAX_VALUE;
  private long lastEndUs = Long.MIN_VALUE;

  ScopeMetrics(int stage, boolean streaming) {
    this(stage, streaming, true);
  }

  ScopeMetrics(int stage, boolean streaming, boolean withItl) {
    this.stage = stage;
    e2e = ValueStore.create(streaming);
    ttft = ValueStore.create(streaming);
    itl = withItl ? ValueStore.create(streaming) : null;
    schedulingDelay = ValueStore.create(streaming);
  }

  void onInjected(long arrivalUs) {
    injected++;
    firstArrivalUs = Math.min(firstArrivalUs, arrivalUs);
  }

  /**
   * Records the end of {@code r}.
   *
   * @param metSlo for a completed request, whether it met its SLO class's targets
   */
  void onFinished(EngineRequest r, RequestOutcome outcome, long endUs, String reason,
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
        inputTokens += r.inputTokens;
        outputTokens += r.outputTokens;
        preemptions += r.preemptions;
        cachedPromptTokens += Math.max(0, r.cachedPromptTokens);
        e2e.add(r.lastTokenClientUs - r.arrivalUs);
        ttft.add(r.firstTokenClientUs - r.arrivalUs);
        schedulingDelay.add(r.firstScheduledUs - r.arrivalUs);
        if (metSlo) {
          good++;
        }
        if (itl != null) {
          for (int i = 0; i < r.itlCount; i++) {
            itl.add(r.itlUs[i]);
          }
        }
      }
    }
  }

  MetricsSummary summarize() {
    long span = firstArrivalUs == Long.MAX_VALUE || lastEndUs < firstArrivalUs
        ? 0 : lastEndUs - firstArrivalUs;
    double seconds = span / 1e6;
    return new MetricsSummary(stage, injected, completed, timedOut, rejected, rejectedByReason,
        stillQueued, stillRunning, inputTokens, outputTokens, span,
        rate(completed, seconds), rate(inputTokens, seconds), rate(outputTokens, seconds),
        e2e.summarize(), ttft.summarize(), itl == null ? Distribution.EMPTY : itl.summarize(),
        schedulingDelay.summarize(), preemptions,
        inputTokens == 0 ? 0.0 : (double) cachedPromptTokens / inputTokens, good,
        rate(good, seconds));
  }

  private static double rate(long count, double seconds) {
    return seconds > 0 ? count / seconds : 0.0;
  }
}
