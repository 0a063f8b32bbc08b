package io.blis.engine;

import io.blis.api.InstanceSnapshot;
import io.blis.api.LatencyModel;
import io.blis.api.Scheduler;
import io.blis.kvcache.KvBlockPool;
import io.blis.workload.RequestOutcome;

/**
 * One serving instance: its waiting queue, running list, KV pool, latency model and scheduler,
 * and the vLLM v1 step logic. Driven by an {@link EventLoop}, which the engine implements. Routers see it through
 * its {@link #snapshot()}, refreshed by the engine.
 */
final class Instance {

  /** Weight of the newest step in {@link #stepEstimateUs()}. */
  private static final double STEP_EWMA_WEIGHT = 0.2;
  /** Number of SLO class ranks tracked for priority inversions (vLLM priorities 0..7). */
  static final int RANKS = io.blis.engine.policy.Priorities.LEAST_URGENT + 1;

  private final EventLoop loop;
  private final int index;
  private final String poolName;
  private final LatencyModel model;
  private final Scheduler scheduler;
  private final EngineLimits limits;
  private final KvBlockPool pool;
  private final double cpuLoadUsPerBlock;
  private final StepObserver observer;
  /** Keeps this data-parallel rank in step with its peers; null when it steps alone. */
  private final StepGate gate;
  /** The LoRA adapters this instance holds; null when it serves none. */
  private final io.blis.engine.lora.AdapterSlots adapters;
  /** The distinct adapters of the step being formed, and their tokens. */
  private String[] stepAdapters;
  /** With adapters: waiting requests by the adapter they name ("" for the base model). */
  private final java.util.Map<String, int[]> waitingByAdapter = new java.util.HashMap<>();
  private int[] stepAdapterTokens;
  private int stepAdapterCount;
  /** Steps starting before this time take {@link #slowFactor} times as long (a new replica's first requests). */
  private long slowUntilUs = Long.MIN_VALUE;
  private double slowFactor = 1;

  private final WaitingQueue waiting = new WaitingQueue();
  private final RequestList running = new RequestList();
  private final RequestList batch = new RequestList();

  private boolean stepPending;
  private long transferBusyUntilUs;
  private long lastStepStartUs;
  private long preemptionEvents;
  private long steps;
  /** Simulated time spent in steps, microseconds. */
  private long busyUs;
  private int inFlightRequests;
  private long waitingPromptTokens;
  private double stepEstimateUs;
  private long priorityInversions;
  /** Waiting requests per SLO class rank, to find priority inversions without a scan. */
  private final int[] waitingByRank = new int[RANKS];
  /** Whether this instance is on the engine's list of snapshots to refresh. */
  private boolean snapshotStale;
  private final Runnable refresher = this::refreshSnapshot;
  private final Snapshot snapshot = new Snapshot();
  /** Speculative decoding (io.blis.engine.spec), null when the instance does not speculate. */
  private final io.blis.engine.spec.Speculator spec;
  /** The API server in front of this instance (its work queue; the engine sets the cluster's); never null. */
  private io.blis.engine.frontend.ApiServerQueue apiServer =
      new io.blis.engine.frontend.ApiServerQueue(io.blis.engine.frontend.ApiServer.NONE);
  // the step in flight, for listeners
  private long stepStartUs;
  private long stepDurationUs;
  private int stepRunning;
  private int stepWaiting;
  private long stepKvFree;
  private int formingPreemptions;
  private int stepPreemptions;

  Instance(EventLoop loop, int index, String poolName, LatencyModel model, Scheduler scheduler,
      EngineLimits limits, KvBlockPool pool, double cpuLoadUsPerBlock,
      StepObserver observer, StepGate gate, io.blis.engine.lora.AdapterSlots adapters) {
    this.loop = loop;
    this.adapters = adapters;
    if (adapters != null) {
      stepAdapters = new String[adapters.maxLoras()];
      stepAdapterTokens = new int[adapters.maxLoras()];
    }
    this.gate = gate;
    this.index = index;
    this.poolName = poolName;
    this.model = model;
    this.scheduler = scheduler;
    this.limits = limits;
    this.pool = pool;
    this.cpuLoadUsPerBlock = cpuLoadUsPerBlock;
    this.observer = observer;
    this.spec = io.blis.engine.spec.SpeculativeModel.speculatorOf(model);
  }

  void apiServer(io.blis.engine.frontend.ApiServerQueue q) {
    this.apiServer = java.util.Objects.requireNonNull(q, "apiServer");
  }

  io.blis.engine.frontend.ApiServerQueue apiServer() {
    return apiServer;
  }

  /** The instance's speculative decoding, null when it does not speculate. */
  io.blis.engine.spec.Speculator speculator() {
    return spec;
  }

  KvBlockPool pool() {
    return pool;
  }

  /** The LoRA adapters this instance holds; null when it serves none. */
  io.blis.engine.lora.AdapterSlots adapters() {
    return adapters;
  }

  LatencyModel model() {
    return model;
  }

  long preemptionEvents() {
    return preemptionEvents;
  }

  long steps() {
    return steps;
  }

  /** Simulated time this instance spent in steps, microseconds. */
  long busyUs() {
    return busyUs;
  }

  WaitingQueue waiting() {
    return waiting;
  }

  RequestList running() {
    return running;
  }

  EngineLimits limits() {
    return limits;
  }

  int index() {
    return index;
  }

  String poolName() {
    return poolName;
  }

  int inFlight() {
    return inFlightRequests;
  }

  long priorityInversions() {
    return priorityInversions;
  }

  /**
   * Exponentially weighted mean of this instance's recent step times, microseconds (0 before its
   * first step).
   */
  double stepEstimateUs() {
    return stepEstimateUs;
  }

  // ---------------------------------------------------------------- router view

  /** What routers see of this instance: figures as of the last {@link #refreshSnapshot}. */
  InstanceSnapshot snapshot() {
    return snapshot;
  }

  /** Copies the queue, batch and KV figures into the snapshot routers see. */
  void refreshSnapshot() {
    snapshot.queueDepth = waiting.size();
    snapshot.running = running.size();
    snapshot.kvUtilization = (double) pool.usedBlocks() / pool.totalBlocks();
    snapshot.queuedPromptTokens = waitingPromptTokens;
    snapshot.stepEstimateUs = stepEstimateUs;
    if (adapters != null) {
      refreshAdapters();
    }
    snapshotStale = false;
  }

  /** The adapters a gateway sees here: on the GPU, or named by a request running or waiting. */
  private void refreshAdapters() {
    java.util.Set<String> held = snapshot.adapters;
    held.clear();
    for (String a : adapters.residentNames()) {
      held.add(a);
    }
    for (int k = 0, n = running.size(); k < n; k++) {
      String a = running.get(k).spec.adapter();
      if (!a.isEmpty()) {
        held.add(a);
      }
    }
    for (int k = 0, n = waiting.size(); k < n; k++) {
      String a = waiting.get(k).spec.adapter();
      if (!a.isEmpty()) {
        held.add(a);
      }
    }
    snapshot.freeAdapterSlots = Math.max(0, adapters.maxLoras() - adapters.resident());
  }

  /**
   * The figures of the snapshot may have changed: every event of the instance that touches its
   * queue, batch, KV blocks or step estimate calls this first, and the engine refreshes only the
   * snapshots of instances that called it since the last refresh (the others hold the same).
   */
  private void changed() {
    if (!snapshotStale) {
      snapshotStale = true;
      loop.snapshotStale(refresher);
    }
  }

  /**
   * The router's view: periodically refreshed figures, plus the always-current in-flight count
   * and prefix-cache lookup.
   */
  final class Snapshot implements InstanceSnapshot {
    private int queueDepth;
    private int running;
    private double kvUtilization;
    private long queuedPromptTokens;
    private double stepEstimateUs;
    private final java.util.Set<String> adapters = new java.util.HashSet<>();
    private int freeAdapterSlots;

    @Override
    public boolean holdsAdapter(String adapter) {
      return adapters.contains(adapter);
    }

    @Override
    public int freeAdapterSlots() {
      return freeAdapterSlots;
    }

    @Override
    public int index() {
      return index;
    }

    @Override
    public int queueDepth() {
      return queueDepth;
    }

    @Override
    public int runningBatchSize() {
      return running;
    }

    @Override
    public double kvUtilization() {
      return kvUtilization;
    }

    @Override
    public int inFlight() {
      return inFlightRequests;
    }

    @Override
    public int cachedPrefixTokens() {
      EngineRequest r = loop.routingRequest();
      if (r == null) {
        return 0;
      }
      long[] hashes = r.promptBlockHashes(pool.blockSizeTokens());
      return pool.cachedPrefixBlocks(hashes, hashes.length) * pool.blockSizeTokens();
    }

    @Override
    public String pool() {
      return poolName;
    }

    @Override
    public long queuedPromptTokens() {
      return queuedPromptTokens;
    }

    @Override
    public long refreshedAtUs() {
      return loop.snapshotRefreshedAtUs();
    }

    /** The instance's step-time estimate as of the refresh, microseconds. */
    double stepEstimateUs() {
      return stepEstimateUs;
    }

    /** The token budget of one step of the instance. */
    int stepTokenBudget() {
      return limits.maxNumBatchedTokens();
    }
  }

  // ---------------------------------------------------------------- requests in and out

  /** The request was routed here. */
  void onRouted(EngineRequest r) {
    r.instanceIndex = index;
    inFlightRequests++;
  }

  /** The request ended (any outcome) after being routed here. */
  void onEnded() {
    inFlightRequests--;
  }

  String rejectReason(EngineRequest r) {
    String adapter = r.spec.adapter();
    if (!adapter.isEmpty() && (adapters == null || !adapters.costs().serves(adapter))) {
      return RejectReasons.ADAPTER_NOT_SERVED;
    }
    int maxLen = limits.maxModelLen();
    if (maxLen > 0 && r.inputTokens >= maxLen) {
      return RejectReasons.PROMPT_TOO_LONG;
    }
    if (maxLen > 0 && (long) r.inputTokens + r.outputTokens > maxLen) {
      return RejectReasons.TOTAL_TOO_LONG;
    }
    if (pool.blocksFor((long) r.inputTokens + r.outputTokens - 1) > pool.totalBlocks()) {
      return RejectReasons.KV_CAPACITY;
    }
    return null;
  }

  void onLoaded(EngineRequest r) {
    if (r.state != EngineRequest.State.RUNNING || r.loadDoneUs != loop.nowUs()) {
      return; // timed out or preempted while loading
    }
    r.loadDoneUs = 0;
    if (!stepPending) {
      stepPending = true;
      loop.schedule(loop.nowUs(), EventQueue.STEP, this);
    }
  }

  void onQueued(EngineRequest r) {
    if (r.state == EngineRequest.State.FINISHED) {
      return; // timed out before it reached the queue
    }
    changed();
    String reason = rejectReason(r);
    if (reason != null) {
      loop.finish(r, RequestOutcome.REJECTED, loop.nowUs(), reason);
      return;
    }
    enqueue(r, false);
  }

  /**
   * {@code r} joins the waiting queue now, at its end or (first) at its head; a step is scheduled
   * if none is.
   */
  private void enqueue(EngineRequest r, boolean first) {
    r.state = EngineRequest.State.WAITING;
    r.queuedUs = loop.nowUs();
    r.priority = loop.priorityOf(r);
    if (first) { // behind the others whose KV arrived (first come, first served among them)
      int k = 0;
      while (k < waiting.size() && holdsBlocks(waiting.get(k))) {
        k++;
      }
      waiting.insert(k, r);
    } else {
      waiting.addLast(r);
    }
    onWaitingAdded(r);
    if (loop.listener() != null) {
      loop.listener().onQueued(index, r, loop.nowUs());
    }
    kick();
  }

  void onTimeout(EngineRequest r) {
    changed();
    switch (r.state) {
      case FINISHED -> {
        return;
      }
      case WAITING -> {
        waiting.remove(r);
        onWaitingRemoved(r);
      }
      case RUNNING -> {
        running.remove(r);
        pool.free(r.table);
      }
      case ARRIVED -> { }
      case HANDED_OFF -> throw new IllegalStateException(r + " is between two instances; the engine ends it");
    }
    loop.finish(r, RequestOutcome.TIMED_OUT, loop.nowUs(), "");
  }

  // ---------------------------------------------------------------- steps

  void onStep() {
    changed();
    stepPending = false;
    // With async scheduling, the batch starting now was formed when the previous step started:
    // only requests queued by then can join it (see EngineLimits#asyncScheduling).
    long admitCutoffUs = Long.MAX_VALUE;
    if (!batch.isEmpty()) {
      completeStep();
      if (limits.asyncScheduling()) {
        admitCutoffUs = lastStepStartUs;
      }
    }
    formAndLaunch(admitCutoffUs);
  }

  /** Applies the step in flight: progress, emitted tokens, completions. */
  private void completeStep() {
    StepRecord.RequestState[] states =
        loop.listener() == null ? null : new StepRecord.RequestState[batch.size()];
    int finished = 0;
    long prefillTokens = 0;
    long decodeTokens = 0;
    int prefillRequests = 0;
    for (int i = 0, n = batch.size(); i < n; i++) {
      EngineRequest r = batch.get(i);
      int scheduled = r.newTokens;
      if (states != null) {
        boolean prefill = r.inPrefill();
        states[i] = new StepRecord.RequestState(r.spec.id(), prefill, r.inputTokens, r.progress,
            r.generated, r.preemptions, scheduled, r.table == null ? 0 : r.table.numBlocks(),
            Math.max(0, r.cachedPromptTokens) / pool.blockSizeTokens(),
            Math.max(0, r.cachedPromptTokens));
        if (prefill) {
          prefillTokens += scheduled;
          prefillRequests++;
        } else {
          decodeTokens += scheduled;
        }
      }
      boolean verifying = spec != null && scheduled > 1 && !r.inPrefill();
      r.newTokens = 0;
      r.inFlight = false;
      if (r.state != EngineRequest.State.RUNNING) {
        continue; // aborted while the step ran
      }
      if (verifying) {
        // the last token and scheduled - 1 drafts verified: the accepted drafts and the target's
        // own next token are emitted together; the rejected drafts' slots are written again later
        int accepted = spec.accept(r, scheduled - 1);
        r.progress += 1 + accepted;
        emitTokens(r, 1 + accepted);
        if (r.state == EngineRequest.State.FINISHED) {
          finished++;
        }
        continue;
      }
      r.progress += scheduled;
      if (r.progress >= r.prefillTarget) {
        if (r.disaggregated && r.prefillDoneUs < 0) {
          r.state = EngineRequest.State.HANDED_OFF; // its KV goes to a decode instance (the engine's)
          loop.prefilled(r);
          continue;
        }
        emitToken(r);
        if (r.state == EngineRequest.State.FINISHED) {
          finished++;
        }
      }
    }
    if (states != null) {
      loop.listener().onStep(index, new StepRecord(steps, stepStartUs, stepDurationUs,
          prefillRequests, states.length - prefillRequests, prefillTokens, decodeTokens,
          stepRunning, stepWaiting, pool.totalBlocks(), stepKvFree, finished, stepPreemptions,
          java.util.Arrays.asList(states)));
    }
    batch.clear();
    running.removeFinished();
  }

  private void emitToken(EngineRequest r) {
    emitTokens(r, 1);
  }

  /**
   * Emits {@code count} tokens of one step (more than one after a speculative verification), as one
   * streamed chunk: one inter-token gap for the chunk, as vLLM's benchmark counts it; no more than
   * the request still has to generate.
   */
  private void emitTokens(EngineRequest r, int count) {
    // the chunk waits for the API server's earlier work (zero when none is modelled)
    long serverUs = apiServer.stream(loop.nowUs()) - loop.nowUs();
    for (int c = 0; c < count; c++) {
      r.generated++;
      r.tokenOverheadUs = SimulatedTime.later(r.tokenOverheadUs,
          SimulatedTime.checkedDelay(model.outputTokenProcessingTime(), "output token processing time"));
      long clientUs = SimulatedTime.later(SimulatedTime.later(SimulatedTime.later(
          SimulatedTime.later(loop.nowUs(), serverUs), r.schedulingOverheadUs), r.preemptionOverheadUs), r.tokenOverheadUs);
      if (r.firstTokenClientUs < 0) {
        r.firstTokenClientUs = clientUs;
        if (loop.listener() != null) {
          loop.listener().onFirstToken(index, r, steps, loop.nowUs(), clientUs);
        }
        r.itlUs = new long[Math.max(0, r.outputTokens - 1)];
      } else if (c == 0) {
        r.itlUs[r.itlCount++] = clientUs - r.lastTokenClientUs;
      }
      r.lastTokenClientUs = clientUs;
      if (loop.listener() != null) {
        loop.listener().onToken(index, r, r.generated, loop.nowUs(), clientUs);
      }
      if (r.generated == r.outputTokens) {
        pool.free(r.table);
        boolean late = r.deadlineUs > 0 && clientUs > r.deadlineUs;
        loop.finish(r, late ? RequestOutcome.TIMED_OUT : RequestOutcome.COMPLETED,
            late ? Math.max(loop.nowUs(), r.deadlineUs) : clientUs, "");
        return;
      }
    }
  }

  /** Forms the next batch (vLLM v1: running requests first, then waiting ones) and launches it. */
  private void formAndLaunch(long admitCutoffUs) {
    if (running.isEmpty() && waiting.isEmpty()) {
      return; // idle until the next request is queued
    }
    if (pool.hasSecondaryTiers()) {
      pool.advanceTransfers(loop.nowUs());
      pollFetches();
    }
    if (scheduler.ordersWaitingQueue()) {
      if (loop.prioritiesChangeWithTime()) {
        for (int k = 0, n = waiting.size(); k < n; k++) {
          EngineRequest w = waiting.get(k);
          w.priority = loop.priorityOf(w);
        }
      }
      waiting.sort(scheduler);
    }
    int budget = limits.maxNumBatchedTokens();
    int threshold = limits.longPrefillTokenThreshold();
    boolean preempted = false;
    formingPreemptions = 0;
    stepAdapterCount = 0;

    int i = 0;
    while (i < running.size() && budget > 0) {
      EngineRequest r = running.get(i);
      if (r.loadDoneUs > 0) {
        i++; // its prefix is still being copied from the CPU tier
        continue;
      }
      if (adapters != null && !adapterFits(r.spec.adapter())) {
        i++; // its adapter would exceed max_loras in this step (only after it missed steps for budget)
        continue;
      }
      int n = r.inPrefill() ? Math.min(capChunk(r.prefillTarget - r.progress, threshold), budget)
          : spec == null ? 1 : spec.decodeTokens(budget, limits.maxModelLen() == 0 ? 0
              : Math.max(1, limits.maxModelLen() - 1 - r.progress));
      int lookahead = spec == null ? 0 : spec.lookaheadSlots();
      boolean selfPreempted = false;
      while (!pool.grow(r.table, r.progress + n, lookahead)) {
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
      addToBatch(r);
      if (adapters != null) {
        addStepAdapter(r.spec.adapter());
      }
      i++;
    }

    if (!preempted) {
      budget = admitWaiting(budget, threshold, admitCutoffUs);
      if (batch.isEmpty() && admitCutoffUs != Long.MAX_VALUE && !anyLoading()) {
        // The engine would idle: an idle async engine schedules immediately.
        admitWaiting(budget, threshold, Long.MAX_VALUE);
      }
    }
    launch(preempted);
  }

  /**
   * vLLM v1's second pass: admits waiting requests in queue order while the token budget and
   * max-num-seqs allow, stopping at the first that cannot get KV blocks or was queued after
   * {@code admitCutoffUs}. Returns the remaining budget.
   */
  private int admitWaiting(int budget, int threshold, long admitCutoffUs) {
    int blockSize = pool.blockSizeTokens();
    int k = 0; // requests passed over for their adapter stay ahead, in order
    while (budget > 0 && k < waiting.size() && running.size() < limits.maxNumSeqs()) {
      EngineRequest r = waiting.get(k);
      if (r.queuedUs > admitCutoffUs) {
        break; // not yet visible to the scheduler that formed this batch
      }
      if (adapters != null && !adapterFits(r.spec.adapter())) {
        if (!r.passedOverForAdapter) { // vLLM passes it over: its step already uses max_loras adapters
          r.passedOverForAdapter = true;
          adapters.onSkipped();
        }
        if (waitingThatFit() == 0) {
          break; // every request behind names another adapter
        }
        k++;
        continue;
      }
      if (r.table == null) {
        r.table = pool.newTable(r.spec.promptTokens(), (long) r.inputTokens + r.outputTokens, r.spec.adapter());
      }
      if (r.fetchPhase == FETCH_ASKING || r.fetchPhase == FETCH_WAITING) {
        k++; // its prefix is being fetched from a secondary offload tier: vLLM moves on to the next
        continue;
      }
      int target = r.inputTokens + r.generated;
      int cpuBlocks = 0;
      int start;
      int n;
      if (holdsBlocks(r)) {
        // a disaggregated request whose prompt KV arrived in the blocks reserved for it: it
        // recomputes its last prompt token, which gives the first output token
        start = target - 1;
        n = 1;
      } else {
        int maxCachedBlocks = (target - 1) / blockSize;
        int cachedBlocks = Math.min(pool.cachedPrefixBlocks(r.table), maxCachedBlocks);
        cpuBlocks = pool.cpuPrefixBlocks(r.table, cachedBlocks, maxCachedBlocks - cachedBlocks);
        if (r.fetchPhase == FETCH_IDLE && startFetch(r, cachedBlocks + cpuBlocks, maxCachedBlocks)) {
          k++;
          continue;
        }
        start = (cachedBlocks + cpuBlocks) * blockSize;
        n = Math.min(capChunk(target - start, threshold), budget);
        boolean admitted = cpuBlocks > 0
            ? pool.admitLoading(r.table, cachedBlocks, cpuBlocks)
            : pool.admit(r.table, cachedBlocks, start + n); // vLLM reserves no lookahead at admission
        if (!admitted) {
          break; // head of line: nothing behind it is admitted this step
        }
      }
      if (k == 0) {
        waiting.pollFirst();
      } else {
        waiting.remove(r);
      }
      onWaitingRemoved(r);
      countInversion(r);
      r.fetchPhase = FETCH_IDLE;
      r.state = EngineRequest.State.RUNNING;
      r.progress = start;
      r.prefillTarget = target;
      if (r.cachedPromptTokens < 0) {
        r.cachedPromptTokens = start;
      }
      if (loop.listener() != null) {
        // as vLLM emits SCHEDULED: after the prefix-cache lookup set the computed tokens
        loop.listener().onScheduled(index, r, steps + 1, r.preemptions > 0, loop.nowUs());
      }
      running.add(r);
      if (cpuBlocks > 0) {
        startLoading(r, cpuBlocks); // computes from the next step after the copy
      } else {
        r.newTokens = n;
        budget -= n;
        addToBatch(r);
      }
      if (adapters != null) {
        addStepAdapter(r.spec.adapter());
      }
    }
    return budget;
  }

  private void addStepAdapter(String a) {
    if (a.isEmpty()) {
      return;
    }
    for (int k = 0; k < stepAdapterCount; k++) {
      if (stepAdapters[k].equals(a)) {
        return;
      }
    }
    stepAdapters[stepAdapterCount++] = a;
  }

  /** Whether a request naming {@code a} may join the step: its adapter is in it, or a slot is left. */
  private boolean adapterFits(String a) {
    if (a.isEmpty() || stepAdapterCount < stepAdapters.length) {
      return true;
    }
    for (int k = 0; k < stepAdapterCount; k++) {
      if (stepAdapters[k].equals(a)) {
        return true;
      }
    }
    return false;
  }

  /** Loads the step's adapters and returns its extra time for them (see {@link io.blis.engine.lora.AdapterSlots}). */
  private long adapterTimeUs(long baseUs) {
    stepAdapterCount = 0;
    for (int k = 0, n = batch.size(); k < n; k++) {
      addStepAdapter(batch.get(k).spec.adapter());
    }
    if (stepAdapterCount == 0) {
      return 0;
    }
    java.util.Arrays.fill(stepAdapterTokens, 0, stepAdapterCount, 0);
    for (int k = 0, n = batch.size(); k < n; k++) {
      EngineRequest r = batch.get(k);
      String a = r.spec.adapter();
      if (!a.isEmpty()) {
        for (int j = 0; j < stepAdapterCount; j++) {
          if (stepAdapters[j].equals(a)) {
            stepAdapterTokens[j] += r.newTokens;
            break;
          }
        }
      }
    }
    return adapters.prepareStep(stepAdapters, stepAdapterTokens, stepAdapterCount, baseUs);
  }

  /** Slows the steps that start before {@code untilUs} by {@code factor}. */
  void slowSteps(double factor, long untilUs) {
    slowFactor = factor;
    slowUntilUs = untilUs;
  }

  /** Asks the latency model for the step time of the formed batch and schedules its end. */
  private void launch(boolean preempted) {
    if (batch.isEmpty()) {
      if (!preempted && anyLoading()) {
        return; // the next LOADED event resumes stepping
      }
      if (!preempted && pool.hasSecondaryTiers()) {
        long wakeUs = fetchWakeUs();
        if (wakeUs != Long.MAX_VALUE) {
          stepPending = true; // an empty scheduler round: look again when a transfer ends
          loop.schedule(wakeUs, EventQueue.STEP, this);
          return;
        }
      }
      if (!preempted && loop.holdsHandOffs(index)) {
        return; // blocks held by requests between two instances: their arrival or release resumes stepping
      }
      if (!preempted) {
        throw new IllegalStateException("engine stalled at " + loop.nowUs() + " us: " + running.size()
            + " running, " + waiting.size() + " waiting, " + pool.freeBlocks() + " free KV blocks");
      }
      stepPending = true;
      loop.schedule(loop.nowUs(), EventQueue.STEP, this);
      return;
    }
    long stepUs = SimulatedTime.checkedDelay(model.stepTime(batch), "step time");
    if (stepUs < 1) {
      throw new IllegalStateException("latency model returned step time " + stepUs
          + " us for a batch of " + batch.size() + " requests; it must be at least 1");
    }
    if (adapters != null) {
      stepUs = SimulatedTime.checkedDelay(SimulatedTime.later(stepUs, adapterTimeUs(stepUs)), "step time with LoRA");
    }
    if (loop.nowUs() < slowUntilUs) {
      stepUs = SimulatedTime.checkedDelay(Math.round(stepUs * slowFactor), "slowed step time");
    }
    if (gate != null) {
      stepUs = gate.align(loop.nowUs(), stepUs);
    }
    steps++;
    busyUs += stepUs;
    stepStartUs = loop.nowUs();
    stepDurationUs = stepUs;
    stepRunning = running.size();
    stepWaiting = waiting.size();
    stepKvFree = pool.freeBlocks();
    stepPreemptions = formingPreemptions;
    stepEstimateUs = steps == 1 ? stepUs
        : stepEstimateUs + STEP_EWMA_WEIGHT * (stepUs - stepEstimateUs);
    lastStepStartUs = loop.nowUs();
    if (observer != null) {
      observer.onStep(loop.nowUs(), stepUs, batch, running, waiting.size(), pool);
    }
    for (int k = 0, n = batch.size(); k < n; k++) {
      batch.get(k).inFlight = true;
    }
    stepPending = true;
    loop.schedule(SimulatedTime.later(loop.nowUs(), stepUs), EventQueue.STEP, this);
  }

  // ---------------------------------------------------------------- disaggregation

  /**
   * Reserves blocks for the prompt of the disaggregated request {@code r} (prefilled elsewhere):
   * the blocks of its prompt this instance caches, and new ones for the rest. Its blocks on the
   * prefill instance move to {@link EngineRequest#prefillTable}.
   *
   * @return the prompt tokens whose KV must move here (the uncached ones but the last, which this
   *     instance recomputes), or -1 when the request cannot be held here or there is no room now
   */
  int reserve(EngineRequest r) {
    if (rejectReason(r) != null) {
      return -1;
    }
    int blockSize = pool.blockSizeTokens();
    pool.advanceTransfers(loop.nowUs()); // blocks it stores are written from now on
    io.blis.kvcache.BlockTable t = pool.newTable(r.spec.promptTokens(), (long) r.inputTokens + r.outputTokens,
        r.spec.adapter());
    int cached = Math.min(pool.cachedPrefixBlocks(t), (r.inputTokens - 1) / blockSize);
    if (!pool.admit(t, cached, r.inputTokens)) {
      return -1;
    }
    changed();
    r.prefillTable = r.table;
    r.table = t;
    return Math.max(0, r.inputTokens - 1 - cached * blockSize);
  }

  /** Whether the waiting request {@code r} already holds its blocks (its KV arrived from a prefill instance). */
  private static boolean holdsBlocks(EngineRequest r) {
    return r.table != null && r.table.numBlocks() > 0;
  }

  /** Whether this instance could ever hold {@code r} (its limits and KV capacity). */
  boolean canHold(EngineRequest r) {
    return rejectReason(r) == null;
  }

  /**
   * The KV of the disaggregated request {@code r} arrived in its reserved blocks: it queues ahead of
   * every request waiting for blocks, behind those whose KV arrived before it. It holds its blocks
   * and needs none more for its first step, so it must not wait behind a request waiting for
   * blocks (which its own could be).
   */
  void acceptArrived(EngineRequest r) {
    changed();
    enqueue(r, true);
  }

  /** Frees blocks a request that left this instance still held (its KV moved, or it ended on the way). */
  void release(io.blis.kvcache.BlockTable table) {
    changed();
    pool.free(table);
    kick();
  }

  /** Steps now if idle with requests waiting (blocks may have been freed outside a step). */
  private void kick() {
    if (!stepPending && !waiting.isEmpty()) {
      stepPending = true;
      loop.schedule(loop.nowUs(), EventQueue.STEP, this);
    }
  }

  private boolean anyLoading() {
    for (int k = 0; k < running.size(); k++) {
      if (running.get(k).loadDoneUs > 0) {
        return true;
      }
    }
    return false;
  }

  private void addToBatch(EngineRequest r) {
    if (r.firstScheduledUs < 0) {
      r.firstScheduledUs = loop.nowUs();
      r.schedulingOverheadUs = SimulatedTime.checkedDelay(model.schedulingProcessingTime(),
          "scheduling processing time");
    }
    batch.add(r);
  }

  private static int capChunk(int n, int threshold) {
    return threshold > 0 && n > threshold ? threshold : n;
  }

  /**
   * Starts reloading {@code cpuBlocks} prefix blocks of {@code r} from the CPU tier: transfers are
   * serialized on one host-to-device channel, each block taking {@code cpuLoadUsPerBlock}.
   */
  private void startLoading(EngineRequest r, int cpuBlocks) {
    long startUs = Math.max(loop.nowUs(), transferBusyUntilUs);
    long doneUs = SimulatedTime.later(startUs, Math.max(1L, (long) Math.ceil(cpuBlocks * cpuLoadUsPerBlock)));
    transferBusyUntilUs = doneUs;
    r.loadDoneUs = doneUs;
    loop.schedule(doneUs, EventQueue.LOADED, r);
  }

  // ---------------------------------------------------------------- secondary offload tiers

  /** {@link EngineRequest#fetchPhase}: no fetch, or the last one ended (the next admission takes what is there). */
  static final byte FETCH_IDLE = 0;
  /** {@link EngineRequest#fetchPhase}: the secondary tiers are being asked for the prefix (one scheduler round). */
  static final byte FETCH_ASKING = 1;
  /** {@link EngineRequest#fetchPhase}: the prefix is being read into the CPU tier. */
  static final byte FETCH_WAITING = 2;
  /** {@link EngineRequest#fetchPhase}: the fetch ended; admit without starting another. */
  static final byte FETCH_ENDED = 3;
  /**
   * How soon an engine with nothing to run but a request asking the secondary tiers schedules
   * again: vLLM's engine loop comes straight back to a scheduler that scheduled nothing, so the
   * round is short; a millisecond is its order of magnitude, not a measured figure.
   */
  static final long IDLE_ROUND_US = 1_000;

  /**
   * Starts a fetch when the prompt of the waiting request {@code r} continues, past its GPU- and
   * CPU-held blocks ({@code fromBlock}), on a secondary offload tier or in a block being read from
   * one. As vLLM's tiered offloading does, the request then waits (passed over by the scheduler)
   * while the blocks are read into the CPU tier: one more scheduler round first when the tiers
   * were not asked for these blocks before.
   *
   * @return whether the request now waits for the fetch
   */
  private boolean startFetch(EngineRequest r, int fromBlock, int maxCachedBlocks) {
    int max = maxCachedBlocks - fromBlock;
    int kind = pool.fetchKind(r.table, fromBlock, max);
    if (kind == io.blis.kvcache.KvBlockPool.FETCH_NONE) {
      return false;
    }
    r.fetchFrom = fromBlock;
    if (kind == io.blis.kvcache.KvBlockPool.FETCH_PENDING) {
      r.fetchPhase = FETCH_WAITING; // another request's read brings it
      r.fetchCount = 1;
    } else if (pool.lookedUp(r.table, fromBlock)) {
      promote(r, max);
    } else {
      r.fetchPhase = FETCH_ASKING;
    }
    return r.fetchPhase != FETCH_ENDED;
  }

  private void promote(EngineRequest r, int max) {
    int n = pool.promote(r.table, r.fetchFrom, max);
    r.fetchCount = n;
    r.fetchPhase = n > 0 ? FETCH_WAITING : FETCH_ENDED; // 0: no CPU room, it recomputes
  }

  /** A scheduler round for the waiting requests fetching from the secondary tiers. */
  private void pollFetches() {
    int blockSize = pool.blockSizeTokens();
    for (int k = 0, n = waiting.size(); k < n; k++) {
      EngineRequest r = waiting.get(k);
      if (r.fetchPhase == FETCH_ASKING) {
        int max = (r.inputTokens + r.generated - 1) / blockSize - r.fetchFrom;
        int kind = pool.fetchKind(r.table, r.fetchFrom, max);
        if (kind == io.blis.kvcache.KvBlockPool.FETCH_SECONDARY) {
          promote(r, max);
        } else if (kind == io.blis.kvcache.KvBlockPool.FETCH_PENDING) {
          r.fetchPhase = FETCH_WAITING; // another request started the read meanwhile
          r.fetchCount = 1;
        } else {
          r.fetchPhase = FETCH_ENDED;
        }
      } else if (r.fetchPhase == FETCH_WAITING
          && pool.fetchState(r.table, r.fetchFrom, r.fetchCount) != io.blis.kvcache.KvBlockPool.FETCH_PENDING) {
        r.fetchPhase = FETCH_ENDED; // read in (or lost before use: recomputed)
      }
    }
  }

  /** When an engine with nothing to run looks again for its fetching requests; MAX_VALUE when none fetches. */
  private long fetchWakeUs() {
    long wake = Long.MAX_VALUE;
    for (int k = 0, n = waiting.size(); k < n; k++) {
      byte phase = waiting.get(k).fetchPhase;
      if (phase == FETCH_ASKING) {
        return SimulatedTime.later(loop.nowUs(), IDLE_ROUND_US);
      }
      if (phase == FETCH_WAITING) {
        wake = Math.max(loop.nowUs() + 1, Math.min(wake, pool.nextTransferUs()));
      }
    }
    return wake;
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
    victim.loadDoneUs = 0;
    victim.preemptions++;
    victim.preemptionOverheadUs = SimulatedTime.later(victim.preemptionOverheadUs,
        SimulatedTime.checkedDelay(model.preemptionProcessingTime(), "preemption processing time"));
    victim.state = EngineRequest.State.WAITING;
    victim.queuedUs = loop.nowUs();
    waiting.addFirst(victim);
    onWaitingAdded(victim);
    formingPreemptions++;
    if (loop.listener() != null) {
      loop.listener().onPreempted(index, victim, steps + 1, loop.nowUs());
      loop.listener().onQueued(index, victim, loop.nowUs());
    }
    preemptionEvents++;
    return refund;
  }

  private void onWaitingAdded(EngineRequest r) {
    waitingPromptTokens += r.inputTokens;
    waitingByRank[r.sloRank]++;
    if (adapters != null) {
      waitingByAdapter.computeIfAbsent(r.spec.adapter(), a -> new int[1])[0]++;
    }
  }

  private void onWaitingRemoved(EngineRequest r) {
    waitingPromptTokens -= r.inputTokens;
    waitingByRank[r.sloRank]--;
    if (adapters != null) {
      waitingByAdapter.get(r.spec.adapter())[0]--;
    }
  }

  /** Waiting requests that may still join the step being formed: on the base model or one of its adapters. */
  private int waitingThatFit() {
    int[] base = waitingByAdapter.get("");
    int n = base == null ? 0 : base[0];
    for (int k = 0; k < stepAdapterCount; k++) {
      int[] c = waitingByAdapter.get(stepAdapters[k]);
      n += c == null ? 0 : c[0];
    }
    return n;
  }

  /**
   * Counts a priority inversion when {@code r} (just taken from the waiting queue) overtakes a
   * request of a more urgent SLO class that joined the queue no later than it did and is still
   * waiting. The class ranks are the SLO classes' vLLM priorities, whatever the priority policy.
   */
  private void countInversion(EngineRequest r) {
    boolean moreUrgentWaiting = false;
    for (int k = 0; k < r.sloRank; k++) {
      if (waitingByRank[k] > 0) {
        moreUrgentWaiting = true;
        break;
      }
    }
    if (!moreUrgentWaiting) {
      return;
    }
    for (int k = 0, n = waiting.size(); k < n; k++) {
      EngineRequest w = waiting.get(k);
      if (w.sloRank < r.sloRank && w.queuedUs <= r.queuedUs) {
        priorityInversions++;
        return;
      }
    }
  }
}
