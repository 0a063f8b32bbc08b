package io.blis.engine.cluster;

import io.blis.engine.result.SimulationResult;
import io.blis.api.AdmissionPolicy;
import io.blis.api.AdmissionPolicyProvider;
import io.blis.api.AutoscalerProvider;
import io.blis.api.Coefficients;
import io.blis.api.HardwareSpec;
import io.blis.api.LatencyModel;
import io.blis.api.LatencyModelProvider;
import io.blis.api.ModelSpec;
import io.blis.api.PriorityPolicy;
import io.blis.api.PriorityPolicyProvider;
import io.blis.api.Providers;
import io.blis.api.RouterProvider;
import io.blis.api.Scheduler;
import io.blis.api.SchedulerProvider;
import io.blis.engine.Context;
import io.blis.engine.Deployment;
import io.blis.engine.EngineLimits;
import io.blis.engine.InstancePool;
import io.blis.engine.KvOffload;
import io.blis.engine.Simulation;
import io.blis.engine.SloTarget;
import io.blis.latency.catalog.GpuCatalog;
import io.blis.latency.catalog.ModelCatalog;
import io.blis.latency.catalog.ModelConfig;
import io.blis.latency.catalog.ModelSizes;
import io.blis.latency.coeff.CoefficientFiles;
import io.blis.latency.kv.KvCapacity;
import io.blis.latency.layout.Layout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * Builds a cluster simulation from names, as {@code blis run} does: pools of instances by model,
 * GPU and TP (KV cache sized from memory), latency models, schedulers and cluster policies by
 * provider name, optionally from a {@link PolicyBundle}. No command-line code is involved:
 *
 * <pre>{@code
 * SimulationResult r = Cluster.builder()
 *     .bundle(PolicyBundle.load(Path.of("cluster.yaml")))
 *     .router(new PolicySpec("least-loaded", Map.of()))    // overrides the bundle's
 *     .toSimulation()
 *     .source(workload)
 *     .build()
 *     .run();
 * }</pre>
 *
 * <p>A pool field is taken from, in order: the {@link Builder#overrides overrides} (flags given
 * explicitly on the command line), the bundle's pool, then the {@link Builder#defaults defaults}
 * (built-in defaults unless set). Without pools in the bundle the cluster is one pool of {@code
 * defaults.instances()} instances.
 */
public final class Cluster {

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Cluster.class);


  /**
   * Most instances in a cluster, over all its pools: 4,096. Each instance holds its own KV cache,
   * queues and metrics (about 0.6 MB at the defaults, 2.4 GB of memory for 4,096), so much larger
   * fleets exhaust the memory before they simulate anything; split such a study by pool instead.
   * The same as {@link ClusterLimits#MAX_INSTANCES}.
   */
  public static final int MAX_INSTANCES = ClusterLimits.MAX_INSTANCES;

  /** Model, GPU, TP, latency model and limits used when neither a flag nor the bundle sets them. */
  public static final PoolSpec BUILT_IN_DEFAULTS = new PoolSpec("default", 1,
      "meta-llama/Llama-2-7b-hf", "H100", 1, "trained-physics", null, 256, 2048, 0, null, 16, null, 0.9,
      1, 1, 1);

  private Cluster() {}

  public static Builder builder() {
    return new Builder();
  }

  /** Collects the cluster's description; {@link #toSimulation()} resolves it. */
  public static final class Builder {
    private PoolSpec defaults = BUILT_IN_DEFAULTS;
    private PoolSpec overrides = emptyPool();
    private PolicyBundle bundle = PolicyBundle.empty();
    private Integer instancesOverride;
    private PolicySpec router;
    private PolicySpec admission;
    private PolicySpec priority;
    private String scheduler;
    private Long admissionLatencyUs;
    private io.blis.engine.frontend.ApiServer apiServer = io.blis.engine.frontend.ApiServer.NONE;
    private boolean freshBlocksFirst;
    private Long routingLatencyUs;
    private Long snapshotRefreshUs;
    private Map<String, String> options = Map.of();
    private boolean asyncScheduling = true;
    private StepDecorator stepDecorator;
    private long cpuKvBlocks;
    private Double cpuKvGib;
    private double kvTransferGbps = KvOffload.DEFAULT_BANDWIDTH_GBPS;
    private java.util.List<io.blis.kvcache.OffloadTier> offloadTiers = java.util.List.of();
    private boolean offloadGeneratedBlocks;
    private Double cpuLoadUsPerBlock;
    private long seed = 42;
    private PolicySpec autoscaler;
    private io.blis.engine.autoscale.FleetConfig fleet;
    private FleetPlan poolFleets;
    private PdSpec pd = PdSpec.none();
    private PdSplit split;
    private io.blis.engine.lora.LoraSpec lora;
    private io.blis.engine.spec.SpeculativeConfig speculative;
    private String kvCacheDtype;

    private Builder() {}

    /**
     * Every pool decodes speculatively as {@code config} says ({@link io.blis.engine.spec}): its
     * drafter's weights and KV come out of the KV cache (unless the pool gives {@code
     * total_kv_blocks}), its passes are added to each step, and a decoding request verifies {@code
     * K} drafts a step.
     */
    public Builder speculative(io.blis.engine.spec.SpeculativeConfig config) {
      this.speculative = Objects.requireNonNull(config, "config");
      return this;
    }

    /**
     * Every pool stores its KV cache in {@code dtype}, vLLM's {@code --kv-cache-dtype} ({@code auto},
     * {@code fp8}, {@code fp8_e4m3}, {@code fp8_e5m2}): the bytes of a block, so the blocks that fit,
     * and the bytes decode attention reads.
     *
     * @throws IllegalArgumentException for a name vLLM does not accept
     */
    public Builder kvCacheDtype(String dtype) {
      ModelConfig.kvCacheBytesOf(dtype); // refuses a bad name now, naming the accepted ones
      this.kvCacheDtype = dtype;
      return this;
    }

    /**
     * Serves LoRA adapters on every instance as {@code spec} says: each pool's GPUs reserve its
     * slots before the KV cache is sized (unless the pool gives {@code total_kv_blocks}), and
     * steps load and run adapters at the pool's costs ({@link io.blis.engine.lora.LoraCosts}).
     */
    public Builder lora(io.blis.engine.lora.LoraSpec spec) {
      this.lora = Objects.requireNonNull(spec, "spec");
      return this;
    }

    /** Disaggregation settings that win over the bundle's {@code disaggregation} section (non-null fields). */
    public Builder disaggregation(PdSpec settings) {
      this.pd = Objects.requireNonNull(settings, "settings");
      return this;
    }

    /**
     * Splits the single pool of {@code --num-instances} instances as Go BLIS's flags do: {@code
     * prefill} instances that prefill, {@code decode} that decode, and the rest (at least {@code
     * shared}) doing both; {@code prefillOverrides} and {@code decodeOverrides} (non-null fields)
     * set the first two pools apart (their GPU, TP, limits). Refused with a bundle of pools.
     */
    public Builder splitPools(int prefill, int decode, int shared, PoolSpec prefillOverrides,
        PoolSpec decodeOverrides) {
      this.split = new PdSplit(prefill, decode, shared, Objects.requireNonNull(prefillOverrides, "prefillOverrides"),
          Objects.requireNonNull(decodeOverrides, "decodeOverrides"));
      return this;
    }

    /**
     * Scales the (single) pool with the autoscaler {@code spec} names (its parameters the
     * provider's options) as {@code fleet} allows; the pool's instance count must be {@code
     * fleet.maxReplicas()} (see {@link Simulation.Builder#autoscaling}).
     */
    public Builder autoscaler(PolicySpec spec, io.blis.engine.autoscale.FleetConfig fleet) {
      this.autoscaler = Objects.requireNonNull(spec, "autoscaler");
      this.fleet = Objects.requireNonNull(fleet, "fleet");
      this.poolFleets = null;
      return this;
    }

    /**
     * Scales every pool on its own (as one HPA per Deployment does): each with the autoscaler
     * {@code spec} names, or the one its {@link PoolScaling} names, and the fleet {@code fleets}
     * gives for it. A pool starts from its {@code instances} ready replicas and holds as many
     * instances as its fleet's most replicas. The pools of one GPU type share its node pool (their
     * fleets' node settings must agree). See {@link Simulation.Builder#autoscaling(String, String,
     * io.blis.engine.autoscale.FleetConfig, io.blis.api.Autoscaler, String)}.
     */
    public Builder autoscaler(PolicySpec spec, FleetPlan fleets) {
      this.autoscaler = Objects.requireNonNull(spec, "autoscaler");
      this.poolFleets = Objects.requireNonNull(fleets, "fleets");
      this.fleet = null;
      return this;
    }

    /** Values for pool fields that neither the overrides nor the bundle set. */
    public Builder defaults(PoolSpec d) {
      this.defaults = Objects.requireNonNull(d, "defaults");
      return this;
    }

    /** Values that win over the bundle's pools (non-null fields only; name and count unused). */
    public Builder overrides(PoolSpec o) {
      this.overrides = Objects.requireNonNull(o, "overrides");
      return this;
    }

    /** Instances of the single pool, overriding the bundle's (an error when it has several). */
    public Builder instances(int n) {
      this.instancesOverride = n;
      return this;
    }

    public Builder bundle(PolicyBundle b) {
      this.bundle = Objects.requireNonNull(b, "bundle");
      return this;
    }

    /** The router, overriding the bundle's (default round-robin). */
    public Builder router(PolicySpec p) {
      this.router = p;
      return this;
    }

    /** The admission policy, overriding the bundle's (default always-admit). */
    public Builder admission(PolicySpec p) {
      this.admission = p;
      return this;
    }

    /** The priority policy, overriding the bundle's (default slo-based). */
    public Builder priority(PolicySpec p) {
      this.priority = p;
      return this;
    }

    /** The instance scheduler, overriding the bundle's (default fcfs). */
    public Builder scheduler(String name) {
      this.scheduler = name;
      return this;
    }

    /**
     * The API server in front of every instance, whose work per request and per streamed chunk is
     * done one item at a time ({@link io.blis.engine.frontend.ApiServer}); default none.
     */
    public Builder apiServer(io.blis.engine.frontend.ApiServer a) {
      this.apiServer = java.util.Objects.requireNonNull(a, "apiServer");
      return this;
    }

    /**
     * Whether the instances' KV pools reuse a freed block without a hash first, as vLLM 0.23 and
     * later do ({@link VllmVersion#freesFreshBlocksFirst}); default off.
     */
    public Builder freshBlocksFirst(boolean on) {
      this.freshBlocksFirst = on;
      return this;
    }

    public Builder admissionLatencyUs(Long us) {
      this.admissionLatencyUs = us;
      return this;
    }

    public Builder routingLatencyUs(Long us) {
      this.routingLatencyUs = us;
      return this;
    }

    public Builder snapshotRefreshUs(Long us) {
      this.snapshotRefreshUs = us;
      return this;
    }

    /** Free-form options for the latency model and scheduler providers. */
    public Builder options(Map<String, String> o) {
      this.options = Map.copyOf(o);
      return this;
    }

    public Builder asyncScheduling(boolean on) {
      this.asyncScheduling = on;
      return this;
    }

    /**
     * Wraps every latency model the pools create (null, the default, for none): for example the
     * engine's host time per vLLM release, added to the GPU's step when scheduling is synchronous
     * ({@code io.blis.engine.host.HostBoundModel}).
     */
    public Builder stepDecorator(StepDecorator decorator) {
      this.stepDecorator = decorator;
      return this;
    }

    /**
     * A CPU KV tier on every instance: {@code blocks} block slots, or (when {@code gib} is not
     * null) as many as {@code gib} GiB of host memory hold; reloads at {@code bandwidthGbps}.
     */
    public Builder cpuKvTier(long blocks, Double gib, double bandwidthGbps) {
      this.cpuKvBlocks = blocks;
      this.cpuKvGib = gib;
      this.kvTransferGbps = bandwidthGbps;
      return this;
    }

    /**
     * Secondary offload tiers (disks, network file systems) behind every instance's CPU KV tier, in
     * lookup order; they need a CPU tier ({@link #cpuKvTier}). Empty for none.
     */
    public Builder kvOffloadTiers(java.util.List<io.blis.kvcache.OffloadTier> tiers) {
      return kvOffloadTiers(tiers, false);
    }

    /**
     * As {@link #kvOffloadTiers(java.util.List)}; with {@code generatedBlocks}, full blocks of
     * generated tokens are offloaded too (vLLM's {@code offload_prompt_only: false}).
     */
    public Builder kvOffloadTiers(java.util.List<io.blis.kvcache.OffloadTier> tiers, boolean generatedBlocks) {
      this.offloadTiers = java.util.List.copyOf(tiers);
      this.offloadGeneratedBlocks = generatedBlocks;
      return this;
    }

    /**
     * Reloads from the CPU KV tier take {@code us} microseconds a block, whatever the block's bytes
     * (Go BLIS's {@code --kv-transfer-bandwidth} in blocks per microsecond); null for the bytes at
     * the bandwidth of {@link #cpuKvTier}.
     */
    public Builder cpuLoadUsPerBlock(Double us) {
      if (us != null && !(us >= 0 && us <= Simulation.MAX_DELAY_US)) {
        throw new IllegalArgumentException("CPU KV load time per block must be in [0, " + Simulation.MAX_DELAY_US
            + "] us, got " + us);
      }
      this.cpuLoadUsPerBlock = us;
      return this;
    }

    /** Seed handed to every provider (default 42). */
    public Builder seed(long s) {
      this.seed = s;
      return this;
    }

    /**
     * Resolves models, GPUs, KV capacities, latency models and policies, and returns a simulation
     * builder with the cluster set; add a source (and metrics options) and build it.
     *
     * @throws IllegalArgumentException naming the pool and the field for an unknown model, GPU or
     *     provider, or an invalid value
     */
    public Simulation.Builder toSimulation() {
      List<PoolSpec> specs = pools();
      if (autoscaler == null && !bundle.scaling().isEmpty()) {
        String pool = bundle.scaling().keySet().iterator().next();
        throw new IllegalArgumentException("pool '" + pool + "': min_replicas, max_replicas and autoscaler apply to"
            + " an autoscaled run; give --autoscaler");
      }
      List<io.blis.engine.autoscale.FleetConfig> fleets = poolFleets == null ? null : new ArrayList<>();
      if (poolFleets != null) {
        specs = grownToFleets(specs, fleets);
      }
      Simulation.Builder b = Simulation.builder();
      Context policyContext = null;
      Scheduler sched = null;
      String schedulerName = first(scheduler, bundle.scheduler(), "fcfs");
      List<ResolvedPool> resolved = new ArrayList<>();
      for (PoolSpec spec : specs) {
        ResolvedPool p = resolve(spec, specs.size() > 1 ? spec.name() : "",
            bundle.pools().isEmpty() && split == null ? "" : "pool '" + spec.name() + "': ");
        if (policyContext == null) {
          policyContext = p.context();
          sched = Providers.select(SchedulerProvider.class, schedulerName).create(p.context());
        }
        b.addPool(p.pool());
        if (p.lora() != null) {
          b.lora(p.pool().name(), p.lora());
        }
        resolved.add(p);
      }
      b.scheduler(sched);
      PolicySpec r = first(router, bundle.router(), new PolicySpec("round-robin", Map.of()));
      PdSpec settings = pd.over(bundle.disaggregation() == null ? PdSpec.none() : bundle.disaggregation());
      boolean roles = specs.stream().anyMatch(s -> s.disaggregationRole() != io.blis.engine.disagg.Role.BOTH);
      if (roles || !settings.equals(PdSpec.none())) {
        b.disaggregation(disaggregation(settings, specs, resolved, r, policyContext));
      }
      // with one model (and no targets of its own) every request goes to it, whatever it names, as before
      if (resolved.stream().map(p -> p.context().model().name()).distinct().count() > 1 || !bundle.modelSlo().isEmpty()) {
        b.models(modelRouting(specs, resolved, r, policyContext));
      }
      PolicySpec a = first(admission, bundle.admission(), new PolicySpec("always-admit", Map.of()));
      PolicySpec pr = first(priority, bundle.priority(), new PolicySpec("slo-based", Map.of()));
      b.router(Providers.select(RouterProvider.class, r.name()).create(withOptions(policyContext, r)));
      AdmissionPolicy ap = Providers.select(AdmissionPolicyProvider.class, a.name())
          .create(withOptions(policyContext, a));
      PriorityPolicy pp = Providers.select(PriorityPolicyProvider.class, pr.name())
          .create(withOptions(policyContext, pr));
      b.admissionPolicy(ap).priorityPolicy(pp);
      b.admissionLatencyUs(first(admissionLatencyUs, bundle.admissionLatencyUs(), 0L));
      b.apiServer(apiServer);
      b.freshBlocksFirst(freshBlocksFirst);
      b.routingLatencyUs(first(routingLatencyUs, bundle.routingLatencyUs(), 0L));
      b.snapshotRefreshUs(first(snapshotRefreshUs, bundle.snapshotRefreshUs(),
          Simulation.DEFAULT_SNAPSHOT_REFRESH_US));
      for (Map.Entry<String, SloTarget> e : bundle.slo().entrySet()) {
        b.sloTarget(e.getKey(), e.getValue());
      }
      if (poolFleets != null) {
        for (int i = 0; i < specs.size(); i++) {
          String name = specs.get(i).name();
          PolicySpec own = bundle.scalingOf(name).over(autoscaler);
          io.blis.api.Autoscaler scaler;
          try {
            scaler = Providers.select(AutoscalerProvider.class, own.name())
                .create(withOptions(resolved.get(i).context(), own));
          } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("pool '" + name + "': autoscaler: " + e.getMessage(), e);
          }
          // the pools of one GPU type share its nodes, as Deployments share a node pool
          // the pools of one GPU type share its node pool (the same name the plan was given)
          b.autoscaling(resolved.get(i).pool().name(), gpuName(specs.get(i)), fleets.get(i), scaler,
              Providers.canonicalName(AutoscalerProvider.class, own.name()));
        }
      } else if (autoscaler != null) {
        PoolSpec only = specs.get(0);
        if (specs.size() > 1) {
          throw new IllegalArgumentException("autoscaling scales one pool; the policy bundle has " + specs.size());
        }
        Layout l = layout(only);
        if (l.dp() > 1 || l.pp() > 1) {
          throw new IllegalArgumentException("autoscaling scales replicas of tensor parallelism only, not of"
              + " data-parallel ranks or pipeline stages (dp " + l.dp() + ", pp " + l.pp() + ")");
        }
        b.autoscaling(fleet, Providers.select(AutoscalerProvider.class, autoscaler.name())
            .create(withOptions(policyContext, autoscaler)),
            Providers.canonicalName(AutoscalerProvider.class, autoscaler.name()));
      }
      return b;
    }

    /**
     * Each pool's fleet, and the pools grown to their fleets' most replicas (the replicas that
     * are off are instances too).
     */
    private List<PoolSpec> grownToFleets(List<PoolSpec> specs, List<io.blis.engine.autoscale.FleetConfig> fleets) {
      List<PoolSpec> grown = new ArrayList<>();
      long total = 0;
      List<ScaledPool> all = new ArrayList<>();
      for (PoolSpec spec : specs) {
        Layout l = layout(spec);
        if (l.dp() > 1 || l.pp() > 1) {
          throw new IllegalArgumentException("pool '" + spec.name() + "': autoscaling scales replicas of tensor"
              + " parallelism only, not of data-parallel ranks or pipeline stages (dp " + l.dp() + ", pp " + l.pp() + ")");
        }
        PoolScaling sc = bundle.scalingOf(spec.name());
        all.add(new ScaledPool(spec.name(), spec.instances(), sc.minReplicas(), sc.maxReplicas(), l.tp(), spec.model(),
            spec.gpu(), gpuName(spec)));
      }
      for (int i = 0; i < specs.size(); i++) {
        PoolSpec spec = specs.get(i);
        String where = "pool '" + spec.name() + "': ";
        io.blis.engine.autoscale.FleetConfig f;
        try {
          f = poolFleets.fleet(all.get(i), all);
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException(where + e.getMessage(), e);
        }
        fleets.add(f);
        total += f.maxReplicas();
        grown.add(withRole(merge(spec, emptyPool(), spec.name(), f.maxReplicas()), spec.role()));
      }
      if (total > MAX_INSTANCES) {
        throw new IllegalArgumentException("at most " + MAX_INSTANCES + " instances in a cluster: the pools' most"
            + " replicas add up to " + total);
      }
      return grown;
    }

    /**
     * Which pools serve which model, under every name a request may give it (as the pool gave it,
     * the catalog's name and its aliases), each model with its own router and the bundle's SLO
     * targets for it.
     */
    private io.blis.engine.models.ModelRouting modelRouting(List<PoolSpec> specs, List<ResolvedPool> resolved,
        PolicySpec router, Context policyContext) {
      Map<String, java.util.Set<String>> names = new java.util.LinkedHashMap<>();
      Map<String, java.util.Set<String>> pools = new java.util.LinkedHashMap<>();
      for (int i = 0; i < specs.size(); i++) {
        String model = resolved.get(i).context().model().name();
        java.util.Set<String> n = names.computeIfAbsent(model, k -> new java.util.TreeSet<>());
        n.add(model);
        n.add(specs.get(i).model());
        n.addAll(ModelCatalog.namesOf(model));
        pools.computeIfAbsent(model, k -> new java.util.TreeSet<>()).add(resolved.get(i).pool().name());
      }
      Map<String, SloTarget> slo = bundle.modelSlo();
      for (String given : slo.keySet()) {
        boolean known = names.values().stream().anyMatch(n -> n.stream().anyMatch(x -> x.equalsIgnoreCase(given)));
        if (!known) {
          throw new IllegalArgumentException("model_slo: no pool serves model '" + given + "' (served: "
              + String.join(", ", names.keySet()) + ")");
        }
      }
      List<io.blis.engine.models.ModelRouting.Served> served = new ArrayList<>();
      for (Map.Entry<String, java.util.Set<String>> e : names.entrySet()) {
        SloTarget target = null;
        for (Map.Entry<String, SloTarget> t : slo.entrySet()) {
          if (e.getValue().stream().anyMatch(x -> x.equalsIgnoreCase(t.getKey()))) {
            target = t.getValue();
          }
        }
        served.add(new io.blis.engine.models.ModelRouting.Served(e.getKey(), e.getValue(), pools.get(e.getKey()),
            Providers.select(RouterProvider.class, router.name()).create(withOptions(policyContext, router)),
            target == null ? null : new io.blis.engine.models.ModelRouting.Targets(target.ttftMs(), target.e2eMs())));
      }
      return new io.blis.engine.models.ModelRouting(served);
    }

    /** The cluster's disaggregation from its settings and its resolved pools. */
    private io.blis.engine.disagg.Disaggregation disaggregation(PdSpec settings, List<PoolSpec> specs,
        List<ResolvedPool> resolved, PolicySpec router, Context policyContext) {
      Map<String, io.blis.engine.disagg.Role> roleOf = new TreeMap<>();
      Map<String, io.blis.engine.disagg.Disaggregation.PoolKv> kv = new TreeMap<>();
      for (int i = 0; i < specs.size(); i++) {
        ResolvedPool p = resolved.get(i);
        if (p.pool().ranks() > 1) {
          throw new IllegalArgumentException("disaggregation: pool '" + specs.get(i).name() + "' has data-parallel"
              + " ranks or pipeline stages; disaggregated pools take dp 1 and pp 1");
        }
        roleOf.put(p.pool().name(), specs.get(i).disaggregationRole());
        kv.put(p.pool().name(), p.kv());
      }
      io.blis.engine.disagg.Disaggregation.Transfer transfer = new io.blis.engine.disagg.Disaggregation.Transfer(
          settings.transferBandwidthGBps(),
          first(settings.transferBaseLatencyUs(), io.blis.engine.disagg.Disaggregation.Transfer.DEFAULT_BASE_LATENCY_US),
          Boolean.TRUE.equals(settings.transferContention()));
      PolicySpec prefillRouter = first(settings.prefillRouter(), router);
      PolicySpec decodeRouter = first(settings.decodeRouter(), router);
      return new io.blis.engine.disagg.Disaggregation(
          io.blis.engine.disagg.Decider.parse(first(settings.decider(), "never")),
          first(settings.prefixThreshold(), 16), roleOf, kv, transfer,
          Providers.select(RouterProvider.class, prefillRouter.name()).create(withOptions(policyContext, prefillRouter)),
          Providers.select(RouterProvider.class, decodeRouter.name()).create(withOptions(policyContext, decodeRouter)));
    }

    /**
     * What each pool serves, on what: its model, GPU and tensor-parallel degree, resolved as {@link
     * #toSimulation()} resolves them.
     *
     * @throws IllegalArgumentException as {@link #toSimulation()} for an unknown model or GPU
     */
    public List<PoolDeployment> deployments() {
      List<PoolDeployment> out = new ArrayList<>();
      for (PoolSpec s : pools()) {
        out.add(new PoolDeployment(s.name(), model(s), gpu(s), layout(s), s.instances()));
      }
      return out;
    }

    private static ModelSpec model(PoolSpec s) {
      return looksLikeFile(s.model()) ? ModelCatalog.fromFile(Path.of(s.model())) : ModelCatalog.byName(s.model());
    }

    /** The pool's GPU's name, which names its node pool (the GPU as given when it does not resolve). */
    private static String gpuName(PoolSpec s) {
      try {
        return gpu(s).name();
      } catch (RuntimeException e) {
        return s.gpu(); // resolving the pool reports it
      }
    }

    private static HardwareSpec gpu(PoolSpec s) {
      return looksLikeFile(s.gpu()) ? GpuCatalog.fromFile(Path.of(s.gpu())) : GpuCatalog.resolve(s.gpu());
    }

    /** The pools with every field resolved from overrides, bundle and defaults. */
    List<PoolSpec> pools() {
      List<PoolSpec> fromBundle = bundle.pools();
      if (instancesOverride != null && fromBundle.size() > 1) {
        throw new IllegalArgumentException("the number of instances is set per pool when the policy"
            + " bundle has several pools (" + fromBundle.size() + "); drop --num-instances");
      }
      if (instancesOverride != null && instancesOverride > MAX_INSTANCES) {
        throw new IllegalArgumentException("at most " + MAX_INSTANCES + " instances in a cluster, got "
            + instancesOverride);
      }
      List<PoolSpec> out = new ArrayList<>();
      if (split != null && !fromBundle.isEmpty()) {
        throw new IllegalArgumentException("--prefill-instances and --decode-instances split the single pool of"
            + " --num-instances; the policy bundle has pools of its own (give them a role instead)");
      }
      if (fromBundle.isEmpty() && split != null) {
        int n = instancesOverride != null ? instancesOverride : defaults.instances();
        PoolSpec base = merge(overrides, merge(defaults, BUILT_IN_DEFAULTS, defaults.name(), n), "default", n);
        for (PoolSpec p : split.pools(n)) {
          PoolSpec own = p.name().equals("prefill") ? split.prefillOverrides()
              : p.name().equals("decode") ? split.decodeOverrides() : emptyPool();
          out.add(withRole(merge(own, base, p.name(), p.instances()), p.role()));
        }
      } else if (fromBundle.isEmpty()) {
        int n = instancesOverride != null ? instancesOverride : defaults.instances();
        out.add(merge(overrides, merge(defaults, BUILT_IN_DEFAULTS, defaults.name(), n), "default", n));
      } else {
        for (PoolSpec p : fromBundle) {
          int n = instancesOverride != null ? instancesOverride : p.instances();
          out.add(withRole(merge(overrides, merge(p, merge(defaults, BUILT_IN_DEFAULTS, p.name(), n), p.name(), n),
              p.name(), n), p.role()));
        }
      }
      long total = out.stream().mapToLong(PoolSpec::instances).sum();
      if (total > MAX_INSTANCES) {
        throw new IllegalArgumentException("at most " + MAX_INSTANCES + " instances in a cluster (over all"
            + " pools), got " + total);
      }
      return out;
    }

    /**
     * Resolves a pool's names and sizes.
     *
     * @param name the pool's name in results (empty for a single pool)
     * @param where prefix of error messages naming the pool, empty when there is none
     */
    private ResolvedPool resolve(PoolSpec s, String name, String where) {
      try {
        ModelSpec model = model(s);
        if (kvCacheDtype != null && model instanceof ModelConfig c) {
          model = c.withKvCacheDtype(kvCacheDtype);
        }
        HardwareSpec hw = gpu(s);
        Layout layout = layout(s);
        if (s.ep() != null && s.ep() == PoolSpec.EP_ENABLED && !model.isMoe()) {
          // refused whatever tp x dp is (at 1 it would otherwise pass as ep 1 and mean nothing)
          throw new IllegalArgumentException(model.name() + ": expert parallelism needs a mixture-of-experts"
              + " model; this one is dense");
        }
        layout.check(model);
        int tp = layout.tp();
        // a recurrent hybrid's attention block holds a layer's state per page, as vLLM enlarges it
        int blockSize = io.blis.latency.kv.HybridKv.blockSizeFor(model, tp, s.blockSize());
        io.blis.engine.lora.LoraSpec loraSpec = lora != null ? lora : bundle.lora();
        io.blis.engine.lora.LoraCosts loraCosts = loraSpec == null ? null
            : io.blis.engine.lora.LoraCosts.of(loraSpec, model, hw, tp, layout.layersPerStage(model));
        ModelSpec drafter = speculative == null ? null : io.blis.engine.spec.SpeculativeDecoding.drafter(model, speculative);
        // what each GPU reserves before its KV cache, at this degree (and at others, for the message when
        // nothing is left: LoRA slots and a drafter's weights shrink as the degree grows)
        final ModelSpec target = model;
        java.util.function.IntToDoubleFunction reservedAt = t -> (loraSpec == null ? 0
            : t == tp ? loraCosts.reservedBytesPerGpu()
                : io.blis.engine.lora.LoraCosts.of(loraSpec, target, hw, t, layout.layersPerStage(target))
                    .reservedBytesPerGpu())
            + (speculative == null ? 0 : io.blis.engine.spec.SpeculativeDecoding.drafterWeightBytesPerGpu(
                drafter, speculative, t));
        long kvBlocks = s.totalKvBlocks() != null ? s.totalKvBlocks()
            : (long) Math.floor(KvCapacity.totalBlocks(model, hw, layout, s.gpuMemoryUtilization(), blockSize,
                reservedAt, reservedWhat(loraSpec, speculative != null))
                * io.blis.engine.spec.SpeculativeDecoding.targetKvShare(model, drafter, tp));
        if (s.maxModelLen() != null && model.maxPositionEmbeddings() > 0
            && s.maxModelLen() > model.maxPositionEmbeddings()) {
          // vLLM refuses it too (unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1, whose outputs it calls incorrect)
          throw new IllegalArgumentException("max-model-len " + s.maxModelLen() + " exceeds " + model.name()
              + "'s context of " + model.maxPositionEmbeddings() + " tokens (max_position_embeddings, with its rope"
              + " scaling); give at most " + model.maxPositionEmbeddings() + " or leave it out");
        }
        int maxLen = s.maxModelLen() != null ? s.maxModelLen()
            : autoMaxModelLen(model, kvBlocks / layout.pp(), blockSize);
        EngineLimits limits = new EngineLimits(s.maxNumSeqs(), s.maxNumBatchedTokens(),
            s.longPrefillTokenThreshold(), maxLen, asyncScheduling);
        Context context = new Context(model, hw,
            new Deployment(tp, blockSize, limits.maxNumSeqs(), limits.maxNumBatchedTokens(), limits.maxModelLen(),
                kvBlocks, s.gpuMemoryUtilization(), layout.pp(), layout.dp(), layout.ep()),
            loadCoefficients(s.coefficients()), options, seed);
        LatencyModelProvider gpuModels = Providers.select(LatencyModelProvider.class, s.latencyModel());
        StepDecorator decorator = stepDecorator;
        LatencyModelProvider lmp = decorator == null ? gpuModels : new LatencyModelProvider() {
          @Override
          public String name() {
            return gpuModels.name();
          }

          @Override
          public LatencyModel create(io.blis.api.ProviderContext c) {
            return decorator.decorate(gpuModels.create(c), tp, asyncScheduling);
          }
        };
        LatencyModel first = lmp.create(context); // fails fast on bad coefficients
        long blockBytesPerGpu = ModelSizes.kvBytesPerTokenPerGpu(model, tp) * blockSize;
        long cpuBlocks = cpuKvGib != null
            ? KvOffload.cpuBlocks(cpuKvGib * (1L << 30), blockBytesPerGpu, tp) : cpuKvBlocks;
        double loadUs = cpuBlocks == 0 ? 0 : cpuLoadUsPerBlock != null ? cpuLoadUsPerBlock
            : KvOffload.loadUsPerBlock(blockBytesPerGpu, kvTransferGbps);
        boolean offloading = !offloadTiers.isEmpty() || offloadGeneratedBlocks;
        if (offloading && cpuBlocks < layout.pp()) {
          throw new IllegalArgumentException("secondary offload tiers and offloaded generated blocks need a CPU KV tier of at least " + layout.pp()
              + " blocks in front of them; " + (cpuKvGib != null ? String.format(java.util.Locale.ROOT,
              "%.3g GiB hold %d blocks of %d bytes per GPU", cpuKvGib, cpuBlocks, blockBytesPerGpu) : "none was given"));
        }
        io.blis.latency.kv.HybridKv hybrid = io.blis.latency.kv.HybridKv.of(model, blockSize);
        java.util.function.IntFunction<LatencyModel> models = i -> i == 0 ? first : lmp.create(context);
        if (speculative != null) {
          models = io.blis.engine.spec.SpeculativeDecoding.models(models, gpuModels, context, drafter, speculative, seed,
              name);
        }
        InstancePool pool = new InstancePool(name, s.instances(),
            models, limits, kvBlocks, blockSize, cpuBlocks, loadUs,
            layout.dp(), layout.pp(), model.isMoe(), !offloading ? io.blis.kvcache.OffloadTiers.NONE
                : new io.blis.kvcache.OffloadTiers(offloadTiers, blockBytesPerGpu, offloadGeneratedBlocks),
            InstancePool.residentBlocks(hybrid));
        io.blis.engine.disagg.Disaggregation.PoolKv kv = new io.blis.engine.disagg.Disaggregation.PoolKv(
            tp * layout.pp() * layout.dp(), ModelSizes.kvBytesPerTokenPerGpu(model, tp), ModelSizes.kvBytesPerToken(model),
            hw.name(), hw.gpusPerNode(), hw.interconnectBandwidthBytesPerS(), hw.interNodeBandwidthBytesPerS(),
            Math.round(hw.interconnectLatencyS() * 1e6), Math.round(hw.interNodeLatencyS() * 1e6));
        if (LOG.isInfoEnabled()) {
          LOG.info("{}{} x {} on {} {}: max_num_seqs {}, max_num_batched_tokens {}, max_model_len {} ({}), async"
              + " scheduling {}", name.isEmpty() ? "" : "pool " + name + ": ", s.instances(), model.name(), hw.name(),
              layout.toString().toUpperCase(java.util.Locale.ROOT),
              s.maxNumSeqs(), s.maxNumBatchedTokens(), maxLen, s.maxModelLen() != null ? "given" : "the model's, capped by"
              + " the KV cache", asyncScheduling ? "on" : "off");
          LOG.info("{}KV cache: {} blocks of {} tokens ({}){}", name.isEmpty() ? "" : "pool " + name + ": ", kvBlocks,
              blockSize, s.totalKvBlocks() != null ? "given"
                  : String.format(java.util.Locale.ROOT, "computed from %s's memory at gpu_memory_utilization %.2f"
                      + " less the weights and activations of %s at %s%s", hw.name(), s.gpuMemoryUtilization(),
                      model.name(), layout.toString().toUpperCase(java.util.Locale.ROOT),
                      layout.ranks() > 1 ? ", per data-parallel rank, shared by its pipeline batches in flight" : ""),
              cpuBlocks > 0 ? ", CPU tier " + cpuBlocks + " blocks" + (offloadTiers.isEmpty() ? ""
                  : ", " + offloadTiers.size() + " secondary tier" + (offloadTiers.size() > 1 ? "s" : "")) : "");
          if (hybrid.hybrid()) {
            LOG.info("{}hybrid KV cache: {} sliding-window and {} recurrent group(s) of {} layers beside the full-attention"
                + " one; a decoding request holds {} window blocks per sliding group (plus a prefill chunk's while prefilling) and"
                + " 1 state block per recurrent group;"
                + " vLLM would log 'GPU KV cache size: {} tokens'", name.isEmpty() ? "" : "pool " + name + ": ",
                hybrid.slidingGroups(), hybrid.recurrentGroups(), hybrid.groupSize(), hybrid.windowBlocks(),
                String.format(java.util.Locale.ROOT, "%,d", hybrid.reportedTokens(kvBlocks)));
          }
          if (speculative != null) {
            LOG.info("{}speculative decoding: {} with {} drafts a step{}, acceptance {} (mean {} tokens a verification),"
                + " host time {} us a drafter pass", name.isEmpty() ? "" : "pool " + name + ": ",
                speculative.method().vllmName(), speculative.tokens(),
                drafter == null ? "" : " by " + drafter.name(), speculative.acceptanceSource(),
                String.format(java.util.Locale.ROOT, "%.2f", 1 + speculative.acceptance().meanAccepted(speculative.tokens())),
                String.format(java.util.Locale.ROOT, "%.0f", speculative.hostUsPerPass()));
          }
          if (loraCosts != null) {
            LOG.info("{}LoRA: {} adapter slots of rank {} reserve {} GiB per GPU{}", name.isEmpty() ? "" : "pool " + name
                + ": ", loraSpec.maxLoras(), loraSpec.maxLoraRank(), String.format(java.util.Locale.ROOT, "%.3f",
                loraCosts.reservedBytesPerGpu() / (double) (1L << 30)), s.totalKvBlocks() != null
                ? " (not taken from the given total_kv_blocks)" : " before the KV cache is sized");
          }
          LOG.info("{}latency model {}, coefficients: {}", name.isEmpty() ? "" : "pool " + name + ": ", s.latencyModel(),
              s.coefficients() == null ? "the model's bundled ones"
                  : s.coefficients().contains("=") ? "given inline" : "file " + s.coefficients());
        }
        return new ResolvedPool(pool, context, kv, loraCosts);
      } catch (IllegalArgumentException e) {
        throw where.isEmpty() ? e : new IllegalArgumentException(where + e.getMessage(), e);
      }
    }
  }

  /** What a pool's GPUs reserve before the KV cache, as the message of a model that does not fit names it. */
  private static String reservedWhat(io.blis.engine.lora.LoraSpec lora, boolean drafter) {
    String slots = lora == null ? null : "the LoRA adapter slots (max_loras " + lora.maxLoras() + " x max_lora_rank "
        + lora.maxLoraRank() + (lora.footprintBytesPerRank() != null
            ? " x footprint_bytes_per_rank " + lora.footprintBytesPerRank() : "") + ")";
    String weights = drafter ? "the speculative drafter's weights" : null;
    return slots != null && weights != null ? slots + " and " + weights
        : slots != null ? slots : weights != null ? weights : "the reserved memory";
  }

  private record ResolvedPool(InstancePool pool, Context context,
      io.blis.engine.disagg.Disaggregation.PoolKv kv, io.blis.engine.lora.LoraCosts lora) {}

  /** Go BLIS's split of the single pool into prefill, decode and shared instances. */
  private record PdSplit(int prefill, int decode, int shared, PoolSpec prefillOverrides, PoolSpec decodeOverrides) {

    /** The pools of {@code n} instances: name, count and role only. */
    List<PoolSpec> pools(int n) {
      if (prefill < 0 || decode < 0 || shared < 0) {
        throw new IllegalArgumentException("--prefill-instances, --decode-instances and --prefill-decode-instances"
            + " must be >= 0, got " + prefill + ", " + decode + " and " + shared);
      }
      if (shared == 0 && (prefill == 0 || decode == 0)) {
        throw new IllegalArgumentException("disaggregation needs both --prefill-instances and --decode-instances"
            + " (or --prefill-decode-instances), got prefill " + prefill + " and decode " + decode);
      }
      if (prefill + decode + shared > n) {
        throw new IllegalArgumentException("--prefill-instances " + prefill + " + --decode-instances " + decode
            + " + --prefill-decode-instances " + shared + " exceed --num-instances " + n);
      }
      List<PoolSpec> out = new ArrayList<>();
      if (prefill > 0) {
        out.add(PoolSpec.builder("prefill").instances(prefill).role("prefill").build());
      }
      if (decode > 0) {
        out.add(PoolSpec.builder("decode").instances(decode).role("decode").build());
      }
      if (n - prefill - decode > 0) { // the rest of the instances do both
        out.add(PoolSpec.builder("shared").instances(n - prefill - decode).role("both").build());
      }
      return out;
    }
  }

  private static PoolSpec withRole(PoolSpec p, String role) {
    return new PoolSpec(p.name(), p.instances(), p.model(), p.gpu(), p.tp(), p.latencyModel(), p.coefficients(),
        p.maxNumSeqs(), p.maxNumBatchedTokens(), p.longPrefillTokenThreshold(), p.maxModelLen(), p.blockSize(),
        p.totalKvBlocks(), p.gpuMemoryUtilization(), p.pp(), p.dp(), p.ep(), role);
  }

  /**
   * A pool to scale, as its fleet is planned.
   *
   * @param name the pool's name
   * @param initialReplicas its {@code instances}: replicas ready at time 0
   * @param minReplicas its own fewest replicas, or null for the run's
   * @param maxReplicas its own most replicas, or null for the run's
   * @param gpusPerReplica GPUs one replica holds (its tensor-parallel degree)
   * @param model its model as given
   * @param gpu its GPU as given
   * @param nodePool the node pool it shares with the other pools of its GPU type (the GPU's name)
   */
  public record ScaledPool(String name, int initialReplicas, Integer minReplicas, Integer maxReplicas,
      int gpusPerReplica, String model, String gpu, String nodePool) {}

  /** Plans each autoscaled pool's fleet. */
  @FunctionalInterface
  public interface FleetPlan {
    /**
     * The fleet of {@code pool}, one of {@code all} (every pool scaled, in order; those of its
     * {@link ScaledPool#nodePool()} share its nodes, so their node settings must be the same).
     *
     * @throws IllegalArgumentException for settings the pool cannot have (the caller names the pool)
     */
    io.blis.engine.autoscale.FleetConfig fleet(ScaledPool pool, List<ScaledPool> all);
  }

  /**
   * What one pool serves, on what.
   *
   * @param pool the pool's name
   * @param model its model
   * @param gpu its GPU type
   * @param layout its tensor, pipeline, data and expert parallelism
   * @param instances its number of instances
   */
  public record PoolDeployment(String pool, ModelSpec model, HardwareSpec gpu, Layout layout, int instances) {

    /** Its tensor-parallel degree. */
    public int tp() {
      return layout.tp();
    }
  }

  /**
   * The layout of a resolved pool: its tp, pp and dp, and ep as given (1, tp x dp, or enabled).
   *
   * @throws IllegalArgumentException when ep is neither 1 nor tp x dp
   */
  static Layout layout(PoolSpec s) {
    int tp = s.tp();
    int dp = s.dp() == null ? 1 : s.dp();
    int pp = s.pp() == null ? 1 : s.pp();
    int ep = s.ep() == null ? 1 : s.ep() == PoolSpec.EP_ENABLED ? tp * dp : s.ep();
    return new Layout(tp, pp, dp, ep);
  }

  /** The context of a cluster policy: the first pool's, with the policy's own parameters. */
  private static Context withOptions(Context base, PolicySpec p) {
    return new Context(base.model(), base.hardware(), base.deployment(), base.coefficients(),
        new TreeMap<>(p.params()), base.seed());
  }

  private static PoolSpec emptyPool() {
    return new PoolSpec("overrides", 1, null, null, null, null, null, null, null, null, null, null,
        null, null);
  }

  /** {@code a}'s fields where set, else {@code b}'s; with the given name and count. */
  private static PoolSpec merge(PoolSpec a, PoolSpec b, String name, int instances) {
    return new PoolSpec(name, instances, first(a.model(), b.model()), first(a.gpu(), b.gpu()),
        first(a.tp(), b.tp()), first(a.latencyModel(), b.latencyModel()),
        first(a.coefficients(), b.coefficients()), first(a.maxNumSeqs(), b.maxNumSeqs()),
        first(a.maxNumBatchedTokens(), b.maxNumBatchedTokens()),
        first(a.longPrefillTokenThreshold(), b.longPrefillTokenThreshold()),
        first(a.maxModelLen(), b.maxModelLen()), first(a.blockSize(), b.blockSize()),
        first(a.totalKvBlocks(), b.totalKvBlocks()),
        first(a.gpuMemoryUtilization(), b.gpuMemoryUtilization()), first(a.pp(), b.pp()),
        first(a.dp(), b.dp()), first(a.ep(), b.ep()));
  }

  private static <T> T first(T a, T b) {
    return a != null ? a : b;
  }

  private static <T> T first(T a, T b, T c) {
    return a != null ? a : b != null ? b : c;
  }

  /** Coefficients from a file or an inline list; empty (the bundled defaults) for null. */
  public static Coefficients loadCoefficients(String coefficients) {
    if (coefficients == null) {
      return Coefficients.empty();
    }
    if (!coefficients.contains("=")) {
      Path p = Path.of(coefficients);
      if (!Files.isRegularFile(p)) {
        throw new IllegalArgumentException("coefficients: no such file '" + coefficients
            + "' (give a coefficient file or an inline list such as 'alpha=1,2,3;beta=4,5,6')");
      }
      return CoefficientFiles.load(p);
    }
    return CoefficientFiles.parseInline(coefficients);
  }

  /** The model's context length, capped by what the KV cache can hold (vLLM refuses more). */
  public static int autoMaxModelLen(ModelSpec m, long kvBlocks, int blockSize) {
    long kvTokens = kvBlocks * blockSize;
    long ctx = m.maxPositionEmbeddings() > 0 ? m.maxPositionEmbeddings() : kvTokens;
    return (int) Math.min(Integer.MAX_VALUE, Math.min(ctx, kvTokens));
  }

  private static boolean looksLikeFile(String value) {
    return value.endsWith(".json") || Files.isRegularFile(Path.of(value));
  }
}
