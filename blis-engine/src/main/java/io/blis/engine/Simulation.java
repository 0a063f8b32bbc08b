package io.blis.engine;

import io.blis.engine.result.Fitness;
import io.blis.engine.result.RequestRecord;
import io.blis.engine.result.SimulationResult;
import io.blis.api.AdmissionPolicy;
import io.blis.api.LatencyModel;
import io.blis.api.PriorityPolicy;
import io.blis.api.Router;
import io.blis.api.Scheduler;
import io.blis.engine.policy.Admissions;
import io.blis.engine.policy.Priorities;
import io.blis.engine.policy.Routers;
import io.blis.engine.sched.Schedulers;
import io.blis.kvcache.KvBlockPool;
import io.blis.workload.RequestSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.Objects;
import java.util.function.IntFunction;

/**
 * A discrete-event simulation of a vLLM v1 serving instance, or of a cluster of them behind an
 * admission policy and a router. Time is an integer number of microseconds.
 *
 * <h2>Timeline of a request</h2>
 *
 * <ol>
 *   <li>It arrives at {@code t_a} (its {@code arrivalTimeUs}).
 *   <li>It joins the waiting queue at {@code t_a + queueingTime(request)}; the scheduler cannot
 *       see it earlier. There it may be rejected (counted by reason, reported to the source):
 *       prompt {@code >= max-model-len}, prompt + output {@code > max-model-len}, or more KV
 *       blocks than the whole cache.
 *   <li>Each engine step forms a batch, lasts {@code stepTime(batch)} of engine clock (the batch
 *       holds the requests with new tokens this step), then applies progress. The step that
 *       completes a request's prefill emits its token 1; every later step that schedules it emits
 *       one more; it completes when it has emitted exactly its requested output tokens.
 *   <li>The client sees token {@code k} at (end of the step that produced it) +
 *       {@code schedulingProcessingTime()} (once, from first scheduling) + preemptions x {@code
 *       preemptionProcessingTime()} + {@code k x outputTokenProcessingTime()}. These processing
 *       times shift the request's latencies and never stall the engine clock. With an API server
 *       ({@link Builder#apiServer}) the request first waits for the server to take it in, and
 *       each streamed chunk for the server's earlier work.
 *   <li>TTFT = client time of token 1 - {@code t_a}; E2E = client time of the last token - {@code
 *       t_a}; inter-token intervals are the differences of consecutive client token times;
 *       scheduling delay = start of the step that first scheduled it - {@code t_a}.
 *   <li>With {@code timeoutUs > 0} the client gives up at {@code t_a + timeoutUs}: a request still
 *       waiting or running then is aborted (its KV blocks freed), and one whose last token the
 *       client would see later counts as timed out too.
 * </ol>
 *
 * <h2>Scheduling (vLLM v1)</h2>
 *
 * One token budget per step ({@code max-num-batched-tokens}) is shared by the running requests
 * first, in running-list order (one decode token each, or their next prefill chunk, capped by
 * {@code long-prefill-token-threshold}), then by waiting requests in queue order while fewer than
 * {@code max-num-seqs} run. A newly admitted request skips the prefill of its prompt's cached full
 * blocks, capped so that at least its last prompt token is computed. When a running request
 * cannot get KV blocks, the scheduler's victim is preempted (blocks freed, progress reset to 0,
 * put at the front of the waiting queue; recompute on readmission covers its prompt and the tokens
 * it had generated) until the allocation succeeds or the request itself is the victim. No waiting
 * request is admitted in a step that preempted; a waiting request that cannot get its blocks
 * stops admission for the step.
 *
 * <h2>Cluster</h2>
 *
 * With several instances (one or more {@link InstancePool}s), a request passes the admission
 * policy at {@code t_a + admissionLatencyUs} (a rejected request ends there, counted with its
 * reason) and the router at that time {@code + routingLatencyUs}; the chosen instance then charges
 * its queueing time. Routers see each instance through a snapshot of its queue, batch and KV use
 * refreshed every {@code snapshotRefreshUs} (0: always current), plus the router's own in-flight
 * count, which is always current. Latencies are still measured from {@code t_a}.
 *
 * <h2>Events</h2>
 *
 * Events at the same microsecond fire in the order: cluster events (arrival, admission, routing)
 * before instance events; instance events by instance index, then queue entry, end of a CPU-tier
 * copy, step boundary, client timeout; then in the order they were scheduled. The engine never
 * idles while a request waits.
 *
 * <p>Requests are pulled lazily from the {@link RequestSource} (one pulled ahead); finished
 * requests keep only their metric samples (and a {@link RequestRecord} when requested).
 */
public final class Simulation {

  /** Default interval at which routers' snapshots are refreshed: 50 ms, microseconds. */
  public static final long DEFAULT_SNAPSHOT_REFRESH_US = 50_000;

  /**
   * Latest simulated time a run may reach at its inputs: 365 days, microseconds. Requests must
   * arrive by then, a request timeout and the horizon are at most this long. Far below where
   * microsecond arithmetic on a {@code long} overflows (about 292,000 years), so times built
   * from bounded inputs cannot overflow. The same as {@link SimulatedTime#MAX_SIMULATED_TIME_US}.
   */
  public static final long MAX_SIMULATED_TIME_US = SimulatedTime.MAX_SIMULATED_TIME_US;

  /**
   * Longest single delay: one hour, microseconds. Bounds the admission and routing latencies, and
   * every time a latency model gives (a step, a queueing time, a processing time per token,
   * scheduling or preemption) or a CPU KV block takes to load; a real deployment exceeds none of
   * these by orders of magnitude. The same as {@link SimulatedTime#MAX_DELAY_US}.
   */
  public static final long MAX_DELAY_US = SimulatedTime.MAX_DELAY_US;

  private final Engine engine;
  private boolean ran;

  private Simulation(Engine engine) {
    this.engine = engine;
  }

  /** A builder; a latency model and a request source are required. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Runs the simulation to the end of the workload (or the horizon).
   *
   * @throws IllegalStateException if called twice
   * @throws IllegalArgumentException if the request source misbehaves
   */
  public SimulationResult run() {
    if (ran) {
      throw new IllegalStateException("a Simulation runs once; build a new one");
    }
    ran = true;
    return engine.run();
  }

  /** Configures a {@link Simulation}. */
  public static final class Builder {
    private LatencyModel latencyModel;
    private Scheduler scheduler = Schedulers.fcfs();
    private EngineLimits limits = EngineLimits.defaults();
    private long totalKvBlocks = 1_000_000;
    private int blockSizeTokens = 16;
    private RequestSource source;
    private boolean recordRequests;
    private boolean streamingMetrics;
    private boolean breakdownItl;
    private long horizonUs = Long.MAX_VALUE;
    private long maxBacklog = Long.MAX_VALUE;
    private StepObserver observer;
    private long cpuKvBlocks;
    private double cpuLoadUsPerBlock;
    private io.blis.kvcache.OffloadTiers offloadTiers = io.blis.kvcache.OffloadTiers.NONE;
    private int instances = 1;
    private Router router = Routers.roundRobin();
    private IntFunction<LatencyModel> latencyModels;
    private final List<InstancePool> pools = new ArrayList<>();
    private AdmissionPolicy admission = Admissions.alwaysAdmit();
    private PriorityPolicy priority = Priorities.sloBased(0);
    private long admissionLatencyUs;
    private long routingLatencyUs;
    private long snapshotRefreshUs = DEFAULT_SNAPSHOT_REFRESH_US;
    private final Map<String, SloTarget> slo = new TreeMap<>();
    private boolean traceDecisions;
    private int counterfactualK;
    private Fitness fitness;
    private boolean singleSettingsTouched;
    private EngineListener listener;
    private io.blis.engine.flow.FlowControl flowControl;
    private final List<Engine.Autoscaling> autoscaling = new ArrayList<>();
    private io.blis.engine.disagg.Disaggregation disaggregation;
    private io.blis.engine.frontend.ApiServer apiServer = io.blis.engine.frontend.ApiServer.NONE;
    private boolean freshBlocksFirst;
    private io.blis.engine.models.ModelRouting models;
    /** LoRA adapter costs by pool name ("" for a builder without pools); empty without adapters. */
    private final Map<String, io.blis.engine.lora.LoraCosts> lora = new java.util.HashMap<>();

    private Builder() {}

    /** The latency model timing every step (required). */
    public Builder latencyModel(LatencyModel m) {
      this.latencyModel = Objects.requireNonNull(m, "latencyModel");
      singleSettingsTouched = true;
      return this;
    }

    /**
     * One latency model per instance, created by {@code factory} from the instance index (for
     * {@link #instances(int)} > 1 with stateful models); overrides {@link #latencyModel}.
     */
    public Builder latencyModels(IntFunction<LatencyModel> factory) {
      this.latencyModels = Objects.requireNonNull(factory, "factory");
      singleSettingsTouched = true;
      return this;
    }

    /**
     * Number of identical serving instances (default 1), each with its own queue, running batch
     * and KV cache of {@link #totalKvBlocks} blocks. Arriving requests are routed by the {@link
     * #router}; queueing time is charged by the chosen instance's latency model.
     */
    public Builder instances(int n) {
      if (n < 1) {
        throw new IllegalArgumentException("number of instances must be at least 1, got " + n);
      }
      this.instances = n;
      singleSettingsTouched = true;
      return this;
    }

    /**
     * Adds a pool of instances with their own latency model, limits and KV cache (a heterogeneous
     * cluster: for example 4 x H100 TP1 and 2 x A100 TP2). Instances are numbered in the order
     * pools are added. When any pool is added, the cluster is made of the pools alone and {@link
     * #instances}, {@link #latencyModel}, {@link #limits}, {@link #totalKvBlocks}, {@link
     * #blockSizeTokens} and {@link #cpuKvTier} must not be set.
     */
    public Builder addPool(InstancePool pool) {
      pools.add(Objects.requireNonNull(pool, "pool"));
      return this;
    }

    /** Decides which requests enter the cluster (default: admit all). */
    public Builder admissionPolicy(AdmissionPolicy a) {
      this.admission = Objects.requireNonNull(a, "admission policy");
      return this;
    }

    /**
     * Gives each request its scheduling priority (default: the SLO class's vLLM priority, critical
     * 0 .. background 7). Only schedulers that order the queue by priority follow it.
     */
    public Builder priorityPolicy(PriorityPolicy p) {
      this.priority = Objects.requireNonNull(p, "priority policy");
      return this;
    }

    /**
     * Time from a request's arrival to its admission decision, microseconds (default 0, at most
     * {@link Simulation#MAX_DELAY_US}).
     */
    public Builder admissionLatencyUs(long us) {
      this.admissionLatencyUs = delay(us, "admission latency");
      return this;
    }

    /**
     * Time from admission to the routing decision, microseconds (default 0, at most {@link
     * Simulation#MAX_DELAY_US}).
     */
    public Builder routingLatencyUs(long us) {
      this.routingLatencyUs = delay(us, "routing latency");
      return this;
    }

    /**
     * How often the queue, batch and KV figures routers see are refreshed, microseconds (default
     * {@value Simulation#DEFAULT_SNAPSHOT_REFRESH_US}, as a gateway scraping metrics; 0 = always
     * current; at most {@link Simulation#MAX_DELAY_US}). Routers' own in-flight counts are always current.
     */
    public Builder snapshotRefreshUs(long us) {
      this.snapshotRefreshUs = delay(us, "snapshot refresh interval");
      return this;
    }

    /** Latency targets of an SLO class, for goodput (default: none for every class). */
    public Builder sloTarget(String sloClass, SloTarget target) {
      slo.put(Objects.requireNonNull(sloClass, "sloClass"), Objects.requireNonNull(target, "target"));
      return this;
    }

    /** The latency targets of each SLO class set so far, by class name. */
    public Map<String, SloTarget> sloTargets() {
      return java.util.Collections.unmodifiableMap(new TreeMap<>(slo));
    }

    /**
     * Records every admission and routing decision with the candidates' scores and estimated
     * waits; with {@code counterfactualK > 0} also the k best alternatives and the regret of each
     * routing decision (default: no trace).
     */
    public Builder traceDecisions(int counterfactualK) {
      if (counterfactualK < 0) {
        throw new IllegalArgumentException("counterfactual k must be >= 0, got " + counterfactualK);
      }
      this.traceDecisions = true;
      this.counterfactualK = counterfactualK;
      return this;
    }

    /** Scores the run with these weights (see {@link SimulationResult#fitness()}). */
    public Builder fitness(Fitness f) {
      this.fitness = Objects.requireNonNull(f, "fitness");
      return this;
    }

    /**
     * Puts the gateway's flow control between admission and routing ({@link
     * io.blis.engine.flow.FlowControl}): requests queue by SLO class and go to the router while the
     * pool is not saturated; it decides in place of the admission policy. Default none: requests
     * go from admission straight to the router. The result's {@link SimulationResult#gateway()}
     * counts what it did.
     */
    public Builder flowControl(io.blis.engine.flow.FlowControl f) {
      this.flowControl = Objects.requireNonNull(f, "flow control");
      return this;
    }

    /**
     * Scales the instances between {@code config}'s minimum and maximum replicas as {@code scaler}
     * decides at every tick ({@link io.blis.engine.autoscale.Fleet}): the simulation must hold
     * {@code config.maxReplicas()} instances of one pool (most of them off at a time), of which
     * {@code config.initialReplicas()} are ready at time 0. The result's {@link
     * SimulationResult#autoscale()} has the replicas over time, the GPU hours and the cost.
     */
    public Builder autoscaling(io.blis.engine.autoscale.FleetConfig config, io.blis.api.Autoscaler scaler,
        String name) {
      autoscaling.clear();
      autoscaling.add(new Engine.Autoscaling(null, null, Objects.requireNonNull(config, "config"),
          Objects.requireNonNull(scaler, "scaler"), Objects.requireNonNull(name, "name")));
      return this;
    }

    /**
     * Scales pool {@code pool} (added with {@link #addPool}, its instances {@code
     * config.maxReplicas()}) on its own, with its own scaler, replicas and ticks; call once per
     * scaled pool. Pools not named are fixed. The scaler sees only its pool: its replicas, the
     * arrivals that may go to it (of the model it serves), the requests that ended on it (or that
     * it prefilled). Its replicas take nodes of {@code nodePool}, shared with the other pools
     * naming it (whose {@code config} node settings must be the same: GPUs per node, node counts,
     * provisioning delay, price), or of a node pool of its own when null. The result's {@link
     * SimulationResult#autoscale()} sums the pools (a shared node pool once), with each pool's own
     * report in {@link io.blis.engine.result.AutoscaleReport#pools()} (its node figures its node
     * pool's).
     */
    public Builder autoscaling(String pool, String nodePool, io.blis.engine.autoscale.FleetConfig config,
        io.blis.api.Autoscaler scaler, String name) {
      Objects.requireNonNull(pool, "pool");
      if (autoscaling.stream().anyMatch(a -> a.pool() == null || a.pool().equals(pool))) {
        throw new IllegalArgumentException("autoscaling: pool '" + pool + "' is scaled twice, or with the whole cluster");
      }
      autoscaling.add(new Engine.Autoscaling(pool, nodePool, Objects.requireNonNull(config, "config"),
          Objects.requireNonNull(scaler, "scaler"), Objects.requireNonNull(name, "name")));
      return this;
    }

    /**
     * Whether every instance's KV pool reuses a freed block without a hash before any cached block,
     * as vLLM 0.23 and later do ({@link io.blis.kvcache.KvBlockPool#freshBlocksFirst}); default
     * off, the order of the release the bundled coefficients were fitted on.
     */
    public Builder freshBlocksFirst(boolean on) {
      this.freshBlocksFirst = on;
      return this;
    }

    /**
     * The API server in front of every instance: its work per request taken in and per streamed
     * chunk, served one at a time ({@link io.blis.engine.frontend.ApiServer}); default none.
     */
    public Builder apiServer(io.blis.engine.frontend.ApiServer a) {
      this.apiServer = Objects.requireNonNull(a, "apiServer");
      return this;
    }

    /**
     * Splits requests between pools that prefill and pools that decode, moving their KV between
     * instances ({@link io.blis.engine.disagg.Disaggregation}); its routers replace {@link
     * #router}. The pools are named in {@code d}'s roles and KV figures; every pool must have KV
     * figures. {@link SimulationResult#disaggregation()} says what it did.
     */
    public Builder disaggregation(io.blis.engine.disagg.Disaggregation d) {
      this.disaggregation = Objects.requireNonNull(d, "disaggregation");
      return this;
    }

    /**
     * Several models on the fleet: requests naming a model go to the pools serving it, by its own
     * router; requests naming a model nobody serves are refused ({@link
     * io.blis.engine.models.ModelRouting#NOT_SERVED}); the result has metrics per model.
     */
    public Builder models(io.blis.engine.models.ModelRouting m) {
      this.models = Objects.requireNonNull(m, "models");
      return this;
    }

    /**
     * Serves LoRA adapters on the instances of pool {@code pool} ({@code ""} for a simulation
     * without pools) at {@code costs}: each instance holds {@code max_loras} adapters on its GPUs
     * and loads others as steps need them ({@link io.blis.engine.lora.AdapterSlots}); a step uses
     * at most {@code max_loras} adapters. The KV blocks given for the pool should already leave
     * out {@link io.blis.engine.lora.LoraCosts#reservedBytesPerGpu()}. {@link
     * SimulationResult#lora()} says what it did.
     */
    public Builder lora(String pool, io.blis.engine.lora.LoraCosts costs) {
      lora.put(Objects.requireNonNull(pool, "pool"), Objects.requireNonNull(costs, "costs"));
      return this;
    }

    /** Receives every journey and step event (for tracing); default none. */
    public Builder listener(EngineListener l) {
      this.listener = Objects.requireNonNull(l, "listener");
      return this;
    }

    /** How requests are spread over instances (default round robin); unused with 1 instance. */
    public Builder router(Router r) {
      this.router = Objects.requireNonNull(r, "router");
      return this;
    }

    /** The batch-formation policy; FCFS by default. */
    public Builder scheduler(Scheduler s) {
      this.scheduler = Objects.requireNonNull(s, "scheduler");
      return this;
    }

    /** vLLM limits; {@link EngineLimits#defaults()} by default. */
    public Builder limits(EngineLimits l) {
      this.limits = Objects.requireNonNull(l, "limits");
      singleSettingsTouched = true;
      return this;
    }

    /** GPU KV-cache blocks of the instance (default 1,000,000). */
    public Builder totalKvBlocks(long n) {
      if (n < 1) {
        throw new IllegalArgumentException("total KV blocks must be at least 1, got " + n);
      }
      this.totalKvBlocks = n;
      singleSettingsTouched = true;
      return this;
    }

    /** Tokens per KV block (default 16). */
    public Builder blockSizeTokens(int n) {
      if (n < 1) {
        throw new IllegalArgumentException("block size must be at least 1 token, got " + n);
      }
      this.blockSizeTokens = n;
      singleSettingsTouched = true;
      return this;
    }

    /** Where requests come from (required). */
    public Builder source(RequestSource s) {
      this.source = Objects.requireNonNull(s, "source");
      return this;
    }

    /** Keep one {@link RequestRecord} per finished request (default false). */
    public Builder recordRequests(boolean b) {
      this.recordRequests = b;
      return this;
    }

    /**
     * Summarize latencies with HdrHistogram (bounded memory, 3 significant digits) instead of
     * exact percentiles over every sample (default false).
     */
    public Builder streamingMetrics(boolean b) {
      this.streamingMetrics = b;
      return this;
    }

    /**
     * Keep inter-token samples per instance and per SLO class too, not only for the whole run and
     * its stages (default false: those breakdowns report end-to-end, first-token and scheduling
     * times only). Costs one more sample per generated token and breakdown.
     */
    public Builder breakdownInterTokenSamples(boolean b) {
      this.breakdownItl = b;
      return this;
    }

    /**
     * Stop processing events later than this time, microseconds (default: none; at most {@link
     * Simulation#MAX_SIMULATED_TIME_US}).
     */
    public Builder horizonUs(long t) {
      if (t < 0 || t > MAX_SIMULATED_TIME_US) {
        throw new IllegalArgumentException("horizon must be between 0 and " + MAX_SIMULATED_TIME_US
            + " us (365 days), got " + t);
      }
      this.horizonUs = t;
      return this;
    }

    /**
     * Most requests the simulation holds at once: arrived (pulled from the source or submitted) and
     * not yet finished, over every instance and the cluster's admission and routing (default: no
     * limit). When a workload arrives faster than the deployment serves it, this backlog grows
     * without end, each waiting request holding its prompt; past the limit the run stops with a
     * {@link BacklogLimitException} instead of exhausting the memory.
     */
    public Builder maxBacklog(long requests) {
      if (requests < 1) {
        throw new IllegalArgumentException("the backlog limit must be at least 1 request, got " + requests);
      }
      this.maxBacklog = requests;
      return this;
    }

    /**
     * Adds a CPU KV tier (vLLM OffloadingConnector with a CPU backend): {@code cpuBlocks} block
     * slots in host memory hold copies of computed prompt blocks (least recently stored evicted
     * first). A newly admitted request whose prefix continues in the CPU tier beyond the GPU hit
     * gets GPU blocks for it and joins the running list, but gets no tokens while the blocks are
     * copied, {@code loadUsPerBlock} each, one transfer at a time per instance; it then skips
     * their prefill. Default: no CPU tier.
     */
    public Builder cpuKvTier(long cpuBlocks, double loadUsPerBlock) {
      if (cpuBlocks < 0) {
        throw new IllegalArgumentException("CPU KV blocks must be >= 0, got " + cpuBlocks);
      }
      if (!(loadUsPerBlock >= 0 && loadUsPerBlock <= MAX_DELAY_US)) {
        throw new IllegalArgumentException("CPU KV load time per block must be between 0 and "
            + MAX_DELAY_US + " us (one hour), got " + loadUsPerBlock);
      }
      this.cpuKvBlocks = cpuBlocks;
      singleSettingsTouched = true;
      this.cpuLoadUsPerBlock = loadUsPerBlock;
      return this;
    }

    /**
     * Secondary offload tiers (disks, network file systems) behind the CPU KV tier of {@link
     * #cpuKvTier}: every block stored in the CPU tier is written to each; a new request whose
     * prefix continues only on a tier waits, passed over by the scheduler, while the blocks are read
     * into the CPU tier (one scheduler round longer when the tiers were not asked for them before),
     * then loads them as from the CPU tier. Default: none.
     */
    public Builder offloadTiers(io.blis.kvcache.OffloadTiers tiers) {
      this.offloadTiers = Objects.requireNonNull(tiers, "tiers");
      singleSettingsTouched = true;
      return this;
    }

    private static long nonNegative(long us, String what) {
      if (us < 0) {
        throw new IllegalArgumentException(what + " must be >= 0 us, got " + us);
      }
      return us;
    }

    private static long delay(long us, String what) {
      if (us < 0 || us > MAX_DELAY_US) {
        throw new IllegalArgumentException(what + " must be between 0 and " + MAX_DELAY_US
            + " us (one hour), got " + us);
      }
      return us;
    }

    Builder stepObserver(StepObserver o) {
      this.observer = o;
      return this;
    }

    /**
     * Builds a simulation driven from outside ({@link LiveSimulation}): requests are submitted as
     * they arrive instead of pulled from a source, so no source may be set.
     *
     * @throws IllegalArgumentException if the latency model is missing or a source was set
     */
    public LiveSimulation buildLive() {
      if (source != null) {
        throw new IllegalArgumentException("simulation: a live simulation takes submitted requests, not a source");
      }
      source = RequestSource.of(List.of());
      try {
        return new LiveSimulation(engine());
      } finally {
        source = null;
      }
    }

    /**
     * The heap the instances this builder describes will take before any request ({@link
     * InstanceFootprint}), computed without building them: pools grown to their autoscalers' most
     * replicas count at that size.
     */
    public InstanceFootprint instanceFootprint() {
      if (!pools.isEmpty()) {
        return InstanceFootprint.of(pools);
      }
      return new InstanceFootprint(instances, instances * InstanceFootprint.of(totalKvBlocks, cpuKvBlocks), totalKvBlocks,
          totalKvBlocks);
    }

    /**
     * Builds the simulation.
     *
     * @throws IllegalArgumentException if the latency model or the source is missing
     */
    public Simulation build() {
      return new Simulation(engine());
    }

    private Engine engine() {
      if (pools.isEmpty() && latencyModel == null && latencyModels == null) {
        throw new IllegalArgumentException("simulation: a latency model is required");
      }
      if (!pools.isEmpty() && singleSettingsTouched) {
        throw new IllegalArgumentException("simulation: with pools, set instances, latency models,"
            + " limits and KV cache per pool, not on the builder");
      }
      if (source == null) {
        throw new IllegalArgumentException("simulation: a request source is required");
      }
      List<InstancePool> effective = new ArrayList<>(pools);
      if (effective.isEmpty()) {
        LatencyModel single = latencyModel;
        IntFunction<LatencyModel> models = latencyModels != null ? latencyModels : i -> single;
        effective.add(new InstancePool("", instances, models, limits, totalKvBlocks,
            blockSizeTokens, cpuKvBlocks, cpuLoadUsPerBlock, 1, 1, false, offloadTiers));
      }
      List<Engine.InstanceConfig> configs = new ArrayList<>();
      List<Integer> firstRanks = new ArrayList<>();
      boolean ranked = false;
      for (String pool : lora.keySet()) {
        if (effective.stream().noneMatch(p -> p.name().equals(pool))) {
          throw new IllegalArgumentException("LoRA: no pool named '" + pool + "'");
        }
      }
      for (InstancePool p : effective) {
        int ranks = p.ranks();
        io.blis.engine.lora.LoraCosts adapterCosts = lora.get(p.name());
        if (adapterCosts != null && p.pipelineParallel() > 1) {
          throw new IllegalArgumentException("LoRA adapters on pipeline-parallel instances are not supported"
              + (p.name().isEmpty() ? "" : " (pool " + p.name() + ")") + "; give pp 1");
        }
        ranked |= ranks > 1;
        long blocks = p.totalKvBlocks() / p.pipelineParallel();
        for (int i = 0; i < p.instances(); i++) {
          firstRanks.add(configs.size());
          // the data-parallel ranks of an MoE instance step together, one gate per virtual engine
          StepGate[] gates = p.lockstep() && p.dataParallel() > 1 ? new StepGate[p.pipelineParallel()] : null;
          for (int j = 0; j < ranks; j++) {
            int model = i * ranks + j;
            LatencyModel m = Objects.requireNonNull(p.latencyModels().apply(model),
                "latency model of instance " + i + (ranks > 1 ? " rank " + j : "")
                    + (p.name().isEmpty() ? "" : " of pool " + p.name()));
            StepGate gate = null;
            if (gates != null) {
              int ve = j % p.pipelineParallel();
              gate = gates[ve] != null ? gates[ve] : (gates[ve] = new StepGate());
            }
            configs.add(new Engine.InstanceConfig(p.name(), m, scheduler,
                new KvBlockPool(blocks, p.blockSizeTokens(), p.cpuKvBlocks() / p.pipelineParallel(), p.offloadTiers(),
                    p.resident()).freshBlocksFirst(freshBlocksFirst),
                p.limits(), p.cpuLoadUsPerBlock(), gate,
                adapterCosts == null ? null : new io.blis.engine.lora.AdapterSlots(adapterCosts)));
          }
        }
      }
      Router routing = router;
      if (disaggregation != null && ranked) {
        throw new IllegalArgumentException("disaggregation: pools of data-parallel ranks or pipeline stages"
            + " are not supported; give each pool dp 1 and pp 1");
      }
      if (ranked) {
        firstRanks.add(configs.size());
        routing = new RankRouter(router, firstRanks.stream().mapToInt(Integer::intValue).toArray());
      }
      Engine.ClusterConfig cluster = new Engine.ClusterConfig(routing, admission, priority,
          admissionLatencyUs, routingLatencyUs, snapshotRefreshUs, Map.copyOf(slo),
          traceDecisions, counterfactualK, fitness, listener, flowControl, List.copyOf(autoscaling), disaggregation, models,
          apiServer);
      return new Engine(configs, cluster, source, recordRequests, streamingMetrics, breakdownItl, horizonUs,
          maxBacklog, observer);
    }
  }
}
