package io.blis.cli;

import io.blis.api.Providers;
import io.blis.engine.result.Fitness;
import io.blis.engine.Simulation;
import io.blis.engine.cluster.Cluster;
import io.blis.engine.cluster.PolicyBundle;
import io.blis.engine.cluster.PolicySpec;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * The cluster flags of {@code blis run} and {@code blis replay} (a picocli mixin): policy bundle,
 * routing, admission and priority policies, control-plane latencies, snapshot staleness, decision
 * trace and fitness. Flags given explicitly win over the bundle.
 */
final class ClusterOptions {

  @Option(names = "--policy-config", paramLabel = "FILE",
      description = "Policy bundle (YAML): pools, router with scorer weights, admission, priority, scheduler, SLO targets.")
  Path policyConfig;

  @Option(names = "--admission-policy", paramLabel = "NAME",
      description = "Admission policy provider: always-admit, token-bucket, reject-all, ... (default: always-admit).")
  String admissionPolicy;

  @Option(names = "--priority-policy", paramLabel = "NAME",
      description = "Priority policy provider: slo-based, constant, inverted, ... (default: slo-based).")
  String priorityPolicy;

  @Option(names = "--routing-scorers", paramLabel = "NAME:W,...",
      description = "Scorers and weights of the weighted router, e.g. prefix-cache:2,load:1,kv-utilization:1 (default), with load, queue-depth and in-flight halving at half_load requests; lora-affinity; or Go BLIS's prefix-affinity, precise-prefix-cache, no-hit-lru, queue-depth-minmax (its queue-depth), load-balance, active-requests, running-requests, load-aware, vllm-dp.")
  String routingScorers;

  @Option(names = "--routing-cache-weight", paramLabel = "W",
      description = "Go BLIS: weight of the weighted router's prefix-cache scorer (with --routing-load-weight; default 0.6 when"
          + " only the other is given); the same as --routing-scorers prefix-cache:W,load:W2.")
  Double routingCacheWeight;

  @Option(names = "--routing-load-weight", paramLabel = "W",
      description = "Go BLIS: weight of the weighted router's load scorer (default 0.4 when only --routing-cache-weight is given).")
  Double routingLoadWeight;

  /** Scorers only Go BLIS has (with this project's queue-depth they mean a mixed profile). */
  private static final java.util.List<String> GO_ONLY_SCORERS = java.util.List.of("precise-prefix-cache",
      "prefix-affinity", "no-hit-lru", "load-balance", "active-requests", "running-requests", "load-aware", "vllm-dp");

  @Option(names = "--lora-scorer-weight", paramLabel = "W",
      description = "Go BLIS: adds the lora-affinity scorer at weight W to the weighted router's scorers (those given, or"
          + " the default ones): requests go where their LoRA adapter is held, then where a slot is free.")
  Double loraScorerWeight;

  @Option(names = "--summarize-trace",
      description = "With --trace-level decisions: print the decision trace's summary to stderr after the run.")
  boolean summarizeTrace;

  @Option(names = "--token-bucket-capacity", description = "Token-bucket admission: capacity in input tokens.")
  String tokenBucketCapacity;

  @Option(names = "--token-bucket-refill-rate", description = "Token-bucket admission: refill, input tokens per second.")
  String tokenBucketRefillRate;

  @Option(names = "--admission-latency-us",
      description = "Arrival to admission decision, microseconds, at most 3600000000 (one hour) (default: 0).")
  Long admissionLatencyUs;

  @Option(names = "--api-server", paramLabel = "REQUEST_US:INPUT_TOKEN_US:CHUNK_US",
      description = "Each instance's API server as one CPU: its work per request taken in, per prompt token and per"
          + " streamed chunk, microseconds, done one item at a time; delays when requests enter the engine and when"
          + " clients see tokens, never the engine's steps (default: none).")
  String apiServer;

  @Option(names = "--routing-latency-us",
      description = "Admission to routing decision, microseconds, at most 3600000000 (one hour) (default: 0).")
  Long routingLatencyUs;

  @Option(names = {"--snapshot-refresh-us", "--snapshot-refresh-interval"},
      description = "Interval at which routers' view of queues, batches and KV use is refreshed, microseconds; 0 = always current (default: "
          + Simulation.DEFAULT_SNAPSHOT_REFRESH_US + ").")
  Long snapshotRefreshUs;

  @Option(names = "--trace-level", paramLabel = "none|decisions",
      description = "decisions: record every admission and routing decision with the candidates' scores (default: ${DEFAULT-VALUE}).")
  String traceLevel = "none";

  @Option(names = "--counterfactual-k",
      description = "With --trace-level decisions: alternatives per routing decision for the regret (default: ${DEFAULT-VALUE}).")
  int counterfactualK = 0;

  @Option(names = "--fitness-weights", paramLabel = "METRIC:W,...",
      description = "Score the run: e.g. throughput:0.5,ttft_p99:0.3,e2e_p99:0.2 (printed to stderr and in the JSON).")
  String fitnessWeights;

  @CommandLine.Mixin FlowControlOptions flowControl;

  void validate(CommandLine cl) {
    flowControl.validate(cl);
    if (flowControl.enabled() && (admissionPolicy != null || tokenBucketCapacity != null || tokenBucketRefillRate != null)) {
      Cli.printNotes(cl, java.util.List.of("--flow-control decides in place of the admission policy: "
          + (admissionPolicy != null ? "--admission-policy " + admissionPolicy : "the token bucket") + " is not consulted"));
    }
    if (apiServer != null) {
      try {
        io.blis.engine.frontend.ApiServer.parse(apiServer);
      } catch (IllegalArgumentException e) {
        throw new CommandLine.ParameterException(cl, "--api-server: " + e.getMessage());
      }
    }
    DeploymentOptions.require(cl, traceLevel.equals("none") || traceLevel.equals("decisions"),
        "--trace-level must be none or decisions, got '" + traceLevel + "'");
    DeploymentOptions.require(cl, counterfactualK >= 0, "--counterfactual-k must be >= 0, got " + counterfactualK);
    DeploymentOptions.require(cl, counterfactualK == 0 || traceLevel.equals("decisions"),
        "--counterfactual-k needs --trace-level decisions");
    DeploymentOptions.require(cl, !summarizeTrace || traceLevel.equals("decisions"),
        "--summarize-trace needs --trace-level decisions (the summary is of the decision trace)");
    if (routingScorers != null && java.util.regex.Pattern.compile("(^|,)\\s*queue-depth\\s*:").matcher(routingScorers).find()
        && GO_ONLY_SCORERS.stream().anyMatch(routingScorers::contains)) {
      Cli.printNotes(cl, java.util.List.of("--routing-scorers: queue-depth here scores each instance on its own,"
          + " 1/(1 + waiting/half_load); Go BLIS's min-max queue-depth is queue-depth-minmax"));
    }
    boolean goWeights = routingCacheWeight != null || routingLoadWeight != null;
    DeploymentOptions.require(cl, !goWeights || routingScorers == null,
        "give either --routing-scorers or --routing-cache-weight/--routing-load-weight, not both");
    for (Double w : new Double[] {routingCacheWeight, routingLoadWeight}) {
      DeploymentOptions.require(cl, w == null || (w >= 0 && Double.isFinite(w)),
          "--routing-cache-weight and --routing-load-weight must be finite numbers >= 0, got " + w);
    }
    DeploymentOptions.require(cl, loraScorerWeight == null || (loraScorerWeight > 0 && Double.isFinite(loraScorerWeight)),
        "--lora-scorer-weight must be a finite number > 0, got " + loraScorerWeight);
    DeploymentOptions.require(cl,
        !goWeights || PolicyBundle.goWeightedScorers(routingCacheWeight, routingLoadWeight) != null,
        "--routing-cache-weight and --routing-load-weight cannot both be 0");
    for (Map.Entry<String, Long> e : new TreeMap<>(Map.of("--admission-latency-us", nz(admissionLatencyUs),
        "--routing-latency-us", nz(routingLatencyUs), "--snapshot-refresh-us", nz(snapshotRefreshUs))).entrySet()) {
      DeploymentOptions.require(cl, e.getValue() >= 0 && e.getValue() <= Simulation.MAX_DELAY_US,
          e.getKey() + " must be between 0 and " + Simulation.MAX_DELAY_US + " (one hour), got " + e.getValue());
    }
    if (policyConfig != null) {
      Cli.requireFile("--policy-config", policyConfig);
      // a Go BLIS policy config's settings that mean something else here are said, as convert says them
      PolicyBundle.Read r = PolicyBundle.read(policyConfig);
      bundle = r.bundle();
      goAutoscaling = r.autoscaling();
      Cli.printNotes(cl, r.notes());
    }
  }

  /** The policy file as read by validate (its notes printed once). */
  private PolicyBundle bundle;

  /** A Go BLIS policy config's autoscaling sections, or null. */
  private io.blis.engine.cluster.GoAutoscaling goAutoscaling;

  /** The Go BLIS policy config's autoscaling sections (after {@link #validate}), or null. */
  io.blis.engine.cluster.GoAutoscaling goAutoscaling() {
    return goAutoscaling;
  }

  private static long nz(Long v) {
    return v == null ? 0 : v;
  }

  PolicyBundle bundle() {
    if (policyConfig == null) {
      return PolicyBundle.empty();
    }
    if (bundle == null) {
      bundle = PolicyBundle.load(policyConfig);
    }
    return bundle;
  }

  /**
   * The weighted router's scorers the flags give: {@code --routing-scorers}, or Go BLIS's cache and
   * load weights as {@code prefix-cache} and {@code load} scorers; null when neither was given.
   */
  String scorers() {
    if (routingScorers != null) {
      return routingScorers;
    }
    if (routingCacheWeight == null && routingLoadWeight == null) {
      return null;
    }
    return PolicyBundle.goWeightedScorers(routingCacheWeight, routingLoadWeight);
  }

  /** Applies the flags to {@code b}: explicit policies and latencies override the bundle's. */
  void apply(Cluster.Builder b, PolicyBundle bundle, String routingPolicy, boolean routerGiven,
      String scheduler, boolean schedulerGiven) {
    String routingScorers = scorers();
    if (loraScorerWeight != null) {
      String name = routerGiven ? routingPolicy : bundle.router() != null ? bundle.router().name() : "weighted";
      if (!name.equals("weighted")) {
        throw new IllegalArgumentException("--lora-scorer-weight adds the lora-affinity scorer to the weighted router;"
            + " the router is " + name + " (give --routing-policy weighted)");
      }
      String base = routingScorers != null ? routingScorers
          : sameName(bundle.router(), name).getOrDefault("scorers", io.blis.engine.policy.Routers.DEFAULT_WEIGHTED_SCORERS);
      if (base.contains("lora-affinity")) {
        throw new IllegalArgumentException("lora-affinity is already among the scorers (" + base + "); set its weight"
            + " there or with --lora-scorer-weight, not both");
      }
      routingScorers = base + ",lora-affinity:" + loraScorerWeight;
    }
    if (routerGiven || routingScorers != null) {
      String name = routerGiven ? routingPolicy
          : bundle.router() != null ? bundle.router().name() : "weighted";
      Map<String, String> params = sameName(bundle.router(), name);
      if (routingScorers != null) {
        params.put("scorers", routingScorers);
      }
      b.router(new PolicySpec(name, params));
    } else if (bundle.router() == null) {
      b.router(new PolicySpec(routingPolicy, Map.of()));
    }
    if (admissionPolicy != null || tokenBucketCapacity != null || tokenBucketRefillRate != null) {
      String name = admissionPolicy != null ? admissionPolicy
          : bundle.admission() != null ? bundle.admission().name() : "token-bucket";
      Map<String, String> params = sameName(bundle.admission(), name);
      if (tokenBucketCapacity != null) {
        params.put("capacity", tokenBucketCapacity);
      }
      if (tokenBucketRefillRate != null) {
        params.put("refill_rate", tokenBucketRefillRate);
      }
      b.admission(new PolicySpec(name, params));
    }
    if (priorityPolicy != null) {
      String name = Providers.canonicalName(io.blis.api.PriorityPolicyProvider.class, priorityPolicy);
      b.priority(new PolicySpec(name, sameName(bundle.priority(), name)));
    }
    if (schedulerGiven || bundle.scheduler() == null) {
      b.scheduler(scheduler);
    }
    if (apiServer != null) {
      b.apiServer(io.blis.engine.frontend.ApiServer.parse(apiServer));
    }
    b.admissionLatencyUs(admissionLatencyUs).routingLatencyUs(routingLatencyUs)
        .snapshotRefreshUs(snapshotRefreshUs);
  }

  /** The bundle's parameters of {@code spec} when it names the same policy, else none. */
  private static Map<String, String> sameName(PolicySpec spec, String name) {
    return spec != null && spec.name().equals(name) ? new TreeMap<>(spec.params()) : new LinkedHashMap<>();
  }

  /** Flow control, decision trace and fitness on the simulation builder. */
  void applyAnalysis(Simulation.Builder b) {
    flowControl.apply(b);
    if (traceLevel.equals("decisions")) {
      b.traceDecisions(counterfactualK);
    }
    if (fitnessWeights != null) {
      b.fitness(Fitness.parse(fitnessWeights));
    }
  }
}
