package io.blis.engine;

import io.blis.engine.metrics.ScopeMetrics;
import io.blis.engine.metrics.ValueStore;
import io.blis.engine.result.Anomalies;
import io.blis.engine.result.ClusterReport;
import io.blis.engine.result.DecisionSummary;
import io.blis.engine.result.EngineStats;
import io.blis.engine.result.Fitness;
import io.blis.engine.result.InstanceResult;
import io.blis.engine.result.InstanceStatus;
import io.blis.engine.result.MetricsSummary;
import io.blis.engine.result.RequestRecord;
import io.blis.engine.result.RoutingDecision;
import io.blis.engine.result.SimulationResult;
import io.blis.api.AdmissionDecision;
import io.blis.api.AdmissionPolicy;
import io.blis.api.Autoscaler;
import io.blis.engine.autoscale.Fleet;
import io.blis.engine.autoscale.Fleets;
import io.blis.engine.autoscale.FleetConfig;
import io.blis.engine.disagg.Disaggregation;
import io.blis.engine.disagg.PdCoordinator;
import io.blis.engine.result.DisaggregationReport;
import io.blis.engine.flow.FlowControl;
import io.blis.engine.flow.Gateway;
import io.blis.api.ClusterView;
import io.blis.api.InstanceSnapshot;
import io.blis.api.LatencyModel;
import io.blis.api.PriorityPolicy;
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
 * The discrete-event loop on an integer microsecond clock: pulls requests from the source, admits
 * and routes them to {@link Instance}s (vLLM v1 mirrors), and collects metrics. See {@link
 * Simulation} for the request timeline and scheduling rules.
 */
final class Engine implements EventLoop {

  static final String REJECT_PROMPT_TOO_LONG = RejectReasons.PROMPT_TOO_LONG;
  static final String REJECT_TOTAL_TOO_LONG = RejectReasons.TOTAL_TOO_LONG;
  static final String REJECT_KV_CAPACITY = RejectReasons.KV_CAPACITY;

  /** Head-of-line blocking: an instance's queue at least this many times the cluster mean... */
  static final int HOL_FACTOR = 2;
  /** ...and at least this many requests above it. */
  static final int HOL_MIN_EXCESS = 4;

  /** Everything an instance is built from; one per instance. */
  record InstanceConfig(String pool, LatencyModel model, Scheduler scheduler, KvBlockPool kv,
      EngineLimits limits, double cpuLoadUsPerBlock, StepGate gate,
      io.blis.engine.lora.AdapterSlots adapters) {}

  /** Cluster-level settings: policies, latencies, snapshot refresh, analysis. */
  record ClusterConfig(Router router, AdmissionPolicy admission, PriorityPolicy priority,
      long admissionLatencyUs, long routingLatencyUs, long snapshotRefreshUs,
      Map<String, SloTarget> slo, boolean traceDecisions, int counterfactualK, Fitness fitness,
      EngineListener listener, FlowControl flowControl, List<Autoscaling> autoscaling,
      Disaggregation disaggregation, io.blis.engine.models.ModelRouting models,
      io.blis.engine.frontend.ApiServer apiServer) {}

  /**
   * An autoscaled pool: how it may grow, and what decides; {@code pool} null for every instance
   * (the cluster is the one pool); {@code nodePool} the node pool it shares, null for its own.
   */
  record Autoscaling(String pool, String nodePool, FleetConfig config, Autoscaler scaler, String name) {}

  private final Instance[] instances;
  private final ClusterConfig config;
  private final Router router;
  private final AdmissionPolicy admission;
  private final PriorityPolicy priorityPolicy;
  private final boolean prioritiesChangeWithTime;
  private final RequestSource source;
  private final boolean recordRequests;
  private final boolean streamingMetrics;
  /** Whether the per-instance and per-SLO-class scopes keep inter-token samples too. */
  private final boolean breakdownItl;
  private final long horizonUs;
  /** Instances whose snapshot may differ from their figures now, each once. */
  private final List<Runnable> staleSnapshots = new ArrayList<>();
  /** The request being routed, whose prefix the snapshots look up; null between decisions. */
  private EngineRequest routingRequest;
  /** Most requests arrived and not yet finished. */
  private final long maxBacklog;
  private final boolean multiPool;
  /** Receives journey and step events; null when nobody listens. */
  private final EngineListener listener;

  private final EventQueue events = new EventQueue();
  private final ClusterState cluster = new ClusterState();
  private final ScopeMetrics overall;
  private final Map<Integer, ScopeMetrics> stages = new TreeMap<>();
  private final ScopeMetrics[] perInstance;
  private final Map<String, ScopeMetrics> perClass = new TreeMap<>();
  private final Map<String, ScopeMetrics> perTenant = new TreeMap<>();
  private final io.blis.engine.result.SpilledList<RequestRecord> records =
      io.blis.engine.result.SpilledList.requestRecords();
  private final io.blis.engine.result.SpilledList<RoutingDecision> decisions =
      io.blis.engine.result.SpilledList.decisions();
  private final ValueStore regrets;
  private final double[] scores;
  private final long[] waitEstimates;

  private long nowUs;
  /** Live mode: requests in the engine by id; null otherwise. */
  private Map<Long, EngineRequest> live;
  private long lastEndUs;
  private long lastRefreshUs = Long.MIN_VALUE;
  private RequestSpec pendingOpenLoop;
  private boolean sourceDone;
  private ScopeMetrics lastScope;
  private long admissionDecisions;
  private long admissionRejections;
  private long routingDecisions;
  private long regretDecisions;
  private long holBlockingEvents;
  /** The gateway's flow control, or null when requests go from admission to the router. */
  private final Gateway<EngineRequest> gateway;
  /** The autoscaled pools, or null when the instances are fixed. */
  private final Fleets fleets;
  /** Prefill/decode disaggregation, or null when every request runs whole where it is routed. */
  private final PdCoordinator<EngineRequest> pd;
  /** With disaggregation: the instances that prefill, and those that decode. */
  private final int[] prefillCandidates;
  private final int[] decodeCandidates;
  /** With disaggregation: requests between two instances holding blocks on each instance. */
  private final int[] handOffs;
  /** With disaggregation and several models: each model's instances that prefill, and that decode. */
  private final int[][] prefillByModel;
  private final int[][] decodeByModel;
  /** With disaggregation: the instances the router in use sees, by its index; null for all routable ones. */
  private int[] candidates;
  /** Several models: the served models by the names requests give them; null for one model. */
  private final Map<String, Integer> modelByName;
  /** Several models: each served model's instances. */
  private final int[][] modelInstances;
  /** Several models: each served model's own SLO targets, or null for its requests' class's. */
  private final SloTarget[] modelTargets;
  private final Map<String, ScopeMetrics> perModel = new TreeMap<>();
  /** Multi-turn sessions, from the first request that names one; null before. */
  private io.blis.engine.metrics.SessionTally sessions;
  /** Whether any instance serves LoRA adapters; then metrics are kept per adapter too. */
  private final boolean lora;
  private final Map<String, ScopeMetrics> perAdapter = new TreeMap<>();

  Engine(List<InstanceConfig> configs, ClusterConfig config, RequestSource source,
      boolean recordRequests, boolean streamingMetrics, boolean breakdownItl, long horizonUs, long maxBacklog,
      StepObserver observer) {
    if (configs.size() > EventQueue.MAX_INSTANCES) {
      throw new IllegalArgumentException("at most " + EventQueue.MAX_INSTANCES + " instances, got "
          + configs.size());
    }
    this.instances = new Instance[configs.size()];
    this.perInstance = new ScopeMetrics[configs.size()];
    for (int i = 0; i < instances.length; i++) {
      InstanceConfig c = configs.get(i);
      instances[i] = new Instance(this, i, c.pool(), c.model(), c.scheduler(), c.limits(), c.kv(),
          c.cpuLoadUsPerBlock(), observer, c.gate(), c.adapters());
      perInstance[i] = new ScopeMetrics(-1, streamingMetrics, breakdownItl);
    }
    this.multiPool = configs.stream().map(InstanceConfig::pool).distinct().count() > 1;
    this.lora = configs.stream().anyMatch(c -> c.adapters() != null);
    this.config = config;
    for (Instance in : instances) {
      in.apiServer(new io.blis.engine.frontend.ApiServerQueue(config.apiServer()));
    }
    this.router = config.router();
    this.admission = config.admission();
    this.priorityPolicy = config.priority();
    this.prioritiesChangeWithTime = priorityPolicy.timeDependent();
    this.listener = config.listener();
    this.source = source;
    this.recordRequests = recordRequests;
    this.streamingMetrics = streamingMetrics;
    this.breakdownItl = breakdownItl;
    this.horizonUs = horizonUs;
    this.maxBacklog = maxBacklog;
    this.overall = new ScopeMetrics(-1, streamingMetrics);
    this.regrets = ValueStore.create(streamingMetrics);
    this.scores = new double[instances.length];
    this.waitEstimates = new long[instances.length];
    this.gateway = config.flowControl() == null ? null
        : new Gateway<>(config.flowControl(), streamingMetrics, new GatewayHost());
    this.fleets = config.autoscaling().isEmpty() ? null : new Fleets(scaledPools(configs, config.autoscaling()),
        instances.length, new FleetHost());
    if (fleets != null) {
      fleets.start(); // the initial replicas ready at time 0, the first ticks scheduled
    }
    io.blis.engine.models.ModelRouting mr = config.models();
    if (mr == null) {
      this.modelByName = null;
      this.modelInstances = null;
      this.modelTargets = null;
    } else {
      this.modelByName = mr.byName();
      this.modelInstances = new int[mr.models().size()][];
      this.modelTargets = new SloTarget[mr.models().size()];
      for (int m = 0; m < modelTargets.length; m++) {
        io.blis.engine.models.ModelRouting.Targets t = mr.models().get(m).slo();
        modelTargets[m] = t == null ? null : new SloTarget(t.ttftMs(), t.e2eMs());
      }
      for (int m = 0; m < modelInstances.length; m++) {
        java.util.Set<String> pools = mr.models().get(m).pools();
        modelInstances[m] = java.util.stream.IntStream.range(0, instances.length)
            .filter(i -> pools.contains(configs.get(i).pool())).toArray();
        if (modelInstances[m].length == 0) {
          throw new IllegalArgumentException("model " + mr.models().get(m).name() + ": no instance of pools "
              + new java.util.TreeSet<>(pools));
        }
      }
    }
    this.handOffs = config.disaggregation() == null ? null : new int[instances.length];
    Disaggregation d = config.disaggregation();
    if (d == null) {
      this.pd = null;
      this.prefillCandidates = null;
      this.decodeCandidates = null;
    } else {
      this.pd = new PdCoordinator<>(d, configs.stream().map(InstanceConfig::pool).toList(),
          streamingMetrics, new PdHost());
      this.prefillCandidates = java.util.stream.IntStream.range(0, instances.length)
          .filter(i -> pd.role(i).prefills()).toArray();
      this.decodeCandidates = java.util.stream.IntStream.range(0, instances.length)
          .filter(i -> pd.role(i).decodes()).toArray();
    }
    if (pd != null && modelInstances != null && modelInstances.length > 1) {
      prefillByModel = new int[modelInstances.length][];
      decodeByModel = new int[modelInstances.length][];
      for (int m = 0; m < modelInstances.length; m++) {
        java.util.Set<Integer> own = java.util.Arrays.stream(modelInstances[m]).boxed()
            .collect(java.util.stream.Collectors.toSet());
        prefillByModel[m] = java.util.Arrays.stream(prefillCandidates).filter(own::contains).toArray();
        decodeByModel[m] = java.util.Arrays.stream(decodeCandidates).filter(own::contains).toArray();
        if (decodeByModel[m].length == 0) {
          throw new IllegalArgumentException("disaggregation: no pool of model " + mr.models().get(m).name()
              + " decodes (give one the role decode or both)");
        }
      }
    } else {
      prefillByModel = null;
      decodeByModel = null;
    }
  }

  /**
   * The instances that prefill for {@code r}: those of the model it names when the fleet serves
   * several; none for a request naming no model there (it is kept whole: its prefill and decode
   * instances would otherwise serve other models).
   */
  private int[] prefillAmong(EngineRequest r) {
    return ready(prefillByModel == null ? prefillCandidates : r.model >= 0 ? prefillByModel[r.model] : NO_INSTANCES);
  }

  /** The instances that decode for {@code r} (of its model when the fleet serves several). */
  private int[] decodeAmong(EngineRequest r) {
    return ready(decodeByModel == null || r.model < 0 ? decodeCandidates : decodeByModel[r.model]);
  }

  /** The ready ones of {@code among} when pools are autoscaled (replicas off, starting or draining take nothing new). */
  private int[] ready(int[] among) {
    return fleets == null ? among : fleets.routableAmong(among);
  }

  /** What prefill/decode disaggregation sees of the engine. */
  private final class PdHost extends ControlHost implements PdCoordinator.Host<EngineRequest> {
    @Override
    public int placeDecode(EngineRequest r) {
      int[] among = decodeAmong(r);
      int d = chooseInstance(r, config.disaggregation().decodeRouter(), among, false);
      if (d == r.prefillInstance) { // prefilled where it decodes: its blocks stay, nothing moves
        r.tokensToMove = 0;
        r.transferStartUs = nowUs;
        instances[d].onRouted(r);
        perInstance[d].onInjected(nowUs);
        return d;
      }
      int moved = instances[d].reserve(r);
      for (int k = 0; moved < 0 && k < among.length; k++) {
        if (among[k] != d) { // the router's choice has no room: any other that has
          moved = instances[among[k]].reserve(r);
          if (moved >= 0) {
            d = among[k];
          }
        }
      }
      if (moved < 0) {
        return -1;
      }
      handOffs[d]++;
      r.tokensToMove = moved;
      r.transferStartUs = nowUs;
      instances[d].onRouted(r);
      perInstance[d].onInjected(nowUs);
      return d;
    }

    @Override
    public int prefillInstance(EngineRequest r) {
      return r.prefillInstance;
    }

    @Override
    public int tokensToMove(EngineRequest r) {
      return r.tokensToMove;
    }

    @Override
    public void arrived(EngineRequest r) {
      r.transferEndUs = nowUs;
      if (r.prefillTable != null) {
        handOffs[r.instanceIndex]--; // its reserved blocks, now in use where it decodes
      }
      releasePrefill(r);
      instances[r.instanceIndex].acceptArrived(r);
    }
  }

  /**
   * The disaggregated request no longer holds its blocks on its prefill instance: they are freed,
   * or (decoding there too) they are its blocks where it decodes.
   */
  private void releasePrefill(EngineRequest r) {
    handOffs[r.prefillInstance]--;
    if (r.prefillTable != null) {
      instances[r.prefillInstance].release(r.prefillTable);
      r.prefillTable = null;
      if (pd.role(r.prefillInstance).decodes()) {
        pd.wake(); // room on an instance that also decodes
      }
    }
    if (fleets != null) {
      fleets.onLeft(r.prefillInstance); // a draining prefill replica holding nothing more frees its GPUs
    }
  }

  @Override
  public boolean holdsHandOffs(int index) {
    return handOffs != null && handOffs[index] > 0;
  }

  @Override
  public void prefilled(EngineRequest r) {
    handOffs[r.instanceIndex]++; // its prefill blocks, held until its KV moved
    instances[r.instanceIndex].onEnded();
    r.prefillInstance = r.instanceIndex;
    r.instanceIndex = -1; // on no instance's count until a decode instance reserves its blocks
    r.prefillDoneUs = nowUs;
    pd.onPrefilled(r);
  }

  /** A disaggregated request's client deadline passed between its two instances: it ends, freeing both. */
  private void onHandedOffTimeout(EngineRequest r) {
    boolean reserved = !pd.waitingForRoom(r);
    pd.cancel(r);
    if (reserved && r.prefillTable != null) { // its blocks reserved where it decodes
      handOffs[r.instanceIndex]--;
      instances[r.instanceIndex].release(r.table);
    } else { // waiting for room, or decoding where it was prefilled: its one table is its prefill blocks
      r.prefillTable = r.table;
    }
    r.table = null;
    releasePrefill(r); // its prefill blocks, held until its KV moved
    finish(r, RequestOutcome.TIMED_OUT, nowUs, "");
  }

  /** The clock and the control-plane events, as the gateway and the fleet see them. */
  private abstract class ControlHost {
    public long nowUs() {
      return nowUs;
    }

    public void schedule(long atUs, Object event) {
      events.push(atUs, EventQueue.CONTROL, event);
    }
  }

  /** What the gateway sees of the engine. */
  private final class GatewayHost extends ControlHost implements Gateway.Host<EngineRequest> {
    @Override
    public ClusterView cluster() {
      refreshSnapshotsIfDue();
      return cluster;
    }

    @Override
    public void route(EngineRequest r) {
      toRouting(r);
    }

    @Override
    public void end(EngineRequest r, boolean timedOut, long endUs, String reason) {
      finish(r, timedOut ? RequestOutcome.TIMED_OUT : RequestOutcome.REJECTED, endUs, reason);
    }

    @Override
    public String sloClass(EngineRequest r) {
      return r.spec.sloClass();
    }

    @Override
    public String tenant(EngineRequest r) {
      return r.spec.tenant();
    }

    @Override
    public long deadlineUs(EngineRequest r) {
      return r.deadlineUs;
    }
  }

  private static final int[] NO_INSTANCES = new int[0];

  /**
   * The autoscaled pools' instance ranges: the whole cluster for an autoscaling of no named pool,
   * else each named pool's instances, which must be contiguous.
   */
  private static List<Fleets.Pool> scaledPools(List<InstanceConfig> configs, List<Autoscaling> scaled) {
    List<Fleets.Pool> out = new ArrayList<>();
    for (Autoscaling a : scaled) {
      if (a.pool() == null) {
        out.add(new Fleets.Pool("", 0, configs.size(), a.config(), a.scaler(), a.name(), null));
        continue;
      }
      int first = -1;
      int count = 0;
      for (int i = 0; i < configs.size(); i++) {
        if (configs.get(i).pool().equals(a.pool())) {
          if (first >= 0 && first + count != i) {
            throw new IllegalArgumentException("autoscaling: pool '" + a.pool() + "' is not one run of instances");
          }
          first = first < 0 ? i : first;
          count++;
        }
      }
      if (first < 0) {
        throw new IllegalArgumentException("autoscaling: no instance of pool '" + a.pool() + "'");
      }
      out.add(new Fleets.Pool(a.pool(), first, count, a.config(), a.scaler(), a.name(), a.nodePool()));
    }
    return out;
  }

  /** What the fleets see of the engine. */
  private final class FleetHost extends ControlHost implements Fleet.Host {
    @Override
    public InstanceSnapshot snapshot(int i) {
      refreshSnapshotsIfDue();
      return instances[i].snapshot();
    }

    @Override
    public int inFlight(int i) { // a prefill instance holding a request's blocks until its KV moved holds it still
      return instances[i].inFlight() + (handOffs == null ? 0 : handOffs[i]);
    }

    @Override
    public long kvCapacityTokens(int i) {
      return instances[i].pool().totalBlocks() * instances[i].pool().blockSizeTokens();
    }

    @Override
    public void slowSteps(int i, double factor, long untilUs) {
      instances[i].slowSteps(factor, untilUs);
    }

    @Override
    public boolean drained() {
      return live == null && sourceDone && pendingOpenLoop == null && overall.unfinished() == 0;
    }
  }

  @Override
  public long nowUs() {
    return nowUs;
  }

  @Override
  public void schedule(long atUs, int type, Object payload) {
    events.push(atUs, type, payload);
  }

  @Override
  public int priorityOf(EngineRequest r) {
    return priorityPolicy.priority(r, nowUs);
  }

  @Override
  public boolean prioritiesChangeWithTime() {
    return prioritiesChangeWithTime;
  }

  @Override
  public EngineListener listener() {
    return listener;
  }

  /** The cluster as routers see it: one reused view over the instances' snapshots. */
  private final class ClusterState implements ClusterView {
    @Override
    public int size() {
      return candidates != null ? candidates.length : fleets == null ? instances.length : fleets.routable().length;
    }

    @Override
    public InstanceSnapshot get(int index) {
      return instances[member(index)].snapshot();
    }

    @Override
    public long nowUs() {
      return nowUs;
    }
  }

  /** The instance at index {@code k} of the routers' view. */
  private int member(int k) {
    return candidates != null ? candidates[k] : fleets == null ? k : fleets.routable()[k];
  }

  SimulationResult run() {
    pullNext();
    process(horizonUs);
    return finish();
  }

  /** Processes every event at or before {@code limitUs} (and the horizon), in order. */
  private void process(long limitUs) {
    long limit = Math.min(limitUs, horizonUs);
    while (!events.isEmpty() && events.peekTimeUs() <= limit) {
      long t = events.pop();
      if (t < nowUs) {
        throw new IllegalStateException("clock went backwards: " + t + " < " + nowUs);
      }
      Object payload = events.poppedPayload();
      if (events.poppedType() == EventQueue.TIMEOUT
          && ((EngineRequest) payload).state == EngineRequest.State.FINISHED) {
        continue; // the deadline of a request that already ended: nothing happens, the clock stays
      }
      if (events.poppedType() == EventQueue.CONTROL && controlEventIdle(payload)) {
        continue; // likewise a tick with nothing to do, a time-to-live of a request gone on
      }
      nowUs = t;
      switch (events.poppedType()) {
        case EventQueue.ARRIVAL -> onArrival((RequestSpec) payload);
        case EventQueue.ADMIT -> onAdmission((EngineRequest) payload);
        case EventQueue.ROUTE -> onRouting((EngineRequest) payload);
        case EventQueue.QUEUED -> instanceOf((EngineRequest) payload).onQueued((EngineRequest) payload);
        case EventQueue.LOADED -> instanceOf((EngineRequest) payload).onLoaded((EngineRequest) payload);
        case EventQueue.STEP -> ((Instance) payload).onStep();
        case EventQueue.TIMEOUT -> onTimeout((EngineRequest) payload);
        case EventQueue.CONTROL -> onControlEvent(payload);
        default -> throw new IllegalStateException("unknown event type " + events.poppedType());
      }
    }
  }

  private void onTimeout(EngineRequest r) {
    if (r.state == EngineRequest.State.HANDED_OFF) {
      onHandedOffTimeout(r);
    } else {
      instanceOf(r).onTimeout(r);
    }
  }

  /** The instance {@code r} was routed to. */
  private Instance instanceOf(EngineRequest r) {
    return instances[r.instanceIndex];
  }

  // ---------------------------------------------------------------- live driving

  /**
   * Live mode: processes every event at or before {@code timeUs}, then sets the clock to {@code
   * timeUs} (nothing happens in between), so that requests submitted next arrive at it.
   */
  void advanceTo(long timeUs) {
    if (timeUs < nowUs) {
      throw new IllegalArgumentException("cannot advance to " + timeUs + " us: the clock is at " + nowUs + " us");
    }
    process(timeUs);
    nowUs = Math.max(nowUs, Math.min(timeUs, horizonUs));
  }

  /** Live mode: time of the next event, or {@link Long#MAX_VALUE} when nothing is scheduled. */
  long nextEventUs() {
    return events.isEmpty() ? Long.MAX_VALUE : events.peekTimeUs();
  }

  /** Live mode: a request arriving at its arrival time, which must not be before the clock. */
  void submit(RequestSpec spec) {
    checkArrival(spec);
    events.push(spec.arrivalTimeUs(), EventQueue.ARRIVAL, spec);
  }

  /**
   * Live mode: the client of request {@code id} went away (vLLM aborts a request whose connection
   * closed). A request still in the engine ends now as timed out and frees its KV blocks.
   *
   * @return whether the request was still in the engine
   */
  boolean abort(long id) {
    if (live == null) {
      live = new java.util.HashMap<>();
    }
    EngineRequest r = live.get(id);
    if (r == null || r.state == EngineRequest.State.FINISHED) {
      return false;
    }
    if (r.state == EngineRequest.State.HANDED_OFF) {
      onHandedOffTimeout(r);
    } else if (r.instanceIndex >= 0) {
      instances[r.instanceIndex].onTimeout(r);
    } else {
      r.aborted = true; // ends at its admission or routing decision
    }
    return true;
  }

  /** Turns on live bookkeeping (requests by id, for {@link #abort}). */
  void trackLiveRequests() {
    if (live == null) {
      live = new java.util.HashMap<>();
    }
  }

  /** Live mode: the autoscaled pool's replicas now, or null without autoscaling. */
  io.blis.engine.result.AutoscaleReport.Sample fleetNow() {
    return fleets == null ? null : fleets.current();
  }

  /** Live mode: each autoscaled pool's replicas now, by its name; empty without autoscaling. */
  Map<String, io.blis.engine.result.AutoscaleReport.Sample> fleetNowByPool() {
    return fleets == null ? Map.of() : fleets.currentByPool();
  }

  /** Live mode: requests waiting in the gateway's queue now, or -1 without flow control. */
  int gatewayQueued() {
    return gateway == null ? -1 : gateway.queued();
  }

  /** The name of the model each instance serves, by index; null for every instance without model routing. */
  List<String> servedModels() {
    String[] out = new String[instances.length];
    if (modelInstances != null) {
      for (int m = 0; m < modelInstances.length; m++) {
        for (int i : modelInstances[m]) {
          out[i] = config.models().models().get(m).name();
        }
      }
    }
    return java.util.Arrays.asList(out);
  }

  /** Live mode: what each instance holds now. */
  List<InstanceStatus> status() {
    List<InstanceStatus> out = new ArrayList<>(instances.length);
    for (Instance inst : instances) {
      KvBlockPool pool = inst.pool();
      out.add(new InstanceStatus(inst.index(), inst.poolName(), inst.running().size(),
          inst.waiting().size(), inst.inFlight(), pool.usedBlocks(), pool.totalBlocks(),
          pool.blockSizeTokens(), inst.preemptionEvents(), inst.steps(), pool.queriedTokens(),
          pool.hitTokens(), inst.limits().maxModelLen(), inst.limits().maxNumSeqs(),
          inst.adapters() == null ? 0 : inst.adapters().maxLoras(), adapterNames(inst.running()::get,
              inst.running().size()), adapterNames(inst.waiting()::get, inst.waiting().size()),
          inst.speculator() == null ? null : io.blis.engine.spec.SpeculativeCounts.of(inst.speculator())));
    }
    return out;
  }

  /** The distinct adapters the first {@code n} requests name, sorted. */
  private static List<String> adapterNames(java.util.function.IntFunction<EngineRequest> requests, int n) {
    java.util.TreeSet<String> names = new java.util.TreeSet<>();
    for (int k = 0; k < n; k++) {
      String a = requests.apply(k).spec.adapter();
      if (!a.isEmpty()) {
        names.add(a);
      }
    }
    return List.copyOf(names);
  }

  /** Live mode: ends the run and summarizes it (requests still in flight count as left over). */
  SimulationResult end() {
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

  private ScopeMetrics breakdown(Map<String, ScopeMetrics> scopes, String key) {
    ScopeMetrics s = scopes.get(key);
    if (s == null) {
      s = new ScopeMetrics(-1, streamingMetrics, breakdownItl && scopes == perClass);
      scopes.put(key, s);
    }
    return s;
  }

  private ScopeMetrics scope(int stage) {
    ScopeMetrics s = lastScope;
    if (s == null || s != stages.get(stage)) {
      s = stages.get(stage);
      if (s == null) {
        // the only stage's inter-token samples are the whole run's: shared until a second appears
        s = new ScopeMetrics(stage, streamingMetrics);
        if (stages.isEmpty()) {
          s.shareItl(overall);
        } else {
          stages.values().forEach(ScopeMetrics::keepOwnItl);
        }
        stages.put(stage, s);
      }
      lastScope = s;
    }
    return s;
  }

  private void onArrival(RequestSpec spec) {
    boolean openLoop = spec == pendingOpenLoop;
    if (overall.unfinished() >= maxBacklog) { // this one would be past the limit
      throw new BacklogLimitException(maxBacklog, nowUs);
    }
    long deadline = spec.timeoutUs() > 0 ? SimulatedTime.later(nowUs, spec.timeoutUs()) : 0;
    EngineRequest r = new EngineRequest(spec, nowUs, deadline);
    if (live != null && live.put(spec.id(), r) != null) {
      throw new IllegalArgumentException("live simulation: request id " + spec.id() + " is already in the engine");
    }
    if (listener != null) {
      listener.onArrived(r, nowUs);
    }
    overall.onInjected(nowUs);
    if (spec.sessionId() >= 0) {
      if (sessions == null) {
        sessions = new io.blis.engine.metrics.SessionTally(streamingMetrics);
      }
      sessions.onArrival(spec.sessionId(), spec.round(), nowUs);
    }
    scope(spec.stage()).onInjected(nowUs);
    breakdown(perClass, spec.sloClass()).onInjected(nowUs);
    if (!spec.tenant().isEmpty()) {
      breakdown(perTenant, spec.tenant()).onInjected(nowUs);
    }
    if (modelByName != null && !spec.model().isEmpty()) {
      Integer m = modelByName.get(io.blis.engine.models.ModelRouting.key(spec.model()));
      r.model = m == null ? -1 : m;
      breakdown(perModel, modelKey(r)).onInjected(nowUs);
    }
    if (lora && !spec.adapter().isEmpty()) {
      breakdown(perAdapter, spec.adapter()).onInjected(nowUs);
    }
    if (fleets != null) { // the pools it may go to count it: its model's, none for a model nobody serves
      fleets.onArrival(r.model >= 0 ? modelInstances[r.model]
          : modelByName != null && !spec.model().isEmpty() ? NO_INSTANCES : null);
    }
    if (config.admissionLatencyUs() > 0) {
      events.push(SimulatedTime.later(nowUs, config.admissionLatencyUs()), EventQueue.ADMIT, r);
    } else {
      onAdmission(r);
    }
    if (openLoop) {
      pendingOpenLoop = null;
      pullNext();
    }
  }

  /** The admission decision, at arrival + admission latency. */
  private void onAdmission(EngineRequest r) {
    if (timedOutBeforeRouting(r)) {
      return;
    }
    if (gateway != null) { // flow control decides in place of the admission policy
      gateway.admit(r);
      return;
    }
    refreshSnapshotsIfDue();
    AdmissionDecision d = admission.admit(r, cluster);
    admissionDecisions++;
    if (config.traceDecisions()) {
      decisions.append(new RoutingDecision("admission", r.spec.id(), nowUs, d.admitted(), d.reason(),
          -1, List.of(), List.of(), -1));
    }
    if (!d.admitted()) {
      admissionRejections++;
      finish(r, RequestOutcome.REJECTED, nowUs, d.reason());
      return;
    }
    toRouting(r);
  }

  /** Sends an admitted request to its routing decision, after the routing latency. */
  private void toRouting(EngineRequest r) {
    if (config.routingLatencyUs() > 0) {
      events.push(SimulatedTime.later(nowUs, config.routingLatencyUs()), EventQueue.ROUTE, r);
    } else {
      onRouting(r);
    }
  }

  /** Whether a control-plane event would do nothing (it is consumed; the clock stays). */
  private boolean controlEventIdle(Object payload) {
    if (fleets != null && fleets.owns(payload)) {
      return fleets.idle(payload);
    }
    if (pd != null && PdCoordinator.isPdEvent(payload)) {
      return pd.idle(payload);
    }
    return gateway != null && Gateway.isGatewayEvent(payload) && gateway.consumeIfIdle(payload);
  }

  /** A control-plane event: the fleet's or the gateway's. */
  private void onControlEvent(Object payload) {
    if (fleets != null && fleets.owns(payload)) {
      fleets.onEvent(payload);
    } else if (gateway != null && Gateway.isGatewayEvent(payload)) {
      gateway.onEvent(payload);
    } else if (pd != null && PdCoordinator.isPdEvent(payload)) {
      pd.onEvent(payload);
    } else {
      throw new IllegalStateException("unknown control event " + payload);
    }
  }

  /** The routing decision, at arrival + admission and routing latencies. */
  private void onRouting(EngineRequest r) {
    if (timedOutBeforeRouting(r)) {
      return;
    }
    if (modelByName != null && r.model < 0 && !r.spec.model().isEmpty()) {
      finish(r, RequestOutcome.REJECTED, nowUs, io.blis.engine.models.ModelRouting.NOT_SERVED);
      return;
    }
    Instance target = route(r);
    target.onRouted(r);
    if (!r.disaggregated) { // a disaggregated request counts at its decode instance
      perInstance[target.index()].onInjected(nowUs);
    }
    if (r.deadlineUs > 0) {
      events.push(r.deadlineUs, EventQueue.TIMEOUT, target.index(), r);
    }
    long queueingUs = SimulatedTime.checkedDelay(target.model().queueingTime(r), "queueing time");
    if (queueingUs < 0) {
      throw new IllegalStateException("latency model returned a negative queueing time " + queueingUs);
    }
    long takenUs = target.apiServer().admit(nowUs, r.inputTokens);
    events.push(SimulatedTime.later(takenUs, queueingUs), EventQueue.QUEUED, target.index(), r);
  }

  /**
   * A request whose client deadline passed while it was in the admission or routing latency ends
   * as timed out, at its deadline.
   */
  private boolean timedOutBeforeRouting(EngineRequest r) {
    if (r.deadlineUs > 0 && r.deadlineUs <= nowUs) {
      finish(r, RequestOutcome.TIMED_OUT, r.deadlineUs, "");
      return true;
    }
    if (r.aborted) {
      finish(r, RequestOutcome.TIMED_OUT, nowUs, "");
      return true;
    }
    return false;
  }

  private void refreshSnapshotsIfDue() {
    if (lastRefreshUs != Long.MIN_VALUE && nowUs - lastRefreshUs < config.snapshotRefreshUs()) {
      return;
    }
    // only the instances whose figures may have changed since the last refresh: the others'
    // snapshots already hold their current figures (4,096 instances refreshed at every routing
    // decision cost most of a large cluster's run)
    for (int i = 0, n = staleSnapshots.size(); i < n; i++) {
      staleSnapshots.get(i).run();
    }
    staleSnapshots.clear();
    lastRefreshUs = nowUs;
  }

  @Override
  public void snapshotStale(Runnable refresh) {
    staleSnapshots.add(refresh);
  }

  @Override
  public long snapshotRefreshedAtUs() {
    return lastRefreshUs;
  }

  @Override
  public EngineRequest routingRequest() {
    return routingRequest;
  }

  private Instance route(EngineRequest r) {
    routingDecisions++;
    if (instances.length == 1) {
      if (config.traceDecisions()) {
        refreshSnapshotsIfDue();
        traceRouting(r, 0, false, null);
      }
      return instances[0];
    }
    Router chosen = router;
    int[] among = null; // every routable instance
    if (pd != null) {
      r.disaggregated = decideDisaggregation(r);
      chosen = r.disaggregated ? config.disaggregation().prefillRouter() : config.disaggregation().decodeRouter();
      among = r.disaggregated ? prefillAmong(r) : decodeAmong(r);
    } else if (r.model >= 0) { // among the instances serving the model it names, by that model's router
      chosen = config.models().models().get(r.model).router();
      among = ready(modelInstances[r.model]);
    }
    return instances[chooseInstance(r, chosen, among, config.traceDecisions())];
  }

  /**
   * The instance {@code router} chooses for {@code r} among {@code among} (instance indices; null
   * for every routable instance), on refreshed snapshots, head-of-line blocking counted over them;
   * with {@code trace}, the decision recorded, with the router's scores when it chose among every
   * instance (a phase's or a model's routers score over their own instances).
   */
  private int chooseInstance(EngineRequest r, Router router, int[] among, boolean trace) {
    refreshSnapshotsIfDue();
    candidates = among;
    try {
      countHolBlocking();
      routingRequest = r;
      boolean scored = trace && among == null && router.score(r, cluster, scores);
      int choice = router.route(r, cluster);
      if (choice < 0 || choice >= cluster.size()) {
        throw new IllegalStateException("router chose instance " + choice + " of " + cluster.size());
      }
      choice = member(choice);
      if (trace) { // while the request is the one being routed: the candidates' cached prefixes are its
        traceRouting(r, choice, scored, among);
      }
      return choice;
    } finally {
      candidates = null;
      routingRequest = null;
    }
  }

  /**
   * Whether {@code r} is disaggregated: the decider's answer, unless no decode instance could
   * ever hold it (it then goes whole to a decode instance, which refuses it as it would).
   */
  private boolean decideDisaggregation(EngineRequest r) {
    boolean holdable = false;
    for (int i : decodeAmong(r)) {
      holdable |= instances[i].canHold(r);
    }
    if (!holdable || prefillAmong(r).length == 0) {
      pd.keepWhole(); // nothing to split it onto
      return false;
    }
    int cached = 0;
    if (pd.needsCachedPrefix()) {
      routingRequest = r;
      for (int i : decodeAmong(r)) {
        cached = Math.max(cached, instances[i].snapshot().cachedPrefixTokens());
      }
      routingRequest = null;
    }
    return pd.decide(r.inputTokens, cached);
  }

  /**
   * Counts a routing decision at which some instance's backlog (requests routed there and not
   * yet running: waiting, or on their way to the queue) is far above the cluster mean.
   */
  private void countHolBlocking() {
    long total = 0;
    int max = 0;
    int n = cluster.size(); // the routable instances (all of them without autoscaling)
    for (int k = 0; k < n; k++) {
      Instance inst = instances[member(k)];
      int q = inst.inFlight() - inst.running().size();
      total += q;
      max = Math.max(max, q);
    }
    double mean = (double) total / n;
    if (max >= HOL_FACTOR * mean && max - mean >= HOL_MIN_EXCESS) {
      holBlockingEvents++;
    }
  }

  /**
   * Records a routing decision with every candidate's score and estimated wait, and the regret;
   * the candidates are {@code among} (instance indices), or every instance when null.
   */
  private void traceRouting(EngineRequest r, int choice, boolean scored, int[] among) {
    int n = among == null ? instances.length : among.length;
    double fallbackStepUs = 0;
    for (Instance inst : instances) {
      fallbackStepUs = Math.max(fallbackStepUs, ((Instance.Snapshot) inst.snapshot()).stepEstimateUs());
    }
    List<RoutingDecision.Candidate> candidates = new ArrayList<>(n);
    for (int k = 0; k < n; k++) {
      int i = among == null ? k : among[k];
      waitEstimates[i] = estimatedWaitUs(r, (Instance.Snapshot) instances[i].snapshot(), fallbackStepUs);
      candidates.add(new RoutingDecision.Candidate(i, scored ? scores[i] : Double.NaN, waitEstimates[i]));
    }
    int k = config.counterfactualK();
    List<Integer> alternatives = new ArrayList<>();
    long regret = -1;
    if (k > 0) {
      List<Integer> others = new ArrayList<>(n);
      for (RoutingDecision.Candidate c : candidates) {
        if (c.instance() != choice) {
          others.add(c.instance());
        }
      }
      others.sort((a, b) -> a.equals(b) ? 0 : waitEstimates[a] != waitEstimates[b]
          ? Long.compare(waitEstimates[a], waitEstimates[b]) : Integer.compare(a, b));
      alternatives.addAll(others.subList(0, Math.min(k, others.size())));
      regret = alternatives.isEmpty() ? 0
          : Math.max(0, waitEstimates[choice] - waitEstimates[alternatives.get(0)]);
      regrets.add(regret);
      if (regret > 0) {
        regretDecisions++;
      }
    }
    decisions.append(new RoutingDecision("routing", r.spec.id(), nowUs, true, "", choice, candidates,
        alternatives, regret));
  }

  /**
   * How long {@code r} would wait at an instance before its prefill completes, by the snapshot:
   * the prompt tokens queued there plus its own uncached ones, in steps of the instance's token
   * budget, times its recent step time ({@code fallbackStepUs} before its first step).
   */
  private static long estimatedWaitUs(EngineRequest r, Instance.Snapshot s, double fallbackStepUs) {
    long uncached = Math.max(0, r.inputTokens - s.cachedPrefixTokens());
    long tokens = s.queuedPromptTokens() + uncached;
    long steps = (tokens + s.stepTokenBudget() - 1) / s.stepTokenBudget();
    double stepUs = s.stepEstimateUs() > 0 ? s.stepEstimateUs() : fallbackStepUs;
    return Math.round(steps * stepUs);
  }

  @Override
  public void finish(EngineRequest r, RequestOutcome outcome, long endUs, String reason) {
    r.state = EngineRequest.State.FINISHED;
    if (live != null) {
      live.remove(r.spec.id());
    }
    r.table = null;
    r.promptBlockHashes = null;
    lastEndUs = Math.max(lastEndUs, endUs);
    SloTarget modelTarget = r.model >= 0 ? modelTargets[r.model] : null;
    boolean metSlo = outcome == RequestOutcome.COMPLETED
        && (modelTarget != null ? modelTarget : config.slo().getOrDefault(r.spec.sloClass(), SloTarget.NONE))
            .met(r.firstTokenClientUs - r.arrivalUs, r.lastTokenClientUs - r.arrivalUs);
    if (listener != null) {
      listener.onFinished(r.instanceIndex, r, outcome, nowUs, endUs);
    }
    if (r.instanceIndex >= 0) {
      instances[r.instanceIndex].onEnded();
      perInstance[r.instanceIndex].onFinished(r, outcome, endUs, reason, metSlo);
    }
    if (pd != null) {
      if (r.disaggregated && outcome == RequestOutcome.COMPLETED && r.transferEndUs >= 0) {
        pd.onCompleted(r.firstScheduledUs - r.arrivalUs, r.prefillDoneUs - r.firstScheduledUs,
            r.transferStartUs - r.prefillDoneUs, r.firstTokenClientUs - r.transferEndUs, r.ttftUs());
      }
      if (r.instanceIndex >= 0 && pd.role(r.instanceIndex).decodes()) {
        pd.wake(); // its blocks are free: a request waiting for decode room may fit now
      }
    }
    if (sessions != null && r.spec.sessionId() >= 0) {
      sessions.onFinished(r.spec.sessionId(), r.spec.round(), r.firstTokenClientUs >= 0 ? r.ttftUs() : -1,
          outcome == RequestOutcome.COMPLETED, endUs);
    }
    if (fleets != null) {
      boolean done = outcome == RequestOutcome.COMPLETED;
      fleets.onFinished(r.instanceIndex, r.disaggregated ? r.prefillInstance : -1, r.arrivalUs, done, metSlo,
          done ? r.firstTokenClientUs - r.arrivalUs : -1);
    }
    overall.onFinished(r, outcome, endUs, reason, metSlo);
    scope(r.spec.stage()).onFinished(r, outcome, endUs, reason, metSlo);
    breakdown(perClass, r.spec.sloClass()).onFinished(r, outcome, endUs, reason, metSlo);
    if (!r.spec.tenant().isEmpty()) {
      breakdown(perTenant, r.spec.tenant()).onFinished(r, outcome, endUs, reason, metSlo);
    }
    if (modelByName != null && !r.spec.model().isEmpty()) {
      breakdown(perModel, modelKey(r)).onFinished(r, outcome, endUs, reason, metSlo);
    }
    if (lora && !r.spec.adapter().isEmpty()) {
      breakdown(perAdapter, r.spec.adapter()).onFinished(r, outcome, endUs, reason, metSlo);
    }
    if (recordRequests) {
      records.append(record(r, outcome, endUs, reason));
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
        Math.max(0, r.cachedPromptTokens), reason == null ? "" : reason,
        r.instanceIndex,
        r.spec.sloClass());
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
    int secondaryTiers = 0;
    long[] secondary = new long[4];
    long preemptions = 0;
    long steps = 0;
    long inversions = 0;
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
      pool.advanceTransfers(Math.max(nowUs, lastEndUs)); // copies done by the end of the run count
      secondaryTiers = Math.max(secondaryTiers, pool.secondaryTierCount());
      secondary[0] += pool.secondaryReadBlocks();
      secondary[1] += pool.secondaryWrittenBlocks();
      secondary[2] += pool.refusedPromotions();
      secondary[3] += pool.skippedStores();
      preemptions += inst.preemptionEvents();
      steps += inst.steps();
      inversions += inst.priorityInversions();
    }
    for (int type : new int[] {EventQueue.ADMIT, EventQueue.ROUTE, EventQueue.QUEUED}) {
      events.forEachPayload(type, p -> {
        EngineRequest r = (EngineRequest) p;
        if (r.state == EngineRequest.State.ARRIVED) {
          leftover(r, true);
        }
      });
    }
    if (gateway != null) {
      gateway.forEachQueued(r -> leftover(r, true));
    }
    if (pd != null) {
      pd.forEachPending(r -> leftover(r, false));
    }
    long end = Math.max(nowUs, lastEndUs);
    if (!events.isEmpty() && horizonUs != Long.MAX_VALUE) {
      end = horizonUs;
    }
    List<MetricsSummary> stageSummaries = new ArrayList<>();
    stages.values().forEach(s -> stageSummaries.add(s.summarize()));
    EngineStats stats = new EngineStats(instances.length, totalBlocks,
        instances[0].pool().blockSizeTokens(), peak, ratio(hits, queried),
        ratio(hitBlocks, queriedBlocks), cpuBlocks, cpuLoaded, preemptions, steps, secondaryTiers, secondary[0],
        secondary[1], secondary[2], secondary[3]);
    // in order of arrival, then id: sorted as they are read back (spilled in sorted runs past the first)
    List<RequestRecord> recs = records.seal();
    MetricsSummary overallSummary = overall.summarize();
    ClusterReport report = new ClusterReport(instanceResults(), summaries(perClass),
        summaries(perTenant), summaries(perModel),
        new Anomalies(inversions, holBlockingEvents, overallSummary.rejectedByReason()),
        config.traceDecisions()
            ? new DecisionSummary(admissionDecisions, admissionRejections, routingDecisions,
                config.counterfactualK(), regretDecisions, regrets.summarize())
            : null,
        decisions.seal());
    return new SimulationResult(recs, overallSummary, stageSummaries, end, stats, report,
        config.fitness(), gateway == null ? null : gateway.report(),
        fleets == null ? null : fleets.report(end), pd == null ? null : pd.report(poolUse(end)),
        lora ? loraReport() : null, sessions == null ? null : sessions.report(), speculativeCounts());
  }

  /** What the instances' speculative decoding did, summed; null when none speculates. */
  private io.blis.engine.spec.SpeculativeCounts speculativeCounts() {
    io.blis.engine.spec.SpeculativeCounts sum = null;
    for (Instance inst : instances) {
      if (inst.speculator() != null) {
        io.blis.engine.spec.SpeculativeCounts c = io.blis.engine.spec.SpeculativeCounts.of(inst.speculator());
        sum = sum == null ? c : sum.plus(c);
      }
    }
    return sum;
  }

  /** What the instances' LoRA adapters did, summed over the instances that serve them. */
  private io.blis.engine.result.LoraReport loraReport() {
    long gpuLoads = 0;
    long reads = 0;
    long gpuEvictions = 0;
    long cpuEvictions = 0;
    long loadUs = 0;
    long kernelUs = 0;
    long steps = 0;
    long passedOver = 0;
    int peak = 0;
    long reserved = 0;
    io.blis.engine.lora.LoraSpec spec = null;
    Map<String, long[]> loads = new TreeMap<>();
    for (Instance inst : instances) {
      io.blis.engine.lora.AdapterSlots a = inst.adapters();
      if (a == null) {
        continue;
      }
      spec = a.costs().spec();
      reserved = Math.max(reserved, a.costs().reservedBytesPerGpu());
      gpuLoads += a.gpuLoads();
      reads += a.diskLoads();
      gpuEvictions += a.gpuEvictions();
      cpuEvictions += a.cpuEvictions();
      loadUs += a.loadUs();
      kernelUs += a.overheadUs();
      steps += a.stepsWithAdapters();
      passedOver += a.skippedAdmissions();
      peak = Math.max(peak, a.peakResident());
      a.loadsByAdapter().forEach((name, c) -> {
        long[] t = loads.computeIfAbsent(name, k -> new long[2]);
        t[0] += c[0];
        t[1] += c[1];
      });
    }
    Map<String, io.blis.engine.result.LoraReport.Adapter> byAdapter = new TreeMap<>();
    perAdapter.forEach((name, m) -> {
      long[] c = loads.getOrDefault(name, new long[2]);
      byAdapter.put(name, new io.blis.engine.result.LoraReport.Adapter(c[0], c[1], m.summarize()));
    });
    return new io.blis.engine.result.LoraReport(spec.maxLoras(), spec.maxCpuLoras(), spec.maxLoraRank(), reserved,
        gpuLoads, reads, gpuEvictions, cpuEvictions, loadUs / 1e3, kernelUs / 1e3, steps, passedOver, peak,
        byAdapter);
  }

  /** Each pool's role and the fraction of the run its instances spent in steps. */
  private List<DisaggregationReport.Pool> poolUse(long endUs) {
    Map<String, long[]> byPool = new java.util.LinkedHashMap<>(); // instances, busy microseconds
    for (Instance inst : instances) {
      long[] a = byPool.computeIfAbsent(inst.poolName(), k -> new long[2]);
      a[0]++;
      a[1] += inst.busyUs();
    }
    List<DisaggregationReport.Pool> out = new ArrayList<>();
    byPool.forEach((name, a) -> out.add(new DisaggregationReport.Pool(name,
        config.disaggregation().role(name).label(), (int) a[0],
        endUs <= 0 ? 0 : Math.min(1.0, (double) a[1] / (a[0] * (double) endUs)))));
    return out;
  }

  private List<InstanceResult> instanceResults() {
    List<InstanceResult> out = new ArrayList<>(instances.length);
    for (Instance inst : instances) {
      KvBlockPool pool = inst.pool();
      out.add(new InstanceResult(inst.index(), multiPool ? inst.poolName() : "",
          perInstance[inst.index()].summarize(), inst.steps(), inst.preemptionEvents(),
          pool.totalBlocks(), pool.peakUsedBlocks(), ratio(pool.hitTokens(), pool.queriedTokens()),
          inst.priorityInversions()));
    }
    return out;
  }

  private static Map<String, MetricsSummary> summaries(Map<String, ScopeMetrics> scopes) {
    Map<String, MetricsSummary> out = new TreeMap<>();
    scopes.forEach((k, v) -> out.put(k, v.summarize()));
    return out;
  }

  private static double ratio(long a, long b) {
    return b == 0 ? 0.0 : (double) a / b;
  }

  private void countLeftovers(WaitingQueue q, boolean queued) {
    for (int i = 0; i < q.size(); i++) {
      leftover(q.get(i), queued);
    }
  }

  /** The per-model scope's key of a request naming a model: the served model's name, or the name as given. */
  private String modelKey(EngineRequest r) {
    return r.model >= 0 ? config.models().models().get(r.model).name() : r.spec.model();
  }

  private void leftover(EngineRequest r, boolean queued) {
    ScopeMetrics[] scopes = {overall, scope(r.spec.stage()), breakdown(perClass, r.spec.sloClass()),
        r.spec.tenant().isEmpty() ? null : breakdown(perTenant, r.spec.tenant()),
        r.instanceIndex < 0 ? null : perInstance[r.instanceIndex],
        modelByName == null || r.spec.model().isEmpty() ? null : breakdown(perModel, modelKey(r)),
        !lora || r.spec.adapter().isEmpty() ? null : breakdown(perAdapter, r.spec.adapter())};
    for (ScopeMetrics s : scopes) {
      if (s == null) {
        continue;
      }
      if (queued) {
        s.onStillQueued();
      } else {
        s.onStillRunning();
      }
    }
  }
}
