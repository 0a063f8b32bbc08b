package io.blis.cli;

import io.blis.api.AutoscalerProvider;
import io.blis.api.Providers;
import io.blis.cli.sweep.PriceTable;
import io.blis.engine.Simulation;
import io.blis.engine.autoscale.FleetConfig;
import io.blis.engine.cluster.Cluster;
import io.blis.engine.cluster.GoAutoscaling;
import io.blis.engine.cluster.PolicySpec;
import io.blis.latency.catalog.ModelCatalog;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * The autoscaling flags (a picocli mixin of the deployment flags): {@code --autoscaler} scales
 * the pool between {@code --min-replicas} and {@code --max-replicas}, starting from {@code
 * --num-instances} ready replicas; new replicas wait for a node, load their weights and warm up.
 */
final class AutoscaleOptions {

  @Option(names = "--autoscaler", paramLabel = "NAME",
      description = "Scale the pool: hpa (Kubernetes HPA on a metric), saturation (GAIE saturation thresholds), schedule"
          + " (replicas by hour), or a plugin's name. Its parameters: --autoscaler-option.")
  String name;

  @Option(names = "--autoscaler-option", paramLabel = "KEY=VALUE",
      description = "A parameter of the autoscaler, repeatable: hpa metric=waiting|running|kv|rate|ttft, target, tolerance;"
          + " saturation queue_threshold, kv_threshold, scale_up_at, scale_down_below; schedule replicas=0:2,8:6,18:3.")
  List<String> options = List.of();

  @Option(names = "--min-replicas", paramLabel = "N", description = "Fewest replicas (default: 1).")
  int minReplicas = 1;

  @Option(names = "--max-replicas", paramLabel = "N", description = "Most replicas (default: 4 x --num-instances).")
  Integer maxReplicas;

  @Option(names = "--autoscaler-interval-s", paramLabel = "S",
      description = "Seconds between scaling decisions (default: 15, Kubernetes HPA's sync period).")
  Double intervalS;

  @Option(names = "--model-autoscaler-interval-us", paramLabel = "US", hidden = true,
      description = "Go BLIS's name of the interval, in microseconds.")
  Long intervalUs;

  @Option(names = "--scale-up-window-s", paramLabel = "S",
      description = "Scale up to the lowest recommendation of this window (default: 0).")
  double scaleUpWindowS = 0;

  @Option(names = "--scale-down-window-s", paramLabel = "S",
      description = "Scale down to the highest recommendation of this window (default: 300, Kubernetes').")
  double scaleDownWindowS = 300;

  @Option(names = "--gpus-per-node", paramLabel = "N", description = "GPUs of a node of the node pool (default: 8).")
  int gpusPerNode = 8;

  @Option(names = "--max-nodes", paramLabel = "N", description = "Most nodes (default: as many as --max-replicas need).")
  Integer maxNodes;

  @Option(names = "--initial-nodes", paramLabel = "N", description = "Nodes ready at the start (default: as the initial replicas need).")
  Integer initialNodes;

  @Option(names = "--min-nodes", paramLabel = "N", description = "Nodes kept though empty (default: 0).")
  Integer minNodes;

  @Option(names = "--provisioning-delay-s", paramLabel = "S",
      description = "From asking for a node to its being ready (default: 120).")
  double provisioningS = 120;

  @Option(names = "--loading-delay-s", paramLabel = "S",
      description = "From a replica's node being ready to its weights being loaded (default: the weights per GPU over"
          + " --model-load-gbps).")
  Double loadingS;

  @Option(names = "--model-load-gbps", paramLabel = "GB/S",
      description = "Storage or network read rate of the weights, GB/s per GPU (default: 2).")
  double loadGbps = 2.0;

  @Option(names = "--warmup-s", paramLabel = "S",
      description = "From the weights loaded to the replica taking requests: CUDA graph capture, compilation (default: 30).")
  double warmupS = 30;

  @Option(names = "--warmup-slowdown", paramLabel = "FACTOR",
      description = "A replica's first requests after its warm-up: its steps take FACTOR times as long for"
          + " --warmup-slowdown-s (default: 1, none). Replicas ready at the start are warm.")
  double warmupSlowdown = 1;

  @Option(names = "--warmup-slowdown-s", paramLabel = "S",
      description = "How long the --warmup-slowdown lasts once a replica is ready (default: 60).")
  double warmupSlowdownS = 60;

  @Option(names = "--node-cost-per-hour", paramLabel = "USD",
      description = "Price of a node per hour (default: the GPU's bundled example price x --gpus-per-node, 0 when unknown).")
  Double nodeCostPerHour;

  private Map<String, String> parsedOptions;

  boolean enabled() {
    return name != null;
  }

  /** Whether the node's price comes from the bundled example prices (no --node-cost-per-hour, no Go config's). */
  boolean examplePrice() {
    return nodeCostPerHour == null && (go == null || go.costPerHour() == null);
  }

  /** A Go BLIS policy config's autoscaling sections, defaults of the flags not given, or null. */
  private GoAutoscaling go;
  private CommandLine.ParseResult given;

  private boolean given(String flag) {
    return given != null && given.hasMatchedOption(flag);
  }

  /**
   * Checks the flags; a tuning flag without {@code --autoscaler} is refused. A Go BLIS policy
   * config ({@code go}, or null) whose {@code autoscaler: interval_us} is above 0 turns on the
   * {@code wva} autoscaler with its analyzer, and its sections give the defaults of the flags
   * not given.
   */
  void validate(CommandLine cl, GoAutoscaling go) {
    CommandLine.ParseResult pr = cl.getParseResult();
    this.given = pr;
    boolean fromGo = go != null && go.enabled() && name == null;
    if (go != null && go.enabled()) {
      this.go = go;
      if (fromGo) {
        name = "wva";
      }
    }
    boolean tuned = false;
    for (String flag : List.of("--autoscaler-option", "--min-replicas", "--max-replicas", "--autoscaler-interval-s",
        "--model-autoscaler-interval-us", "--scale-up-window-s", "--scale-down-window-s", "--gpus-per-node",
        "--max-nodes", "--initial-nodes", "--min-nodes", "--provisioning-delay-s", "--loading-delay-s", "--model-load-gbps", "--warmup-s",
        "--node-cost-per-hour", "--warmup-slowdown", "--warmup-slowdown-s")) {
      tuned |= pr != null && pr.hasMatchedOption(flag);
    }
    if (!enabled()) {
      DeploymentOptions.require(cl, !tuned,
          "the autoscaling flags (--min-replicas, --max-replicas, --autoscaler-option, ...) need --autoscaler");
      return;
    }
    // a Go BLIS config's analyzer gives the wva autoscaler's parameters; the flag's win
    parsedOptions = fromGo ? new LinkedHashMap<>(go.analyzer()) : new LinkedHashMap<>();
    java.util.Set<String> givenKeys = new java.util.HashSet<>();
    for (String o : options) {
      int eq = o.indexOf('=');
      DeploymentOptions.require(cl, eq > 0, "--autoscaler-option: expected KEY=VALUE, got '" + o + "'");
      String key = o.substring(0, eq).trim();
      DeploymentOptions.require(cl, givenKeys.add(key), "--autoscaler-option: " + key + " is given twice");
      parsedOptions.put(key, o.substring(eq + 1).trim());
    }
    DeploymentOptions.require(cl, intervalS == null || intervalUs == null,
        "give either --autoscaler-interval-s or --model-autoscaler-interval-us, not both");
    for (Map.Entry<String, Double> e : Map.of("--autoscaler-interval-s", intervalS == null ? 15.0 : intervalS,
        "--scale-up-window-s", scaleUpWindowS, "--scale-down-window-s", scaleDownWindowS,
        "--provisioning-delay-s", provisioningS, "--warmup-s", warmupS,
        "--loading-delay-s", loadingS == null ? 0.0 : loadingS).entrySet()) {
      DeploymentOptions.require(cl, e.getValue() >= 0 && e.getValue() * 1e6 <= Simulation.MAX_DELAY_US,
          e.getKey() + " must be between 0 and 3600 seconds, got " + e.getValue());
    }
    DeploymentOptions.require(cl, loadGbps > 0 && Double.isFinite(loadGbps),
        "--model-load-gbps must be a finite number > 0, got " + loadGbps);
    DeploymentOptions.require(cl, warmupSlowdown >= 1 && warmupSlowdown <= 100,
        "--warmup-slowdown must be a factor in [1, 100], got " + warmupSlowdown);
    DeploymentOptions.require(cl, warmupSlowdownS >= 0 && warmupSlowdownS <= 86_400,
        "--warmup-slowdown-s must be in [0, 86400], got " + warmupSlowdownS);
    DeploymentOptions.require(cl, nodeCostPerHour == null || (nodeCostPerHour >= 0 && Double.isFinite(nodeCostPerHour)),
        "--node-cost-per-hour must be a finite number >= 0, got " + nodeCostPerHour);
    try {
      Providers.select(AutoscalerProvider.class, name);
    } catch (RuntimeException e) {
      throw new CommandLine.ParameterException(cl, "--autoscaler: " + e.getMessage());
    }
  }

  /**
   * The most replicas of {@code gpusPerReplica} GPUs: {@code --max-replicas}, or as many as the
   * most nodes hold ({@code --max-nodes} or a Go BLIS config's {@code max_nodes}), or 4 x the
   * initial ones.
   */
  int maxReplicas(int initial, int gpusPerReplica) {
    if (maxReplicas != null) {
      return maxReplicas;
    }
    Integer nodes = maxNodes != null ? maxNodes : go != null ? go.maxNodes() : null;
    if (nodes != null) {
      int perNode = nodeGpus() / Math.max(1, gpusPerReplica);
      return Math.max(initial, nodes * perNode);
    }
    return 4 * initial;
  }

  /** GPUs per node: the flag when given, else a Go BLIS config's, else the flag's default. */
  private int nodeGpus() {
    return pick("--gpus-per-node", gpusPerNode, go == null ? null : go.gpusPerNode());
  }

  /**
   * Scales the pool of {@code cb}: {@code initial} ready replicas of {@code gpusPerReplica} GPUs
   * serving {@code model} on {@code gpu}, up to the most replicas (the pool's instances).
   */
  void apply(Cluster.Builder cb, int initial, int gpusPerReplica, String model, String gpu) {
    int max = maxReplicas(initial, gpusPerReplica);
    FleetConfig f = fleet(initial, minReplicas, max, gpusPerReplica, model, gpu, nodesFor(max, gpusPerReplica));
    cb.instances(f.maxReplicas()).autoscaler(new PolicySpec(name, parsedOptions), f);
  }

  /**
   * Scales each pool of a policy bundle (or the prefill and decode split) on its own: the flags
   * are every pool's settings, each pool starting from its {@code instances}, bounded by its own
   * {@code min_replicas} and {@code max_replicas} where it gives them. The pools of a GPU type share
   * its node pool; without {@code --max-nodes} it may hold as many nodes as all their most replicas need.
   */
  void applyToPools(Cluster.Builder cb) {
    cb.autoscaler(new PolicySpec(name, parsedOptions), (p, all) -> {
      Integer given = maxNodes != null ? maxNodes : go != null ? go.maxNodes() : null;
      int nodes = 0;
      for (Cluster.ScaledPool q : all) {
        if (q.nodePool().equals(p.nodePool())) { // the node pool's most nodes, once: given, or what all its pools need
          nodes += given != null ? 0 : nodesFor(maxOf(q), q.gpusPerReplica());
        }
      }
      nodes = given != null ? given : nodes;
      int min = p.minReplicas() != null ? p.minReplicas() : minReplicas;
      return fleet(p.initialReplicas(), min, maxOf(p), p.gpusPerReplica(), p.model(), p.gpu(), nodes);
    });
  }

  /** A bundle pool's most replicas: its own, else the flags'. */
  private int maxOf(Cluster.ScaledPool p) {
    return p.maxReplicas() != null ? p.maxReplicas() : maxReplicas(p.initialReplicas(), p.gpusPerReplica());
  }

  /** Nodes that {@code max} replicas of {@code gpusPerReplica} GPUs need, unless given by the flag or a Go BLIS config. */
  private int nodesFor(int max, int gpusPerReplica) {
    int perNode = nodeGpus() / Math.max(1, gpusPerReplica);
    return maxNodes != null ? maxNodes : go != null && go.maxNodes() != null ? go.maxNodes()
        : perNode == 0 ? 1 : (max + perNode - 1) / perNode;
  }

  /**
   * A pool's fleet from the flags (and a Go BLIS policy config's settings for the flags not
   * given), on a node pool of at most {@code nodes} nodes.
   */
  private FleetConfig fleet(int initial, int min, int max, int gpusPerReplica, String model, String gpu, int nodes) {
    int perNodeGpus = nodeGpus();
    long loadingUs = loadingS != null ? Math.round(loadingS * 1e6)
        : go != null && go.loadingUs() != null ? go.loadingUs()
        : Math.round(weightsPerGpuBytes(model, gpusPerReplica) / (loadGbps * 1e9) * 1e6);
    double cost = nodeCostPerHour != null ? nodeCostPerHour
        : go != null && go.costPerHour() != null ? go.costPerHour()
        : PriceTable.bundled().priceOf(gpu).map(p -> p.usdPerGpuHour() * perNodeGpus).orElse(0.0);
    long interval = intervalUs != null ? intervalUs : intervalS != null ? Math.round(intervalS * 1e6)
        : go != null ? go.intervalUs() : 15_000_000L;
    long provisioning = given("--provisioning-delay-s") || go == null || go.provisioningUs() == null
        ? Math.round(provisioningS * 1e6) : go.provisioningUs();
    long up = given("--scale-up-window-s") || go == null ? Math.round(scaleUpWindowS * 1e6) : go.scaleUpWindowUs();
    long down = given("--scale-down-window-s") || go == null ? Math.round(scaleDownWindowS * 1e6) : go.scaleDownWindowUs();
    int firstNodes = initialNodes != null ? initialNodes : go == null || go.initialNodes() == null ? 0 : go.initialNodes();
    int keptNodes = minNodes != null ? minNodes : go == null || go.minNodes() == null ? 0 : go.minNodes();
    return new FleetConfig(min, max, initial, interval, gpusPerReplica, perNodeGpus, nodes,
        firstNodes, keptNodes, provisioning, loadingUs, Math.round(warmupS * 1e6), cost, up, down, warmupSlowdown,
        Math.round(warmupSlowdownS * 1e6));
  }

  /** The flag's value when given, else the Go BLIS policy config's, else the flag's default. */
  private int pick(String flag, int value, Integer fromGo) {
    return given(flag) || fromGo == null ? value : fromGo;
  }

  private static double weightsPerGpuBytes(String model, int gpus) {
    try {
      return ModelCatalog.resolve(model).weightBytes() / gpus;
    } catch (RuntimeException e) {
      return 0; // a model given another way (a plugin's): no weights to load
    }
  }
}
