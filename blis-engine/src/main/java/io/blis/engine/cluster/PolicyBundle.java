package io.blis.engine.cluster;

import com.fasterxml.jackson.core.JsonToken;
import io.blis.api.AdmissionPolicyProvider;
import io.blis.api.NamedProvider;
import io.blis.api.PriorityPolicyProvider;
import io.blis.api.Providers;
import io.blis.api.RouterProvider;
import io.blis.api.SchedulerProvider;
import io.blis.engine.SimulatedTime;
import io.blis.engine.SloTarget;
import io.blis.latency.coeff.InputTrees;
import io.blis.workload.StrictYaml;
import io.blis.workload.synthetic.ClientSpec;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Everything {@code --policy-config FILE} can hold: pools of instances, the router with its
 * parameters (scorer weights), the admission and priority policies, the instance scheduler,
 * control-plane latencies, snapshot staleness and SLO targets. Fields that are null (or empty)
 * were not set. Example (keys are snake_case; in a policy section {@code policy} is the provider
 * name and every other key one of its parameters):
 *
 * <pre>
 * pools:
 *   - name: h100
 *     instances: 4
 *     gpu: H100
 *     tp: 1
 *   - name: a100
 *     instances: 2
 *     gpu: A100-80GB
 *     tp: 2
 *     max_num_seqs: 128
 *   - name: deepseek
 *     instances: 1
 *     model: deepseek-v3
 *     tp: 8
 *     dp: 2                       # or data_parallel_size; pp / pipeline_parallel_size likewise
 *     enable_expert_parallel: true  # or ep: 16 (tp x dp)
 * router:
 *   policy: weighted
 *   scorers: {prefix-cache: 2, load: 1, kv-utilization: 1}
 * admission:
 *   policy: token-bucket
 *   capacity: 10000
 *   refill_rate: 1000
 * priority:
 *   policy: slo-based
 *   aging_ms: 500
 * scheduler: priority-fcfs
 * cluster:
 *   admission_latency_us: 0
 *   routing_latency_us: 200
 *   snapshot_refresh_us: 50000
 * slo:
 *   critical: {ttft_ms: 200, e2e_ms: 2000}
 *   standard: {ttft_ms: 1000, e2e_ms: 20000}
 * </pre>
 *
 * <p>Prefill/decode disaggregation: each pool may have a {@code role} (prefill, decode or both,
 * the default), and a {@code disaggregation} section sets the rest ({@link PdSpec}):
 *
 * <pre>
 * pools:
 *   - {name: prefill, instances: 3, role: prefill}
 *   - {name: decode, instances: 5, role: decode}
 * disaggregation:
 *   decider: always               # never, always, prefix-threshold
 *   prefix_threshold: 16
 *   transfer_bandwidth_gb_s: 25   # leave out for the links between the instances (GPU catalog)
 *   transfer_base_latency_ms: 0.05
 *   transfer_contention: true     # with a fixed bandwidth: concurrent transfers share it
 *   prefill_router: {policy: least-loaded}
 *   decode_router: {policy: weighted, scorers: {kv-utilization: 1, load: 1}}
 * </pre>
 *
 * <p>An autoscaled run scales every pool on its own; a pool may bound its replicas and change its
 * autoscaler or the autoscaler's parameters ({@link PoolScaling}):
 *
 * <pre>
 * pools:
 *   - {name: chat, instances: 2, max_replicas: 8, autoscaler: {target: 24}}
 *   - {name: batch, instances: 1, min_replicas: 1, max_replicas: 4, autoscaler: {policy: schedule, replicas: "0:1,8:4"}}
 * </pre>
 *
 * <p>Every problem is one {@link IllegalArgumentException} naming the file, line and column and
 * what was expected: unknown keys (with the accepted ones), unknown policy names (with the
 * available ones), unknown SLO classes (with the known ones: critical, standard, batch, sheddable,
 * background), wrong types, fractions where whole numbers are needed, duplicate keys or pool
 * names, an empty {@code pools} list, more than {@link ClusterLimits#MAX_INSTANCES} instances in
 * all, control-plane latencies above {@link SimulatedTime#MAX_DELAY_US} (one hour). YAML anchors
 * and aliases are refused.
 */
public record PolicyBundle(List<PoolSpec> pools, PolicySpec router, PolicySpec admission,
    PolicySpec priority, String scheduler, Long admissionLatencyUs, Long routingLatencyUs,
    Long snapshotRefreshUs, Map<String, SloTarget> slo, PdSpec disaggregation,
    Map<String, SloTarget> modelSlo, io.blis.engine.lora.LoraSpec lora, Map<String, PoolScaling> scaling) {

  /** A bundle whose pools set no autoscaling of their own. */
  public PolicyBundle(List<PoolSpec> pools, PolicySpec router, PolicySpec admission,
      PolicySpec priority, String scheduler, Long admissionLatencyUs, Long routingLatencyUs,
      Long snapshotRefreshUs, Map<String, SloTarget> slo, PdSpec disaggregation,
      Map<String, SloTarget> modelSlo, io.blis.engine.lora.LoraSpec lora) {
    this(pools, router, admission, priority, scheduler, admissionLatencyUs, routingLatencyUs,
        snapshotRefreshUs, slo, disaggregation, modelSlo, lora, Map.of());
  }

  /** A bundle without a {@code lora} section. */
  public PolicyBundle(List<PoolSpec> pools, PolicySpec router, PolicySpec admission,
      PolicySpec priority, String scheduler, Long admissionLatencyUs, Long routingLatencyUs,
      Long snapshotRefreshUs, Map<String, SloTarget> slo, PdSpec disaggregation,
      Map<String, SloTarget> modelSlo) {
    this(pools, router, admission, priority, scheduler, admissionLatencyUs, routingLatencyUs,
        snapshotRefreshUs, slo, disaggregation, modelSlo, null);
  }

  /** A bundle without a disaggregation section or targets per model. */
  public PolicyBundle(List<PoolSpec> pools, PolicySpec router, PolicySpec admission,
      PolicySpec priority, String scheduler, Long admissionLatencyUs, Long routingLatencyUs,
      Long snapshotRefreshUs, Map<String, SloTarget> slo) {
    this(pools, router, admission, priority, scheduler, admissionLatencyUs, routingLatencyUs,
        snapshotRefreshUs, slo, null, Map.of());
  }

  private static final List<String> TOP = List.of("pools", "router", "admission", "priority",
      "scheduler", "cluster", "slo", "disaggregation", "model_slo", "lora");
  private static final List<String> PD = List.of("decider", "prefix_threshold", "transfer_bandwidth_gb_s",
      "transfer_base_latency_ms", "transfer_contention", "prefill_router", "decode_router");
  private static final List<String> POOL = List.of("name", "instances", "model", "gpu", "tp",
      "latency_model", "coefficients", "max_num_seqs", "max_num_batched_tokens",
      "long_prefill_token_threshold", "max_model_len", "block_size", "total_kv_blocks",
      "gpu_memory_utilization", "pp", "pipeline_parallel_size", "dp", "data_parallel_size", "ep",
      "enable_expert_parallel", "role", "min_replicas", "max_replicas", "autoscaler");
  private static final List<String> CLUSTER = List.of("admission_latency_us", "routing_latency_us",
      "snapshot_refresh_us");
  private static final List<String> SLO = List.of("ttft_ms", "e2e_ms");
  private static final int MAX_POOLS = 64;

  public PolicyBundle {
    pools = List.copyOf(pools);
    slo = Collections.unmodifiableMap(new TreeMap<>(slo));
    modelSlo = Collections.unmodifiableMap(new TreeMap<>(modelSlo));
    scaling = Collections.unmodifiableMap(new TreeMap<>(scaling));
    for (String pool : scaling.keySet()) {
      if (pools.stream().noneMatch(p -> p.name().equals(pool))) {
        throw new IllegalArgumentException("autoscaling settings for pool '" + pool + "', which the bundle does not have");
      }
    }
  }

  /** Pool {@code name}'s own autoscaling settings ({@link PoolScaling#none()} when it sets none). */
  public PoolScaling scalingOf(String name) {
    return scaling.getOrDefault(name, PoolScaling.none());
  }

  /** A bundle that sets nothing. */
  public static PolicyBundle empty() {
    return new PolicyBundle(List.of(), null, null, null, null, null, null, null, Map.of());
  }

  /**
   * Reads and checks {@code file}. A file that sets nothing (empty, only comments, {@code ~} or
   * {@code {}}) is refused: it is almost certainly the wrong file or a truncated one, and running
   * the defaults in its name would be a result nobody asked for.
   */
  public static PolicyBundle load(Path file) {
    return read(file).bundle();
  }

  /** Parses and checks bundle text; {@code source} names it in errors. */
  public static PolicyBundle parse(String text, String source) {
    return read(text, source).bundle();
  }

  /**
   * A policy file as read: the bundle, whether it was written in Go BLIS's policy-config format
   * ({@code admission}, {@code routing}, {@code priority}, {@code scheduler}; see {@link
   * GoPolicyConfig}), and one note per setting that has no meaning here.
   */
  public record Read(PolicyBundle bundle, boolean goBlis, List<String> notes, GoAutoscaling autoscaling) {
    public Read {
      notes = List.copyOf(notes);
    }

    /** A file without autoscaling sections. */
    public Read(PolicyBundle bundle, boolean goBlis, List<String> notes) {
      this(bundle, goBlis, notes, null);
    }
  }

  /** As {@link #load}, telling the format and the notes. */
  public static Read read(Path file) {
    Read r = read(InputTrees.readText(file, "policy bundle"), file.toString());
    if (r.bundle().equals(empty()) && r.autoscaling() == null) {
      throw new IllegalArgumentException(file + ": the policy bundle sets nothing (it is empty, only"
          + " comments, ~ or {}); give at least one of " + String.join(", ", TOP)
          + ", or leave out --policy-config to run the defaults");
    }
    return r;
  }

  /** Bundle text read in either format; an empty document is the {@link #empty} bundle. */
  private static Read read(String text, String source) {
    YamlNode root = YamlNode.document(text, source);
    if (root == null) {
      return new Read(empty(), false, List.of());
    }
    if (GoPolicyConfig.isGoBlis(root)) {
      List<String> notes = new ArrayList<>();
      GoPolicyConfig.Policies p = new GoPolicyConfig(new NodeReader(source)).policies(root, notes);
      PolicyBundle b = new PolicyBundle(List.of(), p.router(), p.admission(), p.priority(),
          p.scheduler(), null, null, null, Map.of());
      return new Read(b, true, notes, p.autoscaling());
    }
    return new Read(new Reader(source).bundle(root), false, List.of());
  }

  /**
   * Go BLIS's weighted-routing cache and load weights as this project's weighted-router scorers,
   * {@code prefix-cache:CACHE,load:LOAD}; a null weight is Go BLIS's default (0.6 for the cache,
   * 0.4 for the load). Null when both weights are 0, which routes on nothing.
   */
  public static String goWeightedScorers(Double cache, Double load) {
    return GoPolicyConfig.weightedScorers(cache, load);
  }

  /** The bundle as YAML that {@link #parse} reads back to an equal bundle. */
  public String toYaml() {
    StringBuilder y = new StringBuilder();
    if (!pools.isEmpty()) {
      y.append("pools:\n");
      for (PoolSpec p : pools) {
        y.append("  - name: ").append(StrictYaml.quote(p.name())).append('\n');
        y.append("    instances: ").append(p.instances()).append('\n');
        field(y, "model", p.model());
        field(y, "gpu", p.gpu());
        field(y, "tp", p.tp());
        field(y, "latency_model", p.latencyModel());
        field(y, "coefficients", p.coefficients());
        field(y, "max_num_seqs", p.maxNumSeqs());
        field(y, "max_num_batched_tokens", p.maxNumBatchedTokens());
        field(y, "long_prefill_token_threshold", p.longPrefillTokenThreshold());
        field(y, "max_model_len", p.maxModelLen());
        field(y, "block_size", p.blockSize());
        field(y, "total_kv_blocks", p.totalKvBlocks());
        field(y, "gpu_memory_utilization", p.gpuMemoryUtilization());
        field(y, "pp", p.pp());
        field(y, "dp", p.dp());
        if (p.ep() != null && p.ep() == PoolSpec.EP_ENABLED) {
          y.append("    enable_expert_parallel: true\n");
        } else {
          field(y, "ep", p.ep());
        }
        field(y, "role", p.role());
        PoolScaling sc = scaling.get(p.name());
        if (sc != null) {
          field(y, "min_replicas", sc.minReplicas());
          field(y, "max_replicas", sc.maxReplicas());
          if (sc.autoscaler() != null || !sc.options().isEmpty()) {
            y.append("    autoscaler: {");
            List<String> parts = new ArrayList<>();
            if (sc.autoscaler() != null) {
              parts.add("policy: " + StrictYaml.quote(sc.autoscaler()));
            }
            sc.options().forEach((k, v) -> parts.add(k + ": " + StrictYaml.quote(v)));
            y.append(String.join(", ", parts)).append("}\n");
          }
        }
      }
    }
    policy(y, "router", router);
    policy(y, "admission", admission);
    policy(y, "priority", priority);
    if (scheduler != null) {
      y.append("scheduler: ").append(StrictYaml.quote(scheduler)).append('\n');
    }
    if (admissionLatencyUs != null || routingLatencyUs != null || snapshotRefreshUs != null) {
      y.append("cluster:\n");
      if (admissionLatencyUs != null) {
        y.append("  admission_latency_us: ").append(admissionLatencyUs).append('\n');
      }
      if (routingLatencyUs != null) {
        y.append("  routing_latency_us: ").append(routingLatencyUs).append('\n');
      }
      if (snapshotRefreshUs != null) {
        y.append("  snapshot_refresh_us: ").append(snapshotRefreshUs).append('\n');
      }
    }
    if (!slo.isEmpty()) {
      y.append("slo:\n");
      slo.forEach((k, v) -> y.append("  ").append(StrictYaml.quote(k)).append(": {ttft_ms: ")
          .append(v.ttftMs()).append(", e2e_ms: ").append(v.e2eMs()).append("}\n"));
    }
    if (!modelSlo.isEmpty()) {
      y.append("model_slo:\n");
      modelSlo.forEach((k, v) -> y.append("  ").append(StrictYaml.quote(k)).append(": {ttft_ms: ")
          .append(v.ttftMs()).append(", e2e_ms: ").append(v.e2eMs()).append("}\n"));
    }
    if (disaggregation != null) {
      PdSpec d = disaggregation;
      y.append("disaggregation:\n");
      if (d.decider() != null) {
        y.append("  decider: ").append(StrictYaml.quote(d.decider())).append('\n');
      }
      if (d.prefixThreshold() != null) {
        y.append("  prefix_threshold: ").append(d.prefixThreshold()).append('\n');
      }
      if (d.transferBandwidthGBps() != null) {
        y.append("  transfer_bandwidth_gb_s: ").append(d.transferBandwidthGBps()).append('\n');
      }
      if (d.transferBaseLatencyUs() != null) {
        y.append("  transfer_base_latency_ms: ").append(d.transferBaseLatencyUs() / 1000.0).append('\n');
      }
      if (d.transferContention() != null) {
        y.append("  transfer_contention: ").append(d.transferContention()).append('\n');
      }
      subPolicy(y, "prefill_router", d.prefillRouter());
      subPolicy(y, "decode_router", d.decodeRouter());
    }
    if (lora != null) {
      y.append(LoraFile.toYaml(lora));
    }
    return y.toString();
  }

  private static void field(StringBuilder y, String key, Object v) {
    if (v != null) {
      y.append("    ").append(key).append(": ")
          .append(v instanceof String s ? StrictYaml.quote(s) : v.toString()).append('\n');
    }
  }

  private static void subPolicy(StringBuilder y, String key, PolicySpec p) {
    if (p != null) {
      y.append("  ").append(key).append(":\n    policy: ").append(StrictYaml.quote(p.name())).append('\n');
      p.params().forEach((k, v) -> y.append("    ").append(k).append(": ").append(StrictYaml.quote(v)).append('\n'));
    }
  }

  private static void policy(StringBuilder y, String key, PolicySpec p) {
    if (p == null) {
      return;
    }
    y.append(key).append(":\n  policy: ").append(StrictYaml.quote(p.name())).append('\n');
    p.params().forEach((k, v) ->
        y.append("  ").append(k).append(": ").append(StrictYaml.quote(v)).append('\n'));
  }

  // ---------------------------------------------------------------- reading

  /** Checks and converts the tree, with the source name for errors. */
  static final class Reader extends NodeReader {

    Reader(String source) {
      super(source);
    }

    PolicyBundle bundle(YamlNode root) {
      Map<String, YamlNode> top = mapping(root, "the policy bundle", TOP);
      Map<String, PoolScaling> scaling = new TreeMap<>();
      List<PoolSpec> pools = top.containsKey("pools") ? pools(top.get("pools"), scaling) : List.of();
      PolicySpec router = policy(top.get("router"), "router", RouterProvider.class, true);
      PolicySpec admission = policy(top.get("admission"), "admission", AdmissionPolicyProvider.class, false);
      PolicySpec priority = policy(top.get("priority"), "priority", PriorityPolicyProvider.class, false);
      String scheduler = null;
      if (top.containsKey("scheduler")) {
        YamlNode s = top.get("scheduler");
        scheduler = knownName(s, string(s, "scheduler"), "scheduler", SchedulerProvider.class);
      }
      Long admissionLatency = null;
      Long routingLatency = null;
      Long refresh = null;
      if (top.containsKey("cluster")) {
        Map<String, YamlNode> c = mapping(top.get("cluster"), "cluster", CLUSTER);
        admissionLatency = c.containsKey(CLUSTER.get(0)) ? latency(c.get(CLUSTER.get(0)), CLUSTER.get(0)) : null;
        routingLatency = c.containsKey(CLUSTER.get(1)) ? latency(c.get(CLUSTER.get(1)), CLUSTER.get(1)) : null;
        refresh = c.containsKey(CLUSTER.get(2)) ? latency(c.get(CLUSTER.get(2)), CLUSTER.get(2)) : null;
      }
      Map<String, SloTarget> slo = new TreeMap<>();
      if (top.containsKey("slo")) {
        YamlNode sloNode = top.get("slo");
        Map<String, YamlNode> classes = mapping(sloNode, "slo", ClientSpec.SLO_CLASSES, "SLO class",
            "known classes");
        for (Map.Entry<String, YamlNode> e : classes.entrySet()) {
          slo.put(e.getKey(), target(e.getValue(), "slo." + e.getKey()));
        }
      }
      PdSpec pd = top.containsKey("disaggregation") ? disaggregation(top.get("disaggregation")) : null;
      Map<String, SloTarget> modelSlo = new TreeMap<>();
      if (top.containsKey("model_slo")) {
        YamlNode n = top.get("model_slo");
        Map<String, YamlNode> models = mapping(n, "model_slo", null);
        for (Map.Entry<String, YamlNode> e : models.entrySet()) {
          modelSlo.put(e.getKey(), target(e.getValue(), "model_slo." + e.getKey()));
        }
      }
      io.blis.engine.lora.LoraSpec lora = top.containsKey("lora") ? LoraFile.read(this, top.get("lora"), null) : null;
      return new PolicyBundle(pools, router, admission, priority, scheduler, admissionLatency,
          routingLatency, refresh, slo, pd, modelSlo, lora, scaling);
    }

    /** A {@code {ttft_ms, e2e_ms}} target. */
    private SloTarget target(YamlNode n, String where) {
      Map<String, YamlNode> t = mapping(n, where, SLO);
      double ttft = t.containsKey("ttft_ms") ? number(t.get("ttft_ms"), "ttft_ms") : 0;
      double e2e = t.containsKey("e2e_ms") ? number(t.get("e2e_ms"), "e2e_ms") : 0;
      try {
        return new SloTarget(ttft, e2e);
      } catch (IllegalArgumentException ex) {
        throw error(n, where + ": " + ex.getMessage());
      }
    }

    private PdSpec disaggregation(YamlNode n) {
      Map<String, YamlNode> m = mapping(n, "disaggregation", PD);
      String decider = null;
      if (m.containsKey("decider")) {
        YamlNode d = m.get("decider");
        decider = string(d, "decider");
        try {
          io.blis.engine.disagg.Decider.parse(decider);
        } catch (IllegalArgumentException e) {
          throw error(d, "disaggregation.decider: " + e.getMessage().replace("PD decider ", ""));
        }
      }
      Integer threshold = optInt(m, "prefix_threshold");
      Double bandwidth = null;
      if (m.containsKey("transfer_bandwidth_gb_s")) {
        YamlNode b = m.get("transfer_bandwidth_gb_s");
        bandwidth = number(b, "transfer_bandwidth_gb_s");
        if (!(bandwidth >= io.blis.engine.disagg.Disaggregation.Transfer.MIN_BANDWIDTH_GBPS
            && bandwidth < io.blis.engine.disagg.Disaggregation.Transfer.MAX_BANDWIDTH_GBPS)) {
          throw error(b, "transfer_bandwidth_gb_s must be in "
              + io.blis.engine.disagg.Disaggregation.Transfer.BANDWIDTH_RANGE + ", got " + b.text());
        }
      }
      Long latencyUs = null;
      if (m.containsKey("transfer_base_latency_ms")) {
        YamlNode l = m.get("transfer_base_latency_ms");
        double ms = number(l, "transfer_base_latency_ms");
        if (!(ms >= 0 && ms * 1000 <= SimulatedTime.MAX_DELAY_US)) {
          throw error(l, "transfer_base_latency_ms must be in [0, 3600000] (one hour), got " + l.text());
        }
        latencyUs = Math.round(ms * 1000);
      }
      Boolean contention = null;
      if (m.containsKey("transfer_contention")) {
        YamlNode c = m.get("transfer_contention");
        if (c.token() != JsonToken.VALUE_TRUE && c.token() != JsonToken.VALUE_FALSE) {
          throw error(c, "transfer_contention must be true or false, got " + describe(c));
        }
        contention = c.token() == JsonToken.VALUE_TRUE;
      }
      PolicySpec prefill = policy(m.get("prefill_router"), "disaggregation.prefill_router", RouterProvider.class, true);
      PolicySpec decode = policy(m.get("decode_router"), "disaggregation.decode_router", RouterProvider.class, true);
      return new PdSpec(decider, threshold, bandwidth, latencyUs, contention, prefill, decode);
    }

    private List<PoolSpec> pools(YamlNode n, Map<String, PoolScaling> scaling) {
      if (n.list() == null) {
        throw error(n, "pools must be a list of pools (each '- name: ...'), got " + describe(n));
      }
      if (n.list().isEmpty()) {
        throw error(n, "pools is an empty list: give at least one pool ('- name: NAME' with"
            + " 'instances: N'), or leave out pools for one pool of --num-instances instances");
      }
      if (n.list().size() > MAX_POOLS) {
        throw error(n, "at most " + MAX_POOLS + " pools, got " + n.list().size());
      }
      List<PoolSpec> out = new ArrayList<>();
      Set<String> names = new java.util.HashSet<>();
      long total = 0;
      for (YamlNode item : n.list()) {
        Map<String, YamlNode> m = mapping(item, "a pool", POOL);
        if (!m.containsKey("name") || !m.containsKey("instances")) {
          throw error(item, "a pool needs a name and a number of instances");
        }
        String name = string(m.get("name"), "name");
        if (!names.add(name)) {
          throw error(m.get("name"), "duplicate pool name '" + name + "'");
        }
        long instances = whole(m.get("instances"), "instances", 1);
        total += instances;
        if (total > ClusterLimits.MAX_INSTANCES) {
          throw error(m.get("instances"), "at most " + ClusterLimits.MAX_INSTANCES
              + " instances in all pools (the cluster limit), got " + total);
        }
        try {
          out.add(new PoolSpec(name, (int) instances, optString(m, "model"), optString(m, "gpu"),
              optInt(m, "tp"), optString(m, "latency_model"), optString(m, "coefficients"),
              optInt(m, "max_num_seqs"), optInt(m, "max_num_batched_tokens"),
              optInt(m, "long_prefill_token_threshold"), optInt(m, "max_model_len"),
              optInt(m, "block_size"),
              m.containsKey("total_kv_blocks") ? whole(m.get("total_kv_blocks"), "total_kv_blocks", 1) : null,
              m.containsKey("gpu_memory_utilization")
                  ? number(m.get("gpu_memory_utilization"), "gpu_memory_utilization") : null,
              either(m, "pp", "pipeline_parallel_size"), either(m, "dp", "data_parallel_size"),
              expertParallel(m), optString(m, "role")));
          PoolScaling sc = poolScaling(m);
          if (sc != null) {
            scaling.put(name, sc);
          }
        } catch (YamlNode.Problem p) {
          throw p;
        } catch (IllegalArgumentException e) {
          throw error(item, "pool '" + name + "': " + e.getMessage());
        }
      }
      return out;
    }

    /** A pool's {@code min_replicas}, {@code max_replicas} and {@code autoscaler} keys, or null when it has none. */
    private PoolScaling poolScaling(Map<String, YamlNode> m) {
      if (!m.containsKey("min_replicas") && !m.containsKey("max_replicas") && !m.containsKey("autoscaler")) {
        return null;
      }
      Integer min = m.containsKey("min_replicas") ? (int) whole(m.get("min_replicas"), "min_replicas", 1) : null;
      Integer max = m.containsKey("max_replicas") ? (int) whole(m.get("max_replicas"), "max_replicas", 1) : null;
      if (max != null && max > ClusterLimits.MAX_INSTANCES) {
        throw error(m.get("max_replicas"), "max_replicas must be at most " + ClusterLimits.MAX_INSTANCES
            + " (the cluster limit), got " + max);
      }
      String name = null;
      Map<String, String> options = new LinkedHashMap<>();
      YamlNode a = m.get("autoscaler");
      if (a != null) {
        Map<String, YamlNode> am = mapping(a, "autoscaler", null);
        if (am.containsKey("policy")) {
          PolicySpec p = policy(a, "autoscaler", io.blis.api.AutoscalerProvider.class, false);
          name = p.name();
          options.putAll(p.params());
        } else {
          for (Map.Entry<String, YamlNode> e : am.entrySet()) {
            if (!e.getValue().isScalar() || e.getValue().isNull()) {
              throw error(e.getValue(), "autoscaler." + e.getKey() + " must be a single value, got "
                  + describe(e.getValue()));
            }
            options.put(e.getKey(), e.getValue().text());
          }
        }
      }
      return new PoolScaling(min, max, name, options);
    }

    private PolicySpec policy(YamlNode n, String section, Class<? extends NamedProvider> type,
        boolean scorers) {
      if (n == null) {
        return null;
      }
      Map<String, YamlNode> m = mapping(n, section, null);
      YamlNode nameNode = m.get("policy");
      if (nameNode == null) {
        throw error(n, section + " needs 'policy: NAME' (available: "
            + String.join(", ", Providers.names(type)) + ")");
      }
      String name = knownName(nameNode, string(nameNode, "policy"), section, type);
      Map<String, String> params = new LinkedHashMap<>();
      for (Map.Entry<String, YamlNode> e : m.entrySet()) {
        if (e.getKey().equals("policy")) {
          continue;
        }
        YamlNode v = e.getValue();
        if (scorers && e.getKey().equals("scorers") && v.map() != null) {
          List<String> parts = new ArrayList<>();
          for (Map.Entry<String, YamlNode> s : v.map().entrySet()) {
            if (!s.getValue().isScalar() || s.getValue().isNull()) {
              throw error(s.getValue(), "the weight of scorer " + s.getKey() + " must be a number");
            }
            parts.add(s.getKey() + ":" + s.getValue().text());
          }
          params.put("scorers", String.join(",", parts));
        } else if (!v.isScalar() || v.isNull()) {
          throw error(v, section + "." + e.getKey() + " must be a single value, got " + describe(v));
        } else {
          params.put(e.getKey(), v.text());
        }
      }
      return new PolicySpec(name, params);
    }

    /** A control-plane latency or refresh interval: whole microseconds in [0, {@link SimulatedTime#MAX_DELAY_US}]. */
    private long latency(YamlNode n, String key) {
      long v = whole(n, key, 0);
      if (v > SimulatedTime.MAX_DELAY_US) {
        throw error(n, key + " must be at most " + SimulatedTime.MAX_DELAY_US + " (one hour), got " + n.text());
      }
      return v;
    }

    private String optString(Map<String, YamlNode> m, String key) {
      return m.containsKey(key) ? string(m.get(key), key) : null;
    }

    /** The int under {@code key} or its vLLM name {@code vllmKey} (not both), or null. */
    private Integer either(Map<String, YamlNode> m, String key, String vllmKey) {
      if (m.containsKey(key) && m.containsKey(vllmKey)) {
        throw error(m.get(vllmKey), "give " + key + " or " + vllmKey + ", not both");
      }
      return optInt(m, m.containsKey(key) ? key : vllmKey);
    }

    /** {@code ep: N}, or {@code enable_expert_parallel: true} ({@link PoolSpec#EP_ENABLED}), or null. */
    private Integer expertParallel(Map<String, YamlNode> m) {
      YamlNode enable = m.get("enable_expert_parallel");
      if (enable == null) {
        return optInt(m, "ep");
      }
      if (enable.token() != JsonToken.VALUE_TRUE && enable.token() != JsonToken.VALUE_FALSE) {
        throw error(enable, "enable_expert_parallel must be true or false, got " + describe(enable));
      }
      if (m.containsKey("ep")) {
        throw error(enable, "give ep or enable_expert_parallel, not both");
      }
      return enable.token() == JsonToken.VALUE_TRUE ? PoolSpec.EP_ENABLED : 1;
    }

    private Integer optInt(Map<String, YamlNode> m, String key) {
      return m.containsKey(key) ? (int) whole(m.get(key), key, 0) : null;
    }
  }
}
