package io.blis.engine.cluster;

import com.fasterxml.jackson.core.JsonToken;
import io.blis.kvcache.OffloadTier;
import io.blis.workload.trace.TraceV2Writer;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * Reads Go BLIS's {@code --kv-offload-config} file, a top-level {@code kv_offload:} block in
 * vLLM's offloading connector's terms: a CPU tier of {@code cpu_bytes_to_use} bytes (the same tier
 * as {@code --kv-offloading-size-gib}) holding computed prompt blocks of the GPU's block size,
 * least recently used first out, and behind it the file-system tiers of {@code secondary_tiers}
 * (every block stored in the CPU tier written to each; a prefix found only there read back into
 * the CPU tier before the GPU loads it).
 *
 * <pre>
 * kv_offload:
 *   cpu_bytes_to_use: 17179869184   # required
 *   block_size: 16                  # optional: the GPU's block size (or blocks_per_chunk: 1)
 *   eviction_policy: lru            # lru only
 *   offload_prompt_only: true       # vLLM's default; false offloads generated blocks too
 *   tokens_per_hash: 16             # optional: the GPU's block size
 *   self_describing_kv_events: false
 *   store_threshold: 0              # 0 or 1
 *   secondary_tiers:
 *     - type: fs                    # the only type
 *       root_dir: /mnt/kv-cache     # required (not read)
 *       n_read_threads: 16          # default 16
 *       n_write_threads: 16         # default 16
 *       locality: LOCAL             # LOCAL or REMOTE, optional
 *       direct_io: true             # required; false is timed as true (below)
 *       device_class: nvme_gen4     # nvme_gen4, nvme_gen3, sata_ssd, cpu_dram or s3
 *       # read_bandwidth: 7000.0    # bytes per microsecond: all three instead of a device class,
 *       # write_bandwidth: 5000.0   #   or any of them beside one, replacing that figure of the
 *       # base_latency: 80.0        #   class alone (microseconds)
 * </pre>
 *
 * <p>A device class's figures are its direct-I/O figures, and buffered I/O through the page cache
 * is not modelled: {@code direct_io: false} with a device class giving a figure has no effect, and
 * the file's reader says so in one warning line ({@link Config#notices()}). One of {@code
 * read_bandwidth} and {@code write_bandwidth} beside a device class replaces that direction's
 * figure alone, as in Go BLIS; a note names the class's figure the other direction keeps.
 *
 * <p>{@code offload_prompt_only: false} offloads full blocks of generated tokens too: they take
 * CPU slots and tier writes, and no later request reloads them, since a simulated request's
 * generated token ids are not known (nor matched by the GPU's prefix cache).
 *
 * <p>What it does not model is refused in one line naming the file, line and key, never dropped:
 * object-store and peer tiers, offload blocks larger than the GPU's, ARC eviction.
 */
public final class KvOffloadFile {

  /**
   * What a file gives.
   *
   * @param cpuBytes the CPU tier's size, bytes summed over the tensor-parallel ranks
   * @param tiers the secondary tiers behind it, in lookup order (empty for none)
   */
  public record Config(double cpuBytes, List<OffloadTier> tiers, boolean promptOnly, List<String> resolved,
      List<String> notices) {
    /**
     * @param promptOnly vLLM's {@code offload_prompt_only}: false offloads full blocks of generated
     *     tokens too
     * @param resolved the configuration with every default filled in, as lines of a {@code
     *     kv_offload:} block (without {@code per_block_bytes}), for a trace header
     * @param notices lines for the user about settings of the file that have no effect ({@code
     *     "warning: FILE, line L, column C: ..."}) or that keep a default ({@code "note: ..."}); none
     *     for a trace header's block
     */
    public Config {
      tiers = List.copyOf(tiers);
      resolved = List.copyOf(resolved);
      notices = List.copyOf(notices);
    }

    /** Whether {@code other} simulates the same tiers (same sizes, threads and speeds). */
    public boolean sameTiers(Config other) {
      return cpuBytes == other.cpuBytes && tiers.equals(other.tiers) && promptOnly == other.promptOnly;
    }

    /**
     * The {@code kv_offload:} block Go BLIS records in a trace header: the configuration with its
     * defaults filled in and the bytes of one GPU block ({@code perBlockBytes}) it was run with.
     */
    public String headerYaml(long perBlockBytes) {
      StringBuilder b = new StringBuilder("kv_offload:\n");
      for (int i = 0; i < resolved.size(); i++) {
        b.append(resolved.get(i)).append('\n');
        if (i == 0) {
          b.append("    per_block_bytes: ").append(perBlockBytes).append('\n');
        }
      }
      return b.toString();
    }
  }

  /**
   * What a trace header records of the offload tiers.
   *
   * @param config the header's {@code kv_offload} block, null when it has none
   * @param mode the header's {@code mode} ({@code real} for an observed server), empty when absent
   */
  public record TraceOffload(Config config, String mode) {}

  /**
   * The storage devices a tier's {@code device_class} names: read and write bandwidth in bytes per
   * microsecond, and the fixed latency of a transfer in microseconds (Go BLIS's {@code
   * kv_offload_devices} figures).
   */
  private static final Map<String, double[]> DEVICE_CLASSES = devices();

  private static final List<String> KEYS = List.of("cpu_bytes_to_use", "block_size", "blocks_per_chunk",
      "eviction_policy", "offload_prompt_only", "self_describing_kv_events", "tokens_per_hash", "store_threshold",
      "secondary_tiers");
  private static final List<String> TIER_KEYS = List.of("type", "root_dir", "n_read_threads", "n_write_threads",
      "locality", "enable_kv_events", "direct_io", "device_class", "read_bandwidth", "write_bandwidth",
      "base_latency");
  /** Keys a trace header's resolved block adds. */
  private static final List<String> HEADER_KEYS = List.of("per_block_bytes");
  private static final List<String> HEADER_TIER_KEYS = List.of("saturation_queue_depth", "single_transfer_fraction",
      "latency_jitter_stddev");
  /** vLLM's thread pool default per direction. */
  private static final int DEFAULT_THREADS = 16;

  private KvOffloadFile() {}

  private static Map<String, double[]> devices() {
    Map<String, double[]> m = new java.util.LinkedHashMap<>();
    m.put("nvme_gen4", new double[] {7.0e3, 5.0e3, 80.0});
    m.put("nvme_gen3", new double[] {3.5e3, 3.0e3, 100.0});
    m.put("sata_ssd", new double[] {5.5e2, 5.0e2, 150.0});
    m.put("cpu_dram", new double[] {2.0e4, 2.0e4, 1.0});
    m.put("s3", new double[] {1.0e3, 1.0e3, 30000.0});
    return java.util.Collections.unmodifiableMap(m);
  }

  /**
   * The CPU tier's size in bytes (summed over the tensor-parallel ranks, as vLLM's {@code
   * --kv-offloading-size}) that {@code file} gives, checked against the GPU's {@code blockSize}.
   *
   * @throws IllegalArgumentException naming the file, line and key of anything this project
   *     cannot simulate as written
   */
  public static double cpuBytes(Path file, int blockSize) {
    return read(file, blockSize).cpuBytes();
  }

  /**
   * The CPU tier and the secondary tiers {@code file} gives, checked against the GPU's {@code
   * blockSize}.
   *
   * @throws IllegalArgumentException naming the file, line and key of anything this project
   *     cannot simulate as written
   */
  public static Config read(Path file, int blockSize) {
    NodeReader r = new NodeReader(file.toString());
    return read(r, r.topBlock(file, "KV offload configuration", "kv_offload"), blockSize, false);
  }

  /**
   * The {@code kv_offload} block a TraceV2 header records (Go BLIS's {@code run --trace-output}
   * writes it, with its defaults filled in), and the header's mode.
   *
   * @throws IllegalArgumentException naming the file, line and key of anything this project
   *     cannot simulate as recorded
   */
  public static TraceOffload fromTraceHeader(Path header, int blockSize) {
    NodeReader r = new NodeReader(header.toString());
    YamlNode root = YamlNode.document(io.blis.latency.coeff.InputTrees.readText(header, "trace header"),
        header.toString());
    if (root == null || root.map() == null) {
      return new TraceOffload(null, "");
    }
    YamlNode mode = root.map().get("mode");
    String m = mode != null && mode.isScalar() && !mode.isNull() ? mode.text() : "";
    YamlNode block = root.map().get("kv_offload");
    return new TraceOffload(block == null || block.isNull() ? null : read(r, block, blockSize, true), m);
  }

  private static Config read(NodeReader r, YamlNode block, int blockSize, boolean header) {
    Map<String, YamlNode> m = r.mapping(block, "kv_offload", header ? concat(KEYS, HEADER_KEYS) : KEYS);
    if (m.containsKey("per_block_bytes")) {
      r.whole(m.get("per_block_bytes"), "per_block_bytes", 0); // derived from the model: recomputed here
    }
    if (!m.containsKey("cpu_bytes_to_use")) {
      throw r.error(block, "kv_offload: give cpu_bytes_to_use (bytes of host memory for the CPU tier)");
    }
    double bytes = r.number(m.get("cpu_bytes_to_use"), "cpu_bytes_to_use");
    if (!(bytes >= 0) || Double.isInfinite(bytes)) {
      throw r.error(m.get("cpu_bytes_to_use"), "cpu_bytes_to_use must be a finite number of bytes >= 0");
    }
    if (!header && m.containsKey("block_size") && m.containsKey("blocks_per_chunk")) { // a header records both
      throw r.error(m.get("blocks_per_chunk"), "give block_size or blocks_per_chunk, not both");
    }
    if (m.containsKey("block_size") && r.whole(m.get("block_size"), "block_size", 1) != blockSize) {
      throw r.error(m.get("block_size"), "block_size other than the GPU's (" + blockSize + " tokens) is not modelled"
          + " here: the CPU tier holds the GPU's blocks");
    }
    if (m.containsKey("blocks_per_chunk") && r.whole(m.get("blocks_per_chunk"), "blocks_per_chunk", 1) != 1) {
      throw r.error(m.get("blocks_per_chunk"), "blocks_per_chunk other than 1 is not modelled here: the CPU tier holds"
          + " the GPU's blocks");
    }
    if (m.containsKey("tokens_per_hash") && r.whole(m.get("tokens_per_hash"), "tokens_per_hash", 1) != blockSize) {
      throw r.error(m.get("tokens_per_hash"), "tokens_per_hash other than the GPU's block size (" + blockSize
          + ") is not modelled here");
    }
    if (m.containsKey("eviction_policy") && !r.string(m.get("eviction_policy"), "eviction_policy").equals("lru")) {
      throw r.error(m.get("eviction_policy"), "eviction_policy: only lru is modelled here (got '"
          + m.get("eviction_policy").text() + "')");
    }
    boolean promptOnly = !m.containsKey("offload_prompt_only") || flag(r, m.get("offload_prompt_only"),
        "offload_prompt_only");
    if (m.containsKey("self_describing_kv_events")) {
      flag(r, m.get("self_describing_kv_events"), "self_describing_kv_events"); // events, not timing: no effect
    }
    if (m.containsKey("store_threshold") && r.whole(m.get("store_threshold"), "store_threshold", 0) >= 2) {
      throw r.error(m.get("store_threshold"), "store_threshold must be 0 or 1 (vLLM refuses 2 and more)");
    }
    List<String> resolved = new java.util.ArrayList<>(List.of(
        "    cpu_bytes_to_use: " + TraceV2Writer.number(bytes),
        "    block_size: " + blockSize,
        "    blocks_per_chunk: 1",
        "    tokens_per_hash: " + blockSize,
        "    eviction_policy: lru",
        "    offload_prompt_only: " + promptOnly,
        "    self_describing_kv_events: " + (m.containsKey("self_describing_kv_events")
            && m.get("self_describing_kv_events").token() == JsonToken.VALUE_TRUE)));
    List<OffloadTier> tiers = new java.util.ArrayList<>();
    List<String> notices = new java.util.ArrayList<>();
    YamlNode list = m.get("secondary_tiers");
    if (list != null && !list.isNull()) {
      if (list.list() == null) {
        throw r.error(list, "secondary_tiers must be a list of tiers, got " + NodeReader.describe(list));
      }
      if (!list.list().isEmpty()) {
        resolved.add("    secondary_tiers:");
      }
      for (int i = 0; i < list.list().size(); i++) {
        tiers.add(tier(r, list.list().get(i), "secondary_tiers[" + i + "]", header, resolved,
            header ? new java.util.ArrayList<>() : notices));
      }
    }
    if (!tiers.isEmpty() && bytes < 1) {
      throw r.error(m.get("cpu_bytes_to_use"), "cpu_bytes_to_use must be above 0 with secondary_tiers: blocks reach"
          + " them through the CPU tier");
    }
    return new Config(bytes, tiers, promptOnly, resolved, notices);
  }

  private static List<String> concat(List<String> a, List<String> b) {
    List<String> out = new java.util.ArrayList<>(a);
    out.addAll(b);
    return out;
  }

  private static OffloadTier tier(NodeReader r, YamlNode n, String what, boolean header, List<String> resolved,
      List<String> notices) {
    Map<String, YamlNode> t = r.mapping(n, what, header ? concat(TIER_KEYS, HEADER_TIER_KEYS) : TIER_KEYS);
    if (!t.containsKey("type")) {
      throw r.error(n, what + ": give type (fs)");
    }
    String type = r.string(t.get("type"), "type");
    if (!type.equals("fs")) {
      throw r.error(t.get("type"), what + ".type '" + type + "' is not modelled here; the one tier type is fs (a"
          + " file system: local NVMe or a network mount)");
    }
    if (!t.containsKey("root_dir") || r.string(t.get("root_dir"), "root_dir").isEmpty()) {
      throw r.error(n, what + ": give root_dir (the tier's directory)");
    }
    int readThreads = t.containsKey("n_read_threads")
        ? (int) Math.min(Integer.MAX_VALUE, r.whole(t.get("n_read_threads"), "n_read_threads", 1)) : DEFAULT_THREADS;
    int writeThreads = t.containsKey("n_write_threads")
        ? (int) Math.min(Integer.MAX_VALUE, r.whole(t.get("n_write_threads"), "n_write_threads", 1)) : DEFAULT_THREADS;
    if (t.containsKey("locality")) {
      String loc = r.string(t.get("locality"), "locality");
      if (!loc.equals("LOCAL") && !loc.equals("REMOTE")) {
        throw r.error(t.get("locality"), what + ".locality must be LOCAL or REMOTE, got '" + loc + "'");
      }
    }
    if (t.containsKey("enable_kv_events")) {
      flag(r, t.get("enable_kv_events"), "enable_kv_events"); // events, not timing: no effect
    }
    if (!t.containsKey("direct_io")) {
      throw r.error(n, what + ": give direct_io (true or false): direct and buffered I/O are different devices");
    }
    boolean directIo = flag(r, t.get("direct_io"), "direct_io");
    double[] device = null;
    if (t.containsKey("device_class")) {
      String name = r.string(t.get("device_class"), "device_class");
      device = DEVICE_CLASSES.get(name);
      if (device == null) {
        throw r.error(t.get("device_class"), what + ".device_class '" + name + "' is not known; known: "
            + String.join(", ", DEVICE_CLASSES.keySet()));
      }
    } else if (!t.containsKey("read_bandwidth") || !t.containsKey("write_bandwidth") || !t.containsKey("base_latency")) {
      throw r.error(n, what + ": give device_class, or read_bandwidth, write_bandwidth (bytes per microsecond) and"
          + " base_latency (microseconds)");
    }
    double read = t.containsKey("read_bandwidth") ? positive(r, t.get("read_bandwidth"), "read_bandwidth") : device[0];
    double write = t.containsKey("write_bandwidth") ? positive(r, t.get("write_bandwidth"), "write_bandwidth")
        : device[1];
    double base = device == null ? 0 : device[2];
    if (device != null) {
      String cls = r.string(t.get("device_class"), "device_class");
      List<String> fromClass = new java.util.ArrayList<>();
      for (String k : List.of("read_bandwidth", "write_bandwidth", "base_latency")) {
        if (!t.containsKey(k)) {
          fromClass.add(k);
        }
      }
      if (!directIo && !fromClass.isEmpty()) {
        String figures = fromClass.size() == 1 ? fromClass.get(0)
            : String.join(", ", fromClass.subList(0, fromClass.size() - 1)) + " and " + fromClass.get(fromClass.size() - 1);
        notices.add("warning: " + at(r, t.get("direct_io")) + what + ".direct_io: false has no effect: the tier"
            + " takes its " + figures + " from device_class " + cls + ", whose figures are for direct I/O (buffered"
            + " I/O through the page cache is not modelled); give read_bandwidth, write_bandwidth and base_latency"
            + " measured with buffered I/O to time it so");
      }
      if (t.containsKey("read_bandwidth") != t.containsKey("write_bandwidth")) {
        boolean reads = t.containsKey("read_bandwidth");
        notices.add("note: " + at(r, t.get(reads ? "read_bandwidth" : "write_bandwidth")) + what + "."
            + (reads ? "read_bandwidth" : "write_bandwidth") + " replaces device_class " + cls + "'s "
            + (reads ? "reads" : "writes") + " alone: " + (reads ? "writes" : "reads") + " keep its "
            + TraceV2Writer.number(reads ? write : read) + " bytes per microsecond (as in Go BLIS); give "
            + (reads ? "write_bandwidth" : "read_bandwidth") + " too to set both");
      }
    }
    if (t.containsKey("base_latency")) {
      base = r.number(t.get("base_latency"), "base_latency");
      if (!(base >= 0) || Double.isInfinite(base)) {
        throw r.error(t.get("base_latency"), "base_latency must be a finite number of microseconds >= 0");
      }
    }
    int saturation = 1;
    double single = 1.0;
    if (t.containsKey("saturation_queue_depth")) {
      saturation = (int) Math.max(1, r.whole(t.get("saturation_queue_depth"), "saturation_queue_depth", 0));
    }
    if (t.containsKey("single_transfer_fraction")) {
      single = r.number(t.get("single_transfer_fraction"), "single_transfer_fraction");
      if (saturation > 1 && !(single > 0 && single <= 1)) {
        throw r.error(t.get("single_transfer_fraction"), "single_transfer_fraction must be in (0, 1], got " + single);
      }
      if (saturation == 1) {
        single = 1.0; // no ramp: the fraction is not used
      }
    }
    if (t.containsKey("latency_jitter_stddev") && r.number(t.get("latency_jitter_stddev"), "latency_jitter_stddev") != 0) {
      throw r.error(t.get("latency_jitter_stddev"), "latency_jitter_stddev other than 0 is not modelled here: every"
          + " transfer takes its mean time");
    }
    String locality = t.containsKey("locality") ? r.string(t.get("locality"), "locality") : "";
    resolved.add("        - type: fs");
    resolved.add("          root_dir: " + TraceV2Writer.scalar(r.string(t.get("root_dir"), "root_dir")));
    resolved.add("          n_read_threads: " + readThreads);
    resolved.add("          n_write_threads: " + writeThreads);
    if (!locality.isEmpty()) {
      resolved.add("          locality: " + locality);
    }
    resolved.add("          enable_kv_events: " + (t.containsKey("enable_kv_events")
        && t.get("enable_kv_events").token() == JsonToken.VALUE_TRUE));
    resolved.add("          direct_io: " + (t.get("direct_io").token() == JsonToken.VALUE_TRUE));
    if (t.containsKey("device_class")) {
      resolved.add("          device_class: " + TraceV2Writer.scalar(r.string(t.get("device_class"), "device_class")));
    }
    resolved.add("          read_bandwidth: " + TraceV2Writer.number(read));
    resolved.add("          write_bandwidth: " + TraceV2Writer.number(write));
    resolved.add("          base_latency: " + TraceV2Writer.number(base));
    resolved.add("          saturation_queue_depth: " + saturation);
    resolved.add("          single_transfer_fraction: " + TraceV2Writer.number(single));
    resolved.add("          latency_jitter_stddev: 0");
    return new OffloadTier(readThreads, writeThreads, read, write, base, saturation, single);
  }

  /** Where {@code n} is, as an error names it: {@code "FILE, line L, column C: "}. */
  private static String at(NodeReader r, YamlNode n) {
    return r.source() + ", line " + n.line() + ", column " + n.column() + ": ";
  }

  private static double positive(NodeReader r, YamlNode n, String key) {
    double v = r.number(n, key);
    if (!(v > 0) || Double.isInfinite(v)) {
      throw r.error(n, key + " must be a finite number of bytes per microsecond above 0");
    }
    return v;
  }

  private static boolean flag(NodeReader r, YamlNode n, String key) {
    if (n.token() != JsonToken.VALUE_TRUE && n.token() != JsonToken.VALUE_FALSE) {
      throw r.error(n, key + " must be true or false, got " + NodeReader.describe(n));
    }
    return n.token() == JsonToken.VALUE_TRUE;
  }
}
