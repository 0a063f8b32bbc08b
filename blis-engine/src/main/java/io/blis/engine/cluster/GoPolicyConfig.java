package io.blis.engine.cluster;

import io.blis.api.AdmissionPolicyProvider;
import io.blis.api.PriorityPolicyProvider;
import io.blis.api.RouterProvider;
import io.blis.api.SchedulerProvider;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads Go BLIS's policy config ({@code --policy-config}) into the policies of a {@link
 * PolicyBundle}:
 *
 * <pre>
 * admission: {policy: token-bucket, token_bucket_capacity: 10000, token_bucket_refill_rate: 1000}
 * routing:   {policy: weighted, cache_weight: 0.6, load_weight: 0.4}   # or scorers: [{name, weight}]
 * priority:  {policy: slo-based}
 * scheduler: priority-fcfs
 * </pre>
 *
 * and its autoscaling sections ({@code autoscaler}, {@code node_pools}, {@code instance_lifecycle};
 * {@link GoAutoscaling}). A file is in this format when it has a top-level {@code routing} key or
 * one of those sections, or Go BLIS's keys under {@code admission} ({@code token_bucket_*}, {@code
 * tier_shed_*}, {@code gaie_*}, {@code slo_priorities}, {@code slo_targets}); this project's own bundle keys ({@code router}, {@code pools}, {@code
 * cluster}, {@code slo}) in such a file are refused in one line. Weights map to this project's
 * weighted-router scorers: {@code cache_weight} to {@code prefix-cache}, {@code load_weight} to
 * {@code load} (Go BLIS's defaults 0.6 and 0.4 when the policy is weighted and one or both are left
 * out); Go BLIS's scorers to the weighted router's scorers with Go BLIS's formulas ({@link #SCORERS}).
 * Errors name the file, line and column as the bundle's do.
 */
final class GoPolicyConfig {

  private static final List<String> TOP = List.of("admission", "routing", "priority", "scheduler",
      "node_pools", "autoscaler", "instance_lifecycle");
  /** Go BLIS's autoscaling sections: any of them makes a file Go BLIS's. */
  private static final List<String> FLEET = List.of("node_pools", "autoscaler", "instance_lifecycle");
  private static final List<String> NODE_POOL = List.of("name", "gpu_type", "gpus_per_node", "gpu_memory_gib",
      "initial_nodes", "min_nodes", "max_nodes", "provisioning_delay", "cost_per_hour");
  private static final List<String> AUTOSCALER = List.of("interval_us", "scale_up_stabilization_window_us",
      "scale_down_stabilization_window_us", "hpa_scrape_delay", "analyzer");
  private static final List<String> ANALYZER = List.of("kv_cache_threshold", "scale_up_threshold",
      "scale_down_boundary", "avg_input_tokens");
  private static final List<String> LIFECYCLE = List.of("loading_delay", "warm_start_initial_instances");
  private static final List<String> DELAY = List.of("mean", "stddev");
  private static final List<String> NATIVE_ONLY = List.of("router", "pools", "cluster", "slo");
  private static final List<String> ADMISSION = List.of("policy", "token_bucket_capacity",
      "token_bucket_refill_rate", "tier_shed_threshold", "tier_shed_min_priority", "gaie_qd_threshold",
      "gaie_kv_threshold", "slo_priorities", "slo_targets");
  /** Go BLIS's admission keys: the policy they belong to and its parameter here. */
  private static final String[][] ADMISSION_PARAMS = {
      {"token_bucket_capacity", "token-bucket", "capacity"},
      {"token_bucket_refill_rate", "token-bucket", "refill_rate"},
      {"tier_shed_threshold", "tier-shed", "threshold"},
      {"tier_shed_min_priority", "tier-shed", "min_priority"},
      {"gaie_qd_threshold", "gaie-legacy", "qd_threshold"},
      {"gaie_kv_threshold", "gaie-legacy", "kv_threshold"}};
  private static final List<String> ROUTING = List.of("policy", "cache_weight", "load_weight", "scorers");
  private static final List<String> SCORER = List.of("name", "weight");
  /**
   * Go BLIS's scorers and the weighted router's scorer with the same formula: its own name, except
   * Go BLIS's min-max {@code queue-depth}, which is {@code queue-depth-minmax} here ({@code
   * queue-depth} being this project's per-instance score); {@code lora-affinity} is this project's
   * (noted).
   */
  static final Map<String, String> SCORERS = Map.ofEntries(
      Map.entry("prefix-affinity", "prefix-affinity"),
      Map.entry("precise-prefix-cache", "precise-prefix-cache"),
      Map.entry("no-hit-lru", "no-hit-lru"),
      Map.entry("queue-depth", "queue-depth-minmax"),
      Map.entry("kv-utilization", "kv-utilization"),
      Map.entry("load-balance", "load-balance"),
      Map.entry("active-requests", "active-requests"),
      Map.entry("running-requests", "running-requests"),
      Map.entry("load-aware", "load-aware"),
      Map.entry("vllm-dp", "vllm-dp"),
      Map.entry("lora-affinity", "lora-affinity"));
  static final double DEFAULT_CACHE_WEIGHT = 0.6;
  static final double DEFAULT_LOAD_WEIGHT = 0.4;

  private final NodeReader reader;

  GoPolicyConfig(NodeReader reader) {
    this.reader = reader;
  }

  /** Whether the tree is a Go BLIS policy config (see the class comment). */
  static boolean isGoBlis(YamlNode root) {
    if (root.map() == null) {
      return false;
    }
    if (root.map().containsKey("routing") || FLEET.stream().anyMatch(root.map()::containsKey)) {
      return true;
    }
    YamlNode admission = root.map().get("admission");
    return admission != null && admission.map() != null
        && admission.map().keySet().stream().anyMatch(k -> k.startsWith("token_bucket_")
            || k.startsWith("tier_shed_") || k.startsWith("gaie_") || k.equals("slo_priorities")
            || k.equals("slo_targets"));
  }

  private String at(YamlNode n) {
    return reader.source() + ", line " + n.line() + ", column " + n.column();
  }

  /** The policies a Go BLIS policy config sets (null: not set). */
  record Policies(PolicySpec router, PolicySpec admission, PolicySpec priority, String scheduler,
      GoAutoscaling autoscaling) {}

  /**
   * Go BLIS's weighted-routing cache and load weights as this project's weighted-router scorers
   * (see {@code PolicyBundle#goWeightedScorers}).
   */
  static String weightedScorers(Double cache, Double load) {
    double c = cache != null ? cache : DEFAULT_CACHE_WEIGHT;
    double l = load != null ? load : DEFAULT_LOAD_WEIGHT;
    return c + l > 0 ? "prefix-cache:" + c + ",load:" + l : null;
  }

  /** The policies {@code root}, a Go BLIS policy config, sets; adds a note per meaningless setting. */
  Policies policies(YamlNode root, List<String> notes) {
    for (String k : NATIVE_ONLY) {
      if (root.map().containsKey(k)) {
        String goKey = root.map().containsKey("routing") ? "routing"
            : FLEET.stream().filter(root.map()::containsKey).findFirst().orElse("admission");
        YamlNode marker = root.map().get(goKey);
        throw reader.error(root.map().get(k), "'" + k + "' is a key of this project's policy bundle,"
            + " but this file is Go BLIS's policy config (" + (goKey.equals("admission")
                ? "token_bucket_ keys" : "'" + goKey + "'") + " at line " + marker.line() + "): write the file"
            + " in one format (blis convert turns a Go BLIS policy config into a bundle; see docs/go-blis.md)");
      }
    }
    Map<String, YamlNode> top = reader.mapping(root, "the Go BLIS policy config", TOP);
    PolicySpec admission = admission(top.get("admission"), notes);
    PolicySpec router = routing(top.get("routing"), notes);
    PolicySpec priority = null;
    if (top.containsKey("priority")) {
      Map<String, YamlNode> p = reader.mapping(top.get("priority"), "priority", List.of("policy"));
      if (p.containsKey("policy")) {
        YamlNode n = p.get("policy");
        String name = reader.string(n, "policy");
        name = reader.knownName(n, name, "priority", PriorityPolicyProvider.class);
        priority = new PolicySpec(name, Map.of());
      }
    }
    String scheduler = null;
    if (top.containsKey("scheduler")) {
      YamlNode s = top.get("scheduler");
      scheduler = reader.knownName(s, reader.string(s, "scheduler"), "scheduler", SchedulerProvider.class);
    }
    return new Policies(router, admission, priority, scheduler, autoscaling(top, notes));
  }

  /** Go BLIS's autoscaling sections, or null when the file has none. */
  private GoAutoscaling autoscaling(Map<String, YamlNode> top, List<String> notes) {
    if (FLEET.stream().noneMatch(top::containsKey)) {
      return null;
    }
    Long interval = null;
    Long up = 0L;
    Long down = 0L;
    Map<String, String> analyzer = new LinkedHashMap<>();
    if (top.containsKey("autoscaler")) {
      Map<String, YamlNode> a = reader.mapping(top.get("autoscaler"), "autoscaler", AUTOSCALER);
      interval = micros(a.get("interval_us"), "interval_us");
      up = a.containsKey("scale_up_stabilization_window_us") ? micros(a.get("scale_up_stabilization_window_us"),
          "scale_up_stabilization_window_us") : 0L;
      down = a.containsKey("scale_down_stabilization_window_us")
          ? micros(a.get("scale_down_stabilization_window_us"), "scale_down_stabilization_window_us") : 0L;
      if (a.containsKey("hpa_scrape_delay") && delayUs(a.get("hpa_scrape_delay"), "hpa_scrape_delay", notes) > 0) {
        notes.add(at(a.get("hpa_scrape_delay")) + ": hpa_scrape_delay has no meaning here: the autoscaler sees"
            + " the instances' figures as of the snapshot refresh (--snapshot-refresh-us)");
      }
      if (a.containsKey("analyzer")) {
        Map<String, YamlNode> an = reader.mapping(a.get("analyzer"), "analyzer", ANALYZER);
        for (String k : ANALYZER) {
          if (an.containsKey(k)) {
            double v = reader.number(an.get(k), k);
            if (!(v >= 0)) {
              throw reader.error(an.get(k), k + " must be a number >= 0, got " + an.get(k).text());
            }
            if (k.equals("kv_cache_threshold") && v > 1) {
              throw reader.error(an.get(k), k + " must be in (0, 1] (a fraction of the KV cache; 0 for the default"
                  + " 0.8), got " + an.get(k).text());
            }
            if (v > 0) { // Go BLIS: 0 means its default
              analyzer.put(k, an.get(k).text());
            }
          }
        }
        // the band as the wva autoscaler reads it (Go BLIS's defaults 0.8 and 0.4 for 0 or left out)
        double upAt = analyzer.containsKey("scale_up_threshold")
            ? reader.number(an.get("scale_up_threshold"), "scale_up_threshold") : 0.8;
        double downBelow = analyzer.containsKey("scale_down_boundary")
            ? reader.number(an.get("scale_down_boundary"), "scale_down_boundary") : 0.4;
        if (!(downBelow < upAt)) {
          YamlNode at = analyzer.containsKey("scale_down_boundary") ? an.get("scale_down_boundary")
              : an.get("scale_up_threshold");
          throw reader.error(at, "scale_down_boundary (" + trim(downBelow) + ") must be below scale_up_threshold ("
              + trim(upAt) + "): the autoscaler would add and remove replicas at the same load");
        }
      }
    }
    String gpuType = null;
    Integer gpusPerNode = null;
    Integer initial = null;
    Integer min = null;
    Integer max = null;
    Long provisioning = null;
    Double cost = null;
    if (top.containsKey("node_pools")) {
      YamlNode pools = top.get("node_pools");
      if (pools.list() == null || pools.list().isEmpty()) {
        throw reader.error(pools, "node_pools must be a list of node pools");
      }
      if (pools.list().size() > 1) {
        notes.add(at(pools.list().get(1)) + ": only the first node pool is used here: one pool is scaled");
      }
      Map<String, YamlNode> np = reader.mapping(pools.list().get(0), "a node pool", NODE_POOL);
      gpuType = np.containsKey("gpu_type") ? reader.string(np.get("gpu_type"), "gpu_type") : null;
      if (gpuType != null && io.blis.latency.catalog.GpuCatalog.lookup(gpuType).isEmpty()) {
        throw reader.error(np.get("gpu_type"), "unknown GPU '" + gpuType + "' in gpu_type; bundled GPUs: "
            + String.join(", ", io.blis.latency.catalog.GpuCatalog.names()));
      }
      gpusPerNode = np.containsKey("gpus_per_node") ? (int) reader.whole(np.get("gpus_per_node"), "gpus_per_node", 1) : null;
      initial = np.containsKey("initial_nodes") ? (int) reader.whole(np.get("initial_nodes"), "initial_nodes", 0) : null;
      min = np.containsKey("min_nodes") ? (int) reader.whole(np.get("min_nodes"), "min_nodes", 0) : null;
      max = np.containsKey("max_nodes") ? (int) reader.whole(np.get("max_nodes"), "max_nodes", 1) : null;
      provisioning = np.containsKey("provisioning_delay")
          ? delayUs(np.get("provisioning_delay"), "provisioning_delay", notes) : null;
      if (np.containsKey("cost_per_hour")) {
        cost = reader.number(np.get("cost_per_hour"), "cost_per_hour");
        if (!(cost >= 0)) {
          throw reader.error(np.get("cost_per_hour"), "cost_per_hour must be >= 0, got " + np.get("cost_per_hour").text());
        }
      }
      if (np.containsKey("gpu_memory_gib")) {
        notes.add(at(np.get("gpu_memory_gib")) + ": gpu_memory_gib has no meaning here: the GPU's memory"
            + " comes from --gpu");
      }
    }
    Long loading = null;
    if (top.containsKey("instance_lifecycle")) {
      Map<String, YamlNode> l = reader.mapping(top.get("instance_lifecycle"), "instance_lifecycle", LIFECYCLE);
      if (l.containsKey("loading_delay")) {
        loading = delayUs(l.get("loading_delay"), "loading_delay", notes);
      }
      YamlNode warm = l.get("warm_start_initial_instances");
      if (warm != null && !"true".equals(warm.text())) {
        notes.add(at(warm) + ": warm_start_initial_instances " + warm.text() + " has no meaning here: the"
            + " replicas of --num-instances are ready at time 0");
      }
    }
    return new GoAutoscaling(interval, up, down, analyzer, gpuType, gpusPerNode, initial, min, max,
        provisioning, cost, loading);
  }

  private static String trim(double v) {
    return v == Math.rint(v) && Math.abs(v) < 1e15 ? Long.toString((long) v) : Double.toString(v);
  }

  /** A whole or fractional number of microseconds >= 0. */
  private long micros(YamlNode n, String key) {
    double v = reader.number(n, key);
    if (!(v >= 0)) {
      throw reader.error(n, key + " must be >= 0 microseconds, got " + n.text());
    }
    return Math.round(v);
  }

  /** A {@code {mean, stddev}} delay in seconds, as its mean in microseconds (a note for the spread). */
  private long delayUs(YamlNode n, String key, List<String> notes) {
    Map<String, YamlNode> d = reader.mapping(n, key, DELAY);
    double mean = d.containsKey("mean") ? reader.number(d.get("mean"), "mean") : 0;
    if (!(mean >= 0) || mean > 3600) {
      throw reader.error(n, key + ".mean must be between 0 and 3600 seconds, got " + mean);
    }
    if (d.containsKey("stddev") && reader.number(d.get("stddev"), "stddev") != 0) {
      notes.add(at(d.get("stddev")) + ": " + key + ".stddev has no meaning here: the delay is its mean, the"
          + " same for every replica");
    }
    return Math.round(mean * 1e6);
  }

  /** The known provider name of section {@code n}'s required {@code policy} key. */
  private String policyName(YamlNode n, Map<String, YamlNode> m, String section,
      String what, Class<? extends io.blis.api.NamedProvider> type) {
    YamlNode pn = m.get("policy");
    if (pn == null) {
      throw reader.error(n, section + " needs 'policy: NAME' (available: "
          + String.join(", ", io.blis.api.Providers.names(type)) + ")");
    }
    return reader.knownName(pn, reader.string(pn, "policy"), what, type);
  }

  private PolicySpec admission(YamlNode n, List<String> notes) {
    if (n == null) {
      return null;
    }
    Map<String, YamlNode> m = reader.mapping(n, "admission", ADMISSION);
    String name = policyName(n, m, "admission", "admission", AdmissionPolicyProvider.class);
    Map<String, String> params = new LinkedHashMap<>();
    for (String[] k : ADMISSION_PARAMS) {
      YamlNode v = m.get(k[0]);
      if (v == null) {
        continue;
      }
      double x = reader.number(v, k[0]);
      if (k[1].equals("token-bucket") && (!(x > 0) || Double.isInfinite(x))) {
        throw reader.error(v, k[0] + " must be a positive number, got " + v.text());
      }
      if (k[2].equals("kv_threshold") && !(x > 0 && x <= 1)) {
        throw reader.error(v, k[0] + " must be in (0, 1] (a fraction of the KV cache), got " + v.text());
      }
      if (name.equals(k[1])) {
        params.put(k[2], v.text());
      } else {
        notes.add(at(v) + ": " + k[0] + " has no meaning here: the admission policy is " + name
            + ", not " + k[1]);
      }
    }
    if (m.containsKey("slo_priorities")) {
      notes.add(at(m.get("slo_priorities")) + ": slo_priorities has no meaning here: the classes' priorities are"
          + " GAIE's (critical 4, standard 3, batch -1, sheddable -2, background -3)");
    }
    if (m.containsKey("slo_targets")) {
      notes.add(at(m.get("slo_targets")) + ": slo_targets has no meaning here: give the flow control's"
          + " TTFT targets as --slo-targets");
    }
    return new PolicySpec(name, params);
  }

  private PolicySpec routing(YamlNode n, List<String> notes) {
    if (n == null) {
      return null;
    }
    Map<String, YamlNode> m = reader.mapping(n, "routing", ROUTING);
    String name = policyName(n, m, "routing", "routing policy", RouterProvider.class);
    boolean weights = m.containsKey("cache_weight") || m.containsKey("load_weight");
    if (weights && m.containsKey("scorers")) {
      throw reader.error(m.get("scorers"), "give cache_weight/load_weight or scorers, not both");
    }
    if (!name.equals("weighted")) {
      for (String k : List.of("cache_weight", "load_weight", "scorers")) {
        if (m.containsKey(k)) {
          notes.add(at(m.get(k)) + ": " + k + " has no meaning here: the routing policy is " + name
              + ", not weighted");
        }
      }
      return new PolicySpec(name, Map.of());
    }
    String scorers;
    if (m.containsKey("scorers")) {
      scorers = scorers(m.get("scorers"), notes);
    } else {
      Double cache = m.containsKey("cache_weight") ? weight(m.get("cache_weight"), "cache_weight") : null;
      Double load = m.containsKey("load_weight") ? weight(m.get("load_weight"), "load_weight") : null;
      scorers = weightedScorers(cache, load);
      if (scorers == null) {
        throw reader.error(n, "cache_weight and load_weight cannot both be 0");
      }
    }
    return new PolicySpec(name, Map.of("scorers", scorers));
  }

  private double weight(YamlNode v, String key) {
    double w = reader.number(v, key);
    if (!(w >= 0) || Double.isInfinite(w)) {
      throw reader.error(v, key + " must be a finite number >= 0, got " + v.text());
    }
    return w;
  }

  private String scorers(YamlNode n, List<String> notes) {
    if (n.list() == null || n.list().isEmpty()) {
      throw reader.error(n, "scorers must be a list of {name, weight}, got " + (n.map() != null ? "a mapping" : "'" + n.text() + "'"));
    }
    Map<String, Double> weights = new LinkedHashMap<>();
    Map<String, YamlNode> seen = new LinkedHashMap<>();
    double total = 0;
    for (YamlNode item : n.list()) {
      Map<String, YamlNode> s = reader.mapping(item, "a scorer", SCORER);
      if (!s.containsKey("name") || !s.containsKey("weight")) {
        throw reader.error(item, "a scorer needs a name and a weight");
      }
      YamlNode nameNode = s.get("name");
      String goName = reader.string(nameNode, "name");
      String mine = SCORERS.get(goName);
      if (mine == null) {
        throw reader.error(nameNode, "unknown Go BLIS scorer '" + goName + "'; scorers read: "
            + String.join(", ", new java.util.TreeSet<>(SCORERS.keySet())));
      }
      YamlNode before = seen.putIfAbsent(goName, nameNode);
      if (before != null) {
        throw reader.error(nameNode, "duplicate scorer '" + goName + "' (first at line " + before.line()
            + "): each scorer may appear at most once, as in Go BLIS");
      }
      if (goName.equals("lora-affinity")) {
        notes.add(at(nameNode) + ": scorer lora-affinity is read as this project's: 1 where the instance"
            + " holds the adapter (on its GPU or named by a request there), 1/2 where it has a free adapter"
            + " slot, 0 elsewhere (Go BLIS: 1 where it is resident, 0 elsewhere, 1 everywhere when all are alike)");
      }
      double w = weight(s.get("weight"), "weight");
      total += w;
      weights.put(mine, w);
    }
    if (total <= 0) {
      throw reader.error(n, "the scorer weights cannot all be 0");
    }
    return weights.entrySet().stream().map(e -> e.getKey() + ":" + e.getValue())
        .collect(java.util.stream.Collectors.joining(","));
  }
}
