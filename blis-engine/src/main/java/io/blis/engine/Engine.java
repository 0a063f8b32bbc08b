package io.blis.engine;

import io.blis.api.LatencyModel;
import io.blis.api.Scheduler;
import io.blis.kvcache.KvBlockPool;
import io.blis.workload.RequestOutcome;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One serving instance mirroring the vLLM v1 engine, driven by a discrete-event loop on an integer
 * microsecond clock. See {@link Simulation} for the request timeline and scheduling rules.
 */
final class Engine {

  static final String REJECT_PROMPT_TOO_LONG = "prompt_exceeds_max_model_len";
  static final String REJECT_TOTAL_TOO_LONG = "prompt_plus_output_exceeds_max_model_len";
  static final String REJECT_KV_CAPACITY = "exceeds_kv_cache_capacity";

  /** Per-step hook for tests; called after a batch is formed and timed. */
  interface StepObserver {
    void onStep(long startUs, long stepUs, RequestList batch, RequestList running,
        int waitingSize, KvBlockPool pool);
  }

  private final LatencyModel model;
  private final Scheduler scheduler;
  private final EngineLimits limits;
  private final KvBlockPool pool;
  private final RequestSource source;
  private final boolean recordRequests;
  private final boolean streamingMetrics;
  private final long horizonUs;
  private final StepObserver observer;

  private final EventQueue events = new EventQueue();
  private final WaitingQueue waiting = new WaitingQueue();
  private final RequestList running = new RequestList();
  private final RequestList batch = new RequestList();
  private final ScopeMetrics overall;
  private final Map<Integer, ScopeMetrics> stages = new TreeMap<>();
  private final List<RequestRecord> records = new ArrayList<>();

  private long nowUs;
  private long lastEndUs;
  private boolean stepPending;
  private RequestSpec pendingOpenLoop;
  private boolean sourceDone;
  private long preemptionEvents;
  private long steps;
  private ScopeMetrics lastScope;

  Engine(LatencyModel model, Scheduler scheduler, EngineLimits limits, KvBlockPool pool,
      RequestSource source, boolean recordRequests, boolean streamingMetrics, long horizonUs,
      StepObserver observer) {
    this.model = model;
    this.scheduler = scheduler;
    this.limits = limits;
    this.pool = pool;
    this.source = source;
    this.recordRequests = recordRequests;
    this.streamingMetrics = streamingMetrics;
    this.horizonUs = horizonUs;
    this.observer = observer;
    this.overall = new ScopeMetrics(-1, streamingMetrics);
  }

  SimulationResult run() {
    pullNext();
    while (!events.isEmpty() && events.peekTimeUs() <= horizonUs) {
      long t = events.pop();
      if (t < nowUs) {
        throw new IllegalStateException("clock went backwards: " + t + " < " + nowUs);
      }
      nowUs = t;
      Object payload = events.poppedPayload();
      switch (events.poppedType()) {
        case EventQueue.ARRIVAL -> onArrival((RequestSpec) payload);
        case EventQueue.QUEUED -> onQueued((EngineRequest) payload);
        case EventQueue.STEP -> onStep();
        case EventQueue.TIMEOUT -> onTimeout((EngineRequest) payload);
        default -> throw new IllegalStateException("unknown event type " + events.poppedType());
      }
    }
    return finish();
  }

  // ---------------------------------------------------------------- requests in and out

  private void pullNext() {
    if (sourceDone || pendingOpenLoop != null) {
      return;
    }
    RequestSpec spec = source.next();
    if (spec == null) {
      sourceDone = source.exhausted();
      return;
    }
    checkArrival(spec);
    pendingOpenLoop = spec;
    events.push(spec.arrivalTimeUs(), EventQueue.ARRIVAL, spec);
  }

  private void checkArrival(RequestSpec spec) {
    if (spec.arrivalTimeUs() < nowUs) {
      throw new IllegalArgumentException("request source: request " + spec.id() + " arrives at "
          + spec.arrivalTimeUs() + " us, before the current simulation time " + nowUs + " us");
    }
  }

  private ScopeMetrics scope(int stage) {
    ScopeMetrics s = lastScope;
    if (s == null || s != stages.get(stage)) {
      s = stages.computeIfAbsent(stage, k -> new ScopeMetrics(k, streamingMetrics));
      lastScope = s;
    }
    return s;
  }

  private void onArrival(RequestSpec spec) {
    boolean openLoop = spec == pendingOpenLoop;
    long deadline = spec.timeoutUs() > 0 ? nowUs + spec.timeoutUs() : 0;
    EngineRequest r = new EngineRequest(spec, nowUs, deadline);
    overall.onInjected(nowUs);
    scope(spec.stage()).onInjected(nowUs);
    if (deadline > 0) {
      events.push(deadline, EventQueue.TIMEOUT, r);
    }
    long queueingUs = model.queueingTime(r);
    if (queueingUs < 0) {
      throw new IllegalStateException("latency model returned a negative queueing time " + queueingUs);
    }
    events.push(nowUs + queueingUs, EventQueue.QUEUED, r);
    if (openLoop) {
      pendingOpenLoop = null;
      pullNext();
    }
  }

  private String rejectReason(EngineRequest r) {
    int maxLen = limits.maxModelLen();
    if (maxLen > 0 && r.inputTokens >= maxLen) {
      return REJECT_PROMPT_TOO_LONG;
    }
    if (maxLen > 0 && (long) r.inputTokens + r.outputTokens > maxLen) {
      return REJECT_TOTAL_TOO_LONG;
    }
    if (pool.blocksFor((long) r.inputTokens + r.outputTokens - 1) > pool.totalBlocks()) {
      return REJECT_KV_CAPACITY;
    }
    return null;
  }

  private void onQueued(EngineRequest r) {
    if (r.state == EngineRequest.State.FINISHED) {
      return; // timed out before it reached the queue
    }
    String reason = rejectReason(r);
    if (reason != null) {
      finish(r, RequestOutcome.REJECTED, nowUs, reason);
      return;
    }
    r.state = EngineRequest.State.WAITING;
    waiting.addLast(r);
    if (!stepPending) {
      stepPending = true;
      events.push(nowUs, EventQueue.STEP, null);
    }
  }

  private void onTimeout(EngineRequest r) {
    switch (r.state) {
      case FINISHED -> {
        return;
      }
      case WAITING -> waiting.remove(r);
      case RUNNING -> {
        running.remove(r);
        pool.free(r.table);
      }
      case ARRIVED -> { }
    }
    finish(r, RequestOutcome.TIMED_OUT, nowUs, "");
  }

  private void finish(EngineRequest r, RequestOutcome outcome, long endUs, String reason) {
    r.state = EngineRequest.State.FINISHED;
    r.table = null;
    lastEndUs = Math.max(lastEndUs, endUs);
    overall.onFinished(r, outcome, endUs, reason);
    scope(r.spec.stage()).onFinished(r, outcome, endUs, reason);
    if (recordRequests) {
      records.add(record(r, outcome, endUs, reason));
    }
    List<RequestSpec> followUps = source.onFinished(r.spec, outcome, endUs);
    for (RequestSpec f : followUps) {
      checkArrival(f);
      events.push(f.arrivalTimeUs(), EventQueue.ARRIVAL, f);
    }
    pullNext();
  }

  private static RequestRecord record(EngineRequest r, RequestOutcome outcome, long endUs,
      String reason) {
    boolean done = outcome == RequestOutcome.COMPLETED;
    long e2e = done ? r.lastTokenClientUs - r.arrivalUs
        : outcome == RequestOutcome.TIMED_OUT ? endUs - r.arrivalUs : -1;
    return new RequestRecord(r.spec.id(), r.spec.stage(), r.arrivalUs, r.inputTokens,
        done ? r.outputTokens : r.generated, outcome,
        r.firstTokenClientUs < 0 ? -1 : r.firstTokenClientUs - r.arrivalUs, e2e,
        r.firstScheduledUs < 0 ? -1 : r.firstScheduledUs - r.arrivalUs, r.preemptions,
        Math.max(0, r.cachedPromptTokens), reason == null ? "" : reason);
  }

  // ---------------------------------------------------------------- steps

  private void onStep() {
    stepPending = false;
    if (!batch.isEmpty()) {
      completeStep();
    }
    formAndLaunch();
  }

  /** Applies the step in flight: progress, emitted tokens, completions. */
  private void completeStep() {
    for (int i = 0, n = batch.size(); i < n; i++) {
      EngineRequest r = batch.get(i);
      int scheduled = r.newTokens;
      r.newTokens = 0;
      r.inFlight = false;
      if (r.state != EngineRequest.State.RUNNING) {
        continue; // aborted while the step ran
      }
      r.progress += scheduled;
      if (r.progress >= r.prefillTarget) {
        emitToken(r);
      }
    }
    batch.clear();
    running.removeFinished();
  }

  private void emitToken(EngineRequest r) {
    r.generated++;
    r.tokenOverheadUs += model.outputTokenProcessingTime();
    long clientUs = nowUs + r.schedulingOverheadUs + r.preemptionOverheadUs + r.tokenOverheadUs;
    if (r.firstTokenClientUs < 0) {
      r.firstTokenClientUs = clientUs;
      r.itlUs = new long[Math.max(0, r.outputTokens - 1)];
    } else {
      r.itlUs[r.itlCount++] = clientUs - r.lastTokenClientUs;
    }
    r.lastTokenClientUs = clientUs;
    if (r.generated == r.outputTokens) {
      pool.free(r.table);
      boolean late = r.deadlineUs > 0 && clientUs > r.deadlineUs;
      finish(r, late ? RequestOutcome.TIMED_OUT : RequestOutcome.COMPLETED,
          late ? Math.max(nowUs, r.deadlineUs) : clientUs, "");
    }
  }

  /** Forms the next batch (vLLM v1: running requests first, then waiting ones) and launches it. */
  private void formAndLaunch() {
    if (running.isEmpty() && waiting.isEmpty()) {
      return; // idle until the next request is queued
    }
    if (scheduler.ordersWaitingQueue()) {
      waiting.sort(scheduler);
    }
    int budget = limits.maxNumBatchedTokens();
    int threshold = limits.longPrefillTokenThreshold();
    boolean preempted = false;

    int i = 0;
    while (i < running.size() && budget > 0) {
      EngineRequest r = running.get(i);
      int n = 1;
      if (r.inPrefill()) {
        n = r.prefillTarget - r.progress;
        if (threshold > 0 && n > threshold) {
          n = threshold;
        }
        n = Math.min(n, budget);
      }
      boolean selfPreempted = false;
      while (!pool.grow(r.table, r.progress + n)) {
        int v = scheduler.preemptionVictim(running);
        if (v < 0 || v >= running.size()) {
          throw new IllegalStateException("scheduler chose preemption victim " + v
              + " outside the running list of " + running.size());
        }
        EngineRequest victim = running.removeAt(v);
        budget += preempt(victim);
        preempted = true;
        if (victim == r) {
          selfPreempted = true;
          break;
        }
        if (v < i) {
          i--;
        }
      }
      if (selfPreempted) {
        break;
      }
      r.newTokens = n;
      budget -= n;
      batch.add(r);
      i++;
    }

    int blockSize = pool.blockSizeTokens();
    while (!preempted && budget > 0 && !waiting.isEmpty()
        && running.size() < limits.maxNumSeqs()) {
      EngineRequest r = waiting.peekFirst();
      if (r.table == null) {
        r.table = pool.newTable(r.spec.promptTokens(), (long) r.inputTokens + r.outputTokens);
      }
      int target = r.inputTokens + r.generated;
      int cachedBlocks = Math.min(pool.cachedPrefixBlocks(r.table), (target - 1) / blockSize);
      int start = cachedBlocks * blockSize;
      int n = target - start;
      if (threshold > 0 && n > threshold) {
        n = threshold;
      }
      n = Math.min(n, budget);
      if (!pool.admit(r.table, cachedBlocks, start + n)) {
        break; // head of line: nothing behind it is admitted this step
      }
      waiting.pollFirst();
      r.state = EngineRequest.State.RUNNING;
      r.progress = start;
      r.prefillTarget = target;
      r.newTokens = n;
      budget -= n;
      if (r.firstScheduledUs < 0) {
        r.firstScheduledUs = nowUs;
        r.cachedPromptTokens = start;
        r.schedulingOverheadUs = model.schedulingProcessingTime();
      }
      running.add(r);
      batch.add(r);
    }

    if (batch.isEmpty()) {
      if (!preempted) {
        throw new IllegalStateException("engine stalled at " + nowUs + " us: " + running.size()
            + " running, " + waiting.size() + " waiting, " + pool.freeBlocks() + " free KV blocks");
      }
      stepPending = true;
      events.push(nowUs, EventQueue.STEP, null);
      return;
    }
    long stepUs = model.stepTime(batch);
    if (stepUs < 1) {
      throw new IllegalStateException("latency model returned step time " + stepUs
          + " us for a batch of " + batch.size() + " requests; it must be at least 1");
    }
    steps++;
    if (observer != null) {
      observer.onStep(nowUs, stepUs, batch, running, waiting.size(), pool);
    }
    for (int k = 0, n = batch.size(); k < n; k++) {
      batch.get(k).inFlight = true;
    }
    stepPending = true;
    events.push(nowUs + stepUs, EventQueue.STEP, null);
  }

  /** Preempts {@code victim} (already removed from the running list); returns refunded tokens. */
  private int preempt(EngineRequest victim) {
    int refund = 0;
    if (victim.newTokens > 0) {
      refund = victim.newTokens;
      victim.newTokens = 0;
      batch.remove(victim);
    }
    pool.free(victim.table);
    victim.progress = 0;
    victim.prefillTarget = 0;
    victim.preemptions++;
    victim.preemptionOverheadUs += model.preemptionProcessingTime();
    victim.state = EngineRequest.State.WAITING;
    waiting.addFirst(victim);
    preemptionEvents++;
    return refund;
  }

  // ---------------------------------------------------------------- end of run

  private SimulationResult finish() {
    countLeftovers(waiting, true);
    for (int i = 0; i < running.size(); i++) {
      leftover(running.get(i), false);
    }
    events.forEachPayload(EventQueue.QUEUED, p -> {
      EngineRequest r = (EngineRequest) p;
      if (r.state == EngineRequest.State.ARRIVED) {
        leftover(r, true);
      }
    });
    long end = Math.max(nowUs, lastEndUs);
    if (!events.isEmpty() && horizonUs != Long.MAX_VALUE) {
      end = horizonUs;
    }
    List<MetricsSummary> stageSummaries = new ArrayList<>();
    stages.values().forEach(s -> stageSummaries.add(s.summarize()));
    EngineStats kv = new EngineStats(pool.totalBlocks(), pool.blockSizeTokens(), pool.peakUsedBlocks(),
        pool.tokenHitRate(), pool.blockHitRate(), preemptionEvents, steps);
    List<RequestRecord> recs = new ArrayList<>(records);
    recs.sort(java.util.Comparator.comparingLong(RequestRecord::arrivalUs)
        .thenComparingLong(RequestRecord::id));
    return new SimulationResult(recs, overall.summarize(), stageSummaries, end, kv);
  }

  private void countLeftovers(WaitingQueue q, boolean queued) {
    for (int i = 0; i < q.size(); i++) {
      leftover(q.get(i), queued);
    }
  }

  private void leftover(EngineRequest r, boolean queued) {
    ScopeMetrics s = scope(r.spec.stage());
    if (queued) {
      overall.stillQueued++;
      s.stillQueued++;
    } else {
      overall.stillRunning++;
      s.stillRunning++;
    }
  }

  /** Current engine time (tests). */
  long nowUs() {
    return nowUs;
  }
}
