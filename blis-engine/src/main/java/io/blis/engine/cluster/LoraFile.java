package io.blis.engine.cluster;

import com.fasterxml.jackson.core.JsonToken;
import io.blis.engine.lora.LoraSpec;
import io.blis.latency.lora.LoraSizes;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Reads a LoRA configuration: a YAML file whose top-level {@code lora:} block is Go BLIS's
 * ({@code --lora-config}), with vLLM's names beside Go BLIS's:
 *
 * <pre>
 * lora:
 *   max_loras: 4                 # or adapter_capacity (Go BLIS): GPU slots per instance
 *   max_cpu_loras: 16            # adapters kept in host memory (default: max_loras)
 *   max_lora_rank: 16            # rank each slot is sized for (default 16)
 *   default_rank: 8              # rank of adapters when the registry is empty (default: max_lora_rank)
 *   adapters:                    # the registry; without it any adapter name is served
 *     - {id: sql, rank: 8, target_modules: [q_proj, v_proj]}   # default: every linear module
 *     - {id: chat, rank: 16}
 *   checkpoint_read_gb_s: 2.0    # or load_bandwidth_bytes_us (Go BLIS, bytes per microsecond)
 *   checkpoint_read_latency_ms: 1.5   # or load_base_latency_us (Go BLIS)
 *   host_to_gpu_gb_s: 25
 *   copy_latency_us: 10
 *   footprint_bytes_per_rank: 2.0e6   # Go BLIS: adapter bytes = this x rank, instead of the model's shapes
 *   step_overhead_tiers:              # Go BLIS: step x (1 + k6/k7 x distinct adapters) instead of kernel costs
 *     16: {k6: 0.035, k7: 1.0}
 * </pre>
 */
public final class LoraFile {

  private static final List<String> KEYS = List.of("max_loras", "adapter_capacity", "max_cpu_loras", "max_lora_rank",
      "default_rank", "adapters", "checkpoint_read_gb_s", "load_bandwidth_bytes_us", "checkpoint_read_latency_ms",
      "load_base_latency_us", "host_to_gpu_gb_s", "copy_latency_us", "footprint_bytes_per_rank",
      "step_overhead_tiers");
  private static final List<String> ADAPTER = List.of("id", "name", "rank", "target_modules");
  private static final List<String> TIER = List.of("k6", "k7");

  private LoraFile() {}

  /**
   * The configuration in {@code file}; {@code maxLorasOverride} (when not null) replaces its slot
   * count, which the file may then leave out.
   *
   * @throws IllegalArgumentException naming the file, line and key of a bad value
   */
  public static LoraSpec load(Path file, Integer maxLorasOverride) {
    NodeReader r = new NodeReader(file.toString());
    return read(r, r.topBlock(file, "LoRA configuration", "lora"), maxLorasOverride);
  }

  static LoraSpec read(NodeReader r, YamlNode n, Integer maxLorasOverride) {
    Map<String, YamlNode> m = r.mapping(n, "lora", KEYS);
    if (m.containsKey("max_loras") && m.containsKey("adapter_capacity")) {
      throw r.error(m.get("adapter_capacity"), "give max_loras or adapter_capacity (the same thing), not both");
    }
    YamlNode capacity = m.containsKey("max_loras") ? m.get("max_loras") : m.get("adapter_capacity");
    int maxLoras;
    if (maxLorasOverride != null) {
      maxLoras = maxLorasOverride;
    } else if (capacity == null) {
      throw r.error(n, "lora: give max_loras (adapters each instance holds on its GPUs)");
    } else {
      maxLoras = (int) r.whole(capacity, "max_loras", 1);
    }
    int maxRank = m.containsKey("max_lora_rank") ? (int) r.whole(m.get("max_lora_rank"), "max_lora_rank", 1)
        : LoraSpec.DEFAULT_MAX_RANK;
    int cpu = m.containsKey("max_cpu_loras") ? (int) r.whole(m.get("max_cpu_loras"), "max_cpu_loras", 1) : maxLoras;
    int defaultRank = m.containsKey("default_rank") ? (int) r.whole(m.get("default_rank"), "default_rank", 1)
        : maxRank;
    Map<String, LoraSpec.Adapter> adapters = new LinkedHashMap<>();
    if (m.containsKey("adapters")) {
      YamlNode list = m.get("adapters");
      if (list.list() == null) {
        throw r.error(list, "adapters must be a list of {id, rank, target_modules}, got " + NodeReader.describe(list));
      }
      for (YamlNode a : list.list()) {
        LoraSpec.Adapter adapter = adapter(r, a);
        if (adapters.put(adapter.name(), adapter) != null) {
          throw r.error(a, "adapters: duplicate adapter id '" + adapter.name() + "'");
        }
      }
    }
    double diskGbS = LoraSpec.DEFAULT_DISK_GB_PER_S;
    if (m.containsKey("checkpoint_read_gb_s") && m.containsKey("load_bandwidth_bytes_us")) {
      throw r.error(m.get("load_bandwidth_bytes_us"), "give checkpoint_read_gb_s or load_bandwidth_bytes_us, not both");
    }
    if (m.containsKey("checkpoint_read_gb_s")) {
      diskGbS = positive(r, m.get("checkpoint_read_gb_s"), "checkpoint_read_gb_s");
    } else if (m.containsKey("load_bandwidth_bytes_us")) {
      diskGbS = positive(r, m.get("load_bandwidth_bytes_us"), "load_bandwidth_bytes_us") / 1e3; // bytes/us = MB/s
    }
    double diskLatencyUs = LoraSpec.DEFAULT_DISK_LATENCY_US;
    if (m.containsKey("checkpoint_read_latency_ms") && m.containsKey("load_base_latency_us")) {
      throw r.error(m.get("load_base_latency_us"), "give checkpoint_read_latency_ms or load_base_latency_us, not both");
    }
    if (m.containsKey("checkpoint_read_latency_ms")) {
      diskLatencyUs = nonNegative(r, m.get("checkpoint_read_latency_ms"), "checkpoint_read_latency_ms") * 1e3;
    } else if (m.containsKey("load_base_latency_us")) {
      diskLatencyUs = nonNegative(r, m.get("load_base_latency_us"), "load_base_latency_us");
    }
    double h2d = m.containsKey("host_to_gpu_gb_s") ? positive(r, m.get("host_to_gpu_gb_s"), "host_to_gpu_gb_s")
        : LoraSpec.DEFAULT_HOST_TO_GPU_GB_PER_S;
    double copyUs = m.containsKey("copy_latency_us") ? nonNegative(r, m.get("copy_latency_us"), "copy_latency_us")
        : LoraSpec.DEFAULT_COPY_LATENCY_US;
    Double footprint = m.containsKey("footprint_bytes_per_rank")
        ? positive(r, m.get("footprint_bytes_per_rank"), "footprint_bytes_per_rank") : null;
    if (footprint != null && footprint > LoraSpec.MAX_FOOTPRINT_BYTES_PER_RANK) {
      throw r.error(m.get("footprint_bytes_per_rank"), "footprint_bytes_per_rank must be in (0, 1e10] bytes (10 GB"
          + " per unit of rank), got " + m.get("footprint_bytes_per_rank").text());
    }
    TreeMap<Integer, double[]> tiers = new TreeMap<>();
    if (m.containsKey("step_overhead_tiers")) {
      YamlNode t = m.get("step_overhead_tiers");
      for (Map.Entry<String, YamlNode> e : r.mapping(t, "step_overhead_tiers", null).entrySet()) {
        int rank;
        try {
          rank = Integer.parseInt(e.getKey().trim());
        } catch (NumberFormatException ex) {
          throw r.error(e.getValue(), "step_overhead_tiers: keys are ranks (whole numbers), got '" + e.getKey() + "'");
        }
        Map<String, YamlNode> k = r.mapping(e.getValue(), "step_overhead_tiers." + rank, TIER);
        if (!k.containsKey("k6") || !k.containsKey("k7")) {
          throw r.error(e.getValue(), "step_overhead_tiers." + rank + ": give k6 and k7");
        }
        double k6 = nonNegative(r, k.get("k6"), "k6");
        double k7 = positive(r, k.get("k7"), "k7");
        if (rank < 1) {
          throw r.error(e.getValue(), "step_overhead_tiers: ranks must be >= 1, got " + rank);
        }
        tiers.put(rank, new double[] {k6, k7});
      }
    }
    try {
      return new LoraSpec(maxLoras, cpu, maxRank, defaultRank, adapters,
          diskGbS, diskLatencyUs, h2d, copyUs, footprint, tiers);
    } catch (IllegalArgumentException e) {
      throw r.error(n, "lora: " + e.getMessage());
    }
  }

  private static LoraSpec.Adapter adapter(NodeReader r, YamlNode a) {
    Map<String, YamlNode> f = r.mapping(a, "an adapter", ADAPTER);
    if (f.containsKey("id") == f.containsKey("name")) {
      throw r.error(a, "adapters: give each adapter an id (or a name), once");
    }
    YamlNode idNode = f.containsKey("id") ? f.get("id") : f.get("name");
    String id = idNode.token() == JsonToken.VALUE_STRING ? idNode.text() : null;
    if (id == null || id.isBlank()) {
      throw r.error(idNode, "adapters: id must be a name, got " + NodeReader.describe(idNode));
    }
    if (!f.containsKey("rank")) {
      throw r.error(a, "adapters: adapter '" + id + "' needs a rank");
    }
    int rank = (int) r.whole(f.get("rank"), "rank", 1);
    Set<LoraSizes.Target> targets = EnumSet.noneOf(LoraSizes.Target.class);
    if (f.containsKey("target_modules")) {
      YamlNode t = f.get("target_modules");
      if (t.token() == JsonToken.VALUE_STRING && t.text().equals("all-linear")) {
        targets = LoraSizes.ALL_LINEAR;
      } else if (t.list() == null || t.list().isEmpty()) {
        throw r.error(t, "adapters: target_modules of '" + id + "' must be all-linear or a list such as [q_proj, v_proj]");
      } else {
        for (YamlNode x : t.list()) {
          try {
            targets.add(LoraSizes.Target.parse(r.string(x, "target_modules")));
          } catch (IllegalArgumentException e) {
            throw r.error(x, "adapters: " + id + ": " + e.getMessage());
          }
        }
      }
    } else {
      targets = LoraSizes.ALL_LINEAR;
    }
    try {
      return new LoraSpec.Adapter(id, rank, targets);
    } catch (IllegalArgumentException e) {
      throw r.error(a, e.getMessage());
    }
  }

  private static double positive(NodeReader r, YamlNode n, String key) {
    double v = r.number(n, key);
    if (!(v > 0)) {
      throw r.error(n, key + " must be > 0, got " + n.text());
    }
    return v;
  }

  private static double nonNegative(NodeReader r, YamlNode n, String key) {
    double v = r.number(n, key);
    if (!(v >= 0)) {
      throw r.error(n, key + " must be >= 0, got " + n.text());
    }
    return v;
  }

  /** {@code spec} as a {@code lora:} block that {@link #read} reads back to an equal spec. */
  static String toYaml(LoraSpec spec) {
    StringBuilder y = new StringBuilder("lora:\n");
    y.append("  max_loras: ").append(spec.maxLoras()).append('\n');
    y.append("  max_cpu_loras: ").append(spec.maxCpuLoras()).append('\n');
    y.append("  max_lora_rank: ").append(spec.maxLoraRank()).append('\n');
    y.append("  default_rank: ").append(spec.defaultRank()).append('\n');
    if (!spec.adapters().isEmpty()) {
      y.append("  adapters:\n");
      for (LoraSpec.Adapter a : spec.adapters().values()) {
        y.append("    - {id: ").append(io.blis.workload.StrictYaml.quote(a.name())).append(", rank: ").append(a.rank());
        if (!a.targets().equals(LoraSizes.ALL_LINEAR)) {
          y.append(", target_modules: [").append(String.join(", ", a.targets().stream()
              .map(LoraSizes.Target::peftName).toList())).append(']');
        }
        y.append("}\n");
      }
    }
    y.append("  checkpoint_read_gb_s: ").append(spec.diskGbPerS()).append('\n');
    y.append("  checkpoint_read_latency_ms: ").append(spec.diskLatencyUs() / 1e3).append('\n');
    y.append("  host_to_gpu_gb_s: ").append(spec.hostToGpuGbPerS()).append('\n');
    y.append("  copy_latency_us: ").append(spec.copyLatencyUs()).append('\n');
    if (spec.footprintBytesPerRank() != null) {
      y.append("  footprint_bytes_per_rank: ").append(spec.footprintBytesPerRank()).append('\n');
    }
    if (!spec.overheadTiers().isEmpty()) {
      y.append("  step_overhead_tiers:\n");
      spec.overheadTiers().forEach((rank, k) -> y.append("    ").append(rank).append(": {k6: ").append(k[0])
          .append(", k7: ").append(k[1]).append("}\n"));
    }
    return y.toString();
  }
}
