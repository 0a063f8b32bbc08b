package io.blis.engine;

import io.blis.api.ClusterView;
import io.blis.api.InstanceSnapshot;
import io.blis.api.LatencyModel;
import io.blis.api.Router;
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
 * The discrete-event loop on an integer microsecond clock: pulls requests from the source, routes
 * them to {@link Instance}s (vLLM v1 mirrors), and collects metrics. See {@link Simulation} for
 * the request timeline and scheduling rules.
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

  private final Instance[] instances;
  private final Router router;
  private final RequestSource source;
  private final boolean recordRequests;
  private final boolean streamingMetrics;
  private final long horizonUs;

  private final EventQueue events = new EventQueue();
  private final ClusterState cluster = new ClusterState();
  private final ScopeMetrics overall;
  private final Map<Integer, ScopeMetrics> stages = new TreeMap<>();
  private final List<RequestRecord> records = new ArrayList<>();

  private long nowUs;
  private long lastEndUs;
  private RequestSpec pendingOpenLoop;
  private boolean sourceDone;
  private ScopeMetrics lastScope;

  /** Everything an instance is built from; one per instance. */
  record InstanceConfig(LatencyModel model, Scheduler scheduler, KvBlockPool pool) {}

  Engine(List<InstanceConfig> configs, Router router, EngineLimits limits, double cpuLoadUsPerBlock,
      RequestSource source, boolean recordRequests, boolean streamingMetrics, long horizonUs,
      StepObserver observer) {
    this.instances = new Instance[configs.size()];
    for (int i = 0; i < instances.length; i++) {
      InstanceConfig c = configs.get(i);
      instances[i] = new Instance(this, i, c.model(), c.scheduler(), limits, c.pool(),
          cpuLoadUsPerBlock, observer);
    }
    this.router = router;
    this.source = source;
    this.recordRequests = recordRequests;
    this.streamingMetrics = streamingMetrics;
    this.horizonUs = horizonUs;
    this.overall = new ScopeMetrics(-1, streamingMetrics);
  }

  long nowUs() {
    return nowUs;
  }

  EventQueue events() {
    return events;
  }

  /** The cluster as routers see it: one reused view over the instances. */
  private final class ClusterState implements ClusterView {
    @Override
    public int size() {
      return instances.length;
    }

    @Override
    public InstanceSnapshot get(int index) {
      return instances[index];
    }

    @Override
    public long nowUs() {
      return nowUs;
    }
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
        case EventQueue.QUEUED -> ((EngineRequest) payload).instance.onQueued((EngineRequest) payload);
        case EventQueue.LOADED -> ((EngineRequest) payload).instance.onLoaded((EngineRequest) payload);
        case EventQueue.STEP -> ((Instance) payload).onStep();
        case EventQueue.TIMEOUT -> ((EngineRequest) payload).instance.onTimeout((EngineRequest) payload);
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
    Instance target = route(r);
    long queueingUs = target.model().queueingTime(r);
    if (queueingUs < 0) {
      throw new IllegalStateException("latency model returned a negative queueing time " + queueingUs);
    }
    events.push(nowUs + queueingUs, EventQueue.QUEUED, r);
    if (openLoop) {
      pendingOpenLoop = null;
      pullNext();
    }
  }

  private Instance route(EngineRequest r) {
    Instance target = instances[0];
    if (instances.length > 1) {
      for (Instance inst : instances) {
        inst.setRouting(r);
      }
      int choice = router.route(r, cluster);
      for (Instance inst : instances) {
        inst.setRouting(null);
      }
      if (choice < 0 || choice >= instances.length) {
        throw new IllegalStateException(
            "router chose instance " + choice + " of " + instances.length);
      }
      target = instances[choice];
    }
    target.onRouted(r);
    return target;
  }

  void finish(EngineRequest r, RequestOutcome outcome, long endUs, String reason) {
    r.state = EngineRequest.State.FINISHED;
    r.table = null;
    r.promptBlockHashes = null;
    r.instance.onEnded();
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
        r.generated, outcome,
        r.firstTokenClientUs < 0 ? -1 : r.firstTokenClientUs - r.arrivalUs, e2e,
        r.firstScheduledUs < 0 ? -1 : r.firstScheduledUs - r.arrivalUs, r.preemptions,
        Math.max(0, r.cachedPromptTokens), reason == null ? "" : reason);
  }

  // ---------------------------------------------------------------- end of run

  private SimulationResult finish() {
    long totalBlocks = 0;
    long peak = 0;
    long queried = 0;
    long hits = 0;
    long queriedBlocks = 0;
    long hitBlocks = 0;
    long cpuBlocks = 0;
    long cpuLoaded = 0;
    long preemptions = 0;
    long steps = 0;
    for (Instance inst : instances) {
      countLeftovers(inst.waiting(), true);
      for (int i = 0; i < inst.running().size(); i++) {
        leftover(inst.running().get(i), false);
      }
      KvBlockPool pool = inst.pool();
      totalBlocks += pool.totalBlocks();
      peak += pool.peakUsedBlocks();
      queried += pool.queriedTokens();
      hits += pool.hitTokens();
      queriedBlocks += pool.queriedBlocks();
      hitBlocks += pool.hitBlocks();
      cpuBlocks += pool.cpuTierBlocks();
      cpuLoaded += pool.cpuLoadedBlocks();
      preemptions += inst.preemptionEvents();
      steps += inst.steps();
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
    EngineStats stats = new EngineStats(instances.length, totalBlocks,
        instances[0].pool().blockSizeTokens(), peak, ratio(hits, queried),
        ratio(hitBlocks, queriedBlocks), cpuBlocks, cpuLoaded, preemptions, steps);
    List<RequestRecord> recs = new ArrayList<>(records);
    recs.sort(java.util.Comparator.comparingLong(RequestRecord::arrivalUs)
        .thenComparingLong(RequestRecord::id));
    return new SimulationResult(recs, overall.summarize(), stageSummaries, end, stats);
  }

  private static double ratio(long a, long b) {
    return b == 0 ? 0.0 : (double) a / b;
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

}
