package io.blis.engine.lora;

import io.blis.latency.lora.LoraSizes;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * How the instances of a cluster serve LoRA adapters, as vLLM's {@code --enable-lora} options and
 * Go BLIS's {@code lora:} block set them.
 *
 * @param maxLoras adapters one instance holds on its GPUs at once, and the most distinct adapters
 *     one step may use (vLLM's {@code --max-loras}, Go BLIS's {@code adapter_capacity})
 * @param maxCpuLoras adapters one instance keeps in host memory, those on its GPUs included (vLLM's
 *     {@code --max-cpu-loras}; at least {@code maxLoras})
 * @param maxLoraRank the rank each GPU slot is sized for (vLLM's {@code --max-lora-rank}); an
 *     adapter of higher rank is refused
 * @param defaultRank the rank of an adapter the registry does not list (only used when the
 *     registry is empty: then any adapter name is served)
 * @param adapters the registry, by name; empty to serve any name at {@code defaultRank} on every
 *     linear module
 * @param diskGbPerS bandwidth of reading an adapter's checkpoint into host memory, GB/s
 * @param diskLatencyUs fixed time of reading one checkpoint, microseconds
 * @param hostToGpuGbPerS bandwidth of copying an adapter into a GPU slot, GB/s per GPU
 * @param copyLatencyUs fixed time of each tensor copied into a slot, microseconds
 * @param footprintBytesPerRank when not null, an adapter's bytes are this times its rank (Go
 *     BLIS's {@code footprint_bytes_per_rank}) instead of computed from the model's shapes
 * @param overheadTiers when not empty, the step overhead is Go BLIS's factor {@code 1 +
 *     k6/k7 x distinct adapters} of the tier of the batch's highest rank (rank to {k6, k7})
 *     instead of the kernel costs
 */
public record LoraSpec(int maxLoras, int maxCpuLoras, int maxLoraRank, int defaultRank,
    Map<String, Adapter> adapters, double diskGbPerS, double diskLatencyUs, double hostToGpuGbPerS,
    double copyLatencyUs, Double footprintBytesPerRank, SortedMap<Integer, double[]> overheadTiers) {

  /** vLLM's default {@code --max-lora-rank}. */
  public static final int DEFAULT_MAX_RANK = 16;
  /** Reading a checkpoint: 2 GB/s (a local NVMe drive; Go BLIS assumes the same). */
  public static final double DEFAULT_DISK_GB_PER_S = 2.0;
  /** Fixed time of reading one checkpoint: 1.5 ms (Go BLIS's default). */
  public static final double DEFAULT_DISK_LATENCY_US = 1500;
  /** Host-to-GPU copies: 25 GB/s per GPU, PCIe Gen5 x16 in practice (as the CPU KV tier assumes). */
  public static final double DEFAULT_HOST_TO_GPU_GB_PER_S = 25.0;
  /** Fixed time of one small synchronous host-to-device copy: 10 us. */
  public static final double DEFAULT_COPY_LATENCY_US = 10;
  /** Most adapters a registry or an instance's host memory may hold. */
  public static final int MAX_ADAPTERS = 1_000_000;
  /**
   * Largest {@code footprint_bytes_per_rank}: 1e10 bytes (10 GB) per unit of rank, far above any
   * model's (a rank-1 adapter of every linear module of a 405B dense model is under 0.1 GB).
   */
  public static final double MAX_FOOTPRINT_BYTES_PER_RANK = 1e10;

  /**
   * One adapter of the registry.
   *
   * @param name the name requests give it
   * @param rank its rank
   * @param targets the modules it adapts
   */
  public record Adapter(String name, int rank, Set<LoraSizes.Target> targets) {
    public Adapter {
      Objects.requireNonNull(name, "name");
      if (name.isEmpty()) {
        throw new IllegalArgumentException("a LoRA adapter needs a name");
      }
      if (rank < 1) {
        throw new IllegalArgumentException("LoRA adapter " + name + ": rank must be >= 1, got " + rank);
      }
      if (targets.isEmpty()) {
        throw new IllegalArgumentException("LoRA adapter " + name + ": give at least one target module");
      }
      targets = Collections.unmodifiableSet(java.util.EnumSet.copyOf(targets));
    }
  }

  public LoraSpec {
    if (maxLoras < 1 || maxLoras > MAX_ADAPTERS) {
      throw new IllegalArgumentException("max_loras must be in [1, " + MAX_ADAPTERS + "], got " + maxLoras);
    }
    if (maxCpuLoras < maxLoras || maxCpuLoras > MAX_ADAPTERS) {
      throw new IllegalArgumentException("max_cpu_loras must be in [max_loras (" + maxLoras + "), " + MAX_ADAPTERS
          + "], got " + maxCpuLoras);
    }
    if (maxLoraRank < 1) {
      throw new IllegalArgumentException("max_lora_rank must be >= 1, got " + maxLoraRank);
    }
    if (defaultRank < 1 || defaultRank > maxLoraRank) {
      throw new IllegalArgumentException("the default adapter rank must be in [1, max_lora_rank (" + maxLoraRank
          + ")], got " + defaultRank);
    }
    positive(diskGbPerS, "the checkpoint read bandwidth (GB/s)");
    positive(hostToGpuGbPerS, "the host-to-GPU bandwidth (GB/s)");
    nonNegative(diskLatencyUs, "the checkpoint read latency (us)");
    nonNegative(copyLatencyUs, "the copy latency (us)");
    if (footprintBytesPerRank != null && !(footprintBytesPerRank > 0
        && footprintBytesPerRank <= MAX_FOOTPRINT_BYTES_PER_RANK)) {
      throw new IllegalArgumentException("footprint_bytes_per_rank must be in (0, 1e10] bytes (10 GB per unit of"
          + " rank), got " + footprintBytesPerRank);
    }
    adapters = Collections.unmodifiableMap(new LinkedHashMap<>(adapters));
    if (adapters.size() > MAX_ADAPTERS) {
      throw new IllegalArgumentException("at most " + MAX_ADAPTERS + " LoRA adapters, got " + adapters.size());
    }
    for (Adapter a : adapters.values()) {
      if (a.rank() > maxLoraRank) {
        throw new IllegalArgumentException("LoRA adapter " + a.name() + ": rank " + a.rank() + " exceeds max_lora_rank "
            + maxLoraRank + " (vLLM refuses it); raise max_lora_rank");
      }
    }
    TreeMap<Integer, double[]> tiers = new TreeMap<>();
    for (Map.Entry<Integer, double[]> e : overheadTiers.entrySet()) {
      double[] k = e.getValue();
      if (e.getKey() < 1 || k.length != 2 || !(k[0] >= 0) || !Double.isFinite(k[0]) || !(k[1] > 0)
          || !Double.isFinite(k[1])) {
        throw new IllegalArgumentException("step_overhead_tiers: rank " + e.getKey()
            + " needs k6 >= 0 and k7 > 0, both finite");
      }
      tiers.put(e.getKey(), k.clone());
    }
    overheadTiers = Collections.unmodifiableSortedMap(tiers);
  }

  /** vLLM's defaults for {@code maxLoras} GPU slots: as many in host memory, rank 16, any adapter. */
  public static LoraSpec of(int maxLoras) {
    return new LoraSpec(maxLoras, maxLoras, DEFAULT_MAX_RANK, DEFAULT_MAX_RANK, Map.of(), DEFAULT_DISK_GB_PER_S,
        DEFAULT_DISK_LATENCY_US, DEFAULT_HOST_TO_GPU_GB_PER_S, DEFAULT_COPY_LATENCY_US, null,
        new TreeMap<>());
  }

  /** The adapter named {@code name}, or one of the default rank on every module when the registry is empty. */
  public Adapter adapter(String name) {
    Adapter a = adapters.get(name);
    if (a != null) {
      return a;
    }
    if (!adapters.isEmpty()) {
      throw new IllegalArgumentException("LoRA adapter '" + name + "' is not in the registry (" + adapters.size()
          + " adapters, for example " + adapters.keySet().iterator().next() + ")");
    }
    return new Adapter(name, defaultRank, LoraSizes.ALL_LINEAR);
  }

  /** A copy with another {@code max_loras} (and {@code max_cpu_loras} raised to it when below). */
  public LoraSpec withMaxLoras(int n) {
    return new LoraSpec(n, Math.max(n, maxCpuLoras == maxLoras ? n : maxCpuLoras), maxLoraRank, defaultRank,
        adapters, diskGbPerS, diskLatencyUs, hostToGpuGbPerS, copyLatencyUs, footprintBytesPerRank, overheadTiers);
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof LoraSpec l)) {
      return false;
    }
    if (l.overheadTiers.size() != overheadTiers.size()) {
      return false;
    }
    for (Map.Entry<Integer, double[]> e : overheadTiers.entrySet()) {
      if (!java.util.Arrays.equals(e.getValue(), l.overheadTiers.get(e.getKey()))) {
        return false;
      }
    }
    return maxLoras == l.maxLoras && maxCpuLoras == l.maxCpuLoras && maxLoraRank == l.maxLoraRank
        && defaultRank == l.defaultRank && adapters.equals(l.adapters) && diskGbPerS == l.diskGbPerS
        && diskLatencyUs == l.diskLatencyUs && hostToGpuGbPerS == l.hostToGpuGbPerS
        && copyLatencyUs == l.copyLatencyUs && Objects.equals(footprintBytesPerRank, l.footprintBytesPerRank);
  }

  @Override
  public int hashCode() {
    return Objects.hash(maxLoras, maxCpuLoras, maxLoraRank, defaultRank, adapters, diskGbPerS, diskLatencyUs,
        hostToGpuGbPerS, copyLatencyUs, footprintBytesPerRank, overheadTiers.keySet());
  }

  private static void positive(double v, String what) {
    if (!(v > 0) || !Double.isFinite(v)) {
      throw new IllegalArgumentException(what + " must be a finite number > 0, got " + v);
    }
  }

  private static void nonNegative(double v, String what) {
    if (!(v >= 0) || !Double.isFinite(v)) {
      throw new IllegalArgumentException(what + " must be a finite number >= 0, got " + v);
    }
  }
}
