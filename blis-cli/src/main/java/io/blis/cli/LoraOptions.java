package io.blis.cli;

import io.blis.engine.cluster.Cluster;
import io.blis.engine.cluster.LoraFile;
import io.blis.engine.lora.LoraSpec;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * The LoRA flags (a picocli mixin of the deployment flags): vLLM's ({@code --enable-lora}, {@code
 * --max-loras}, {@code --max-cpu-loras}, {@code --max-lora-rank}) and Go BLIS's ({@code
 * --lora-config} and the {@code --lora-*} scalars, which win over the file's values).
 */
final class LoraOptions {

  @Option(names = "--enable-lora", description = "Serve LoRA adapters (vLLM's flag): with no other LoRA flag, one GPU slot"
      + " per instance (vLLM's default --max-loras 1), rank 16, any adapter a request names.")
  boolean enableLora;

  @Option(names = "--lora-config", paramLabel = "FILE",
      description = "Go BLIS: YAML file with a top-level lora: block (slots, adapter registry, load costs; see docs/lora.md).")
  Path loraConfig;

  @Option(names = {"--max-loras", "--lora-adapter-capacity"}, paramLabel = "N",
      description = "LoRA adapters each instance holds on its GPUs, and the most one step may use (vLLM's --max-loras; Go"
          + " BLIS's --lora-adapter-capacity).")
  Integer maxLoras;

  @Option(names = "--max-cpu-loras", paramLabel = "N",
      description = "LoRA adapters each instance keeps in host memory, those on its GPUs included (default: --max-loras).")
  Integer maxCpuLoras;

  @Option(names = "--max-lora-rank", paramLabel = "N",
      description = "Rank each GPU slot is sized for (vLLM's; default 16); adapters of higher rank are refused.")
  Integer maxLoraRank;

  @Option(names = "--lora-load-base-latency-us", paramLabel = "US",
      description = "Go BLIS: fixed time of reading an adapter's checkpoint, microseconds (default 1500).")
  Double loadBaseLatencyUs;

  @Option(names = "--lora-load-bandwidth-bytes-us", paramLabel = "B",
      description = "Go BLIS: checkpoint read bandwidth, bytes per microsecond (default 2000, i.e. 2 GB/s).")
  Double loadBandwidthBytesUs;

  @Option(names = "--lora-footprint-bytes-per-rank", paramLabel = "B",
      description = "Go BLIS: an adapter's bytes per unit of rank, instead of computing them from the model's shapes.")
  Double footprintBytesPerRank;

  /** Whether any flag turns LoRA on. */
  boolean enabled() {
    return enableLora || loraConfig != null || maxLoras != null || maxCpuLoras != null || maxLoraRank != null
        || loadBaseLatencyUs != null || loadBandwidthBytesUs != null || footprintBytesPerRank != null;
  }

  private LoraSpec spec;

  void validate(CommandLine cl) {
    Map<String, Integer> counts = new TreeMap<>();
    counts.put("--max-loras", maxLoras);
    counts.put("--max-cpu-loras", maxCpuLoras);
    counts.put("--max-lora-rank", maxLoraRank);
    counts.values().removeIf(java.util.Objects::isNull);
    for (Map.Entry<String, Integer> e : counts.entrySet()) {
      DeploymentOptions.require(cl, e.getValue() >= 1 && e.getValue() <= LoraSpec.MAX_ADAPTERS,
          e.getKey() + " must be in [1, " + LoraSpec.MAX_ADAPTERS + "], got " + e.getValue());
    }
    DeploymentOptions.require(cl, loadBaseLatencyUs == null || (loadBaseLatencyUs >= 0 && loadBaseLatencyUs <= 3.6e9),
        "--lora-load-base-latency-us must be in [0, 3600000000] (one hour), got " + loadBaseLatencyUs);
    DeploymentOptions.require(cl, loadBandwidthBytesUs == null || (loadBandwidthBytesUs > 0
        && Double.isFinite(loadBandwidthBytesUs)), "--lora-load-bandwidth-bytes-us must be > 0, got " + loadBandwidthBytesUs);
    DeploymentOptions.require(cl, footprintBytesPerRank == null || (footprintBytesPerRank > 0
        && footprintBytesPerRank <= LoraSpec.MAX_FOOTPRINT_BYTES_PER_RANK),
        "--lora-footprint-bytes-per-rank must be in (0, 1e10] bytes (10 GB per unit of rank), got "
        + footprintBytesPerRank);
    if (!enabled()) {
      spec = null;
      return;
    }
    LoraSpec base;
    if (loraConfig != null) {
      Cli.requireFile("--lora-config", loraConfig);
      base = LoraFile.load(loraConfig, maxLoras);
    } else {
      base = LoraSpec.of(maxLoras != null ? maxLoras : 1);
    }
    int slots = base.maxLoras();
    int cpu = maxCpuLoras != null ? maxCpuLoras : base.maxCpuLoras();
    DeploymentOptions.require(cl, cpu >= slots, "--max-cpu-loras (" + cpu + ") must be at least --max-loras (" + slots
        + "), as vLLM requires");
    int rank = maxLoraRank != null ? maxLoraRank : base.maxLoraRank();
    // without a file adapters take the slot rank; a file's default rank is capped by a lower --max-lora-rank
    int defaultRank = loraConfig == null ? rank : Math.min(base.defaultRank(), rank);
    try {
      spec = new LoraSpec(slots, cpu, rank, defaultRank, base.adapters(),
          loadBandwidthBytesUs != null ? loadBandwidthBytesUs / 1e3 : base.diskGbPerS(),
          loadBaseLatencyUs != null ? loadBaseLatencyUs : base.diskLatencyUs(), base.hostToGpuGbPerS(),
          base.copyLatencyUs(), footprintBytesPerRank != null ? footprintBytesPerRank : base.footprintBytesPerRank(),
          new java.util.TreeMap<>(base.overheadTiers()));
    } catch (IllegalArgumentException e) {
      DeploymentOptions.require(cl, false, (loraConfig != null ? loraConfig + ": " : "") + e.getMessage());
    }
  }

  /** The adapters' settings (after {@link #validate}), or null when LoRA is off. */
  LoraSpec spec() {
    return spec;
  }

  void apply(Cluster.Builder cb) {
    if (spec != null) {
      cb.lora(spec);
    }
  }
}
