package io.blis.latency.catalog;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.blis.api.HardwareSpec;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The bundled GPU datasheets ({@code H100} = H100 SXM 80GB, {@code A100-80GB} = A100 SXM 80GB,
 * {@code L40S}, the three GPUs of the ground truth; and {@code H100-PCIE}, {@code H100-NVL},
 * {@code H200}, {@code A100-40GB}, {@code A100-80GB-PCIE}), looked up by name or alias
 * (case-insensitive) or by a device description such as {@code NVIDIA A100-SXM4-40GB}, and the
 * reader of user GPU files ({@code --gpu PATH}).
 *
 * <p>A GPU file is one JSON object:
 *
 * <pre>{@code
 * {
 *   "name": "H200",                 // optional, default: the file name without extension
 *   "bf16_dense_tflops": 989.4,     // required, dense (not the 2:4 sparsity figure)
 *   "fp8_dense_tflops": 1979.0,     // optional, 0 or null = no fp8 tensor cores
 *   "hbm_bandwidth_tb_s": 4.8,      // required, TB/s (1e12 bytes/s)
 *   "memory_gib": 139.8,            // total device memory as CUDA reports it, GiB; if absent,
 *                                   // "memory_gb" (nominal) x 0.99 is used
 *   "interconnect_gb_s": 450.0,     // optional: per-GPU per-direction link bandwidth, GB/s;
 *                                   // default nvlink_bandwidth_gb_s / 2, else 32 (PCIe Gen4 x16)
 *   "gpus_per_node": 8,             // optional: GPUs one node holds, default 8
 *   "inter_node_gb_s": 50.0,        // optional: per-GPU per-direction bandwidth between nodes
 *                                   // (InfiniBand/RoCE), GB/s; default 50 (one 400 Gb/s NIC)
 *   "interconnect_latency_us": 3.0, // optional: latency of one transfer within a node, us;
 *                                   // default 3
 *   "inter_node_latency_us": 10.0   // optional: latency of one transfer between nodes, us;
 *                                   // default 10
 * }
 * }</pre>
 *
 * <p>A file may also hold several GPUs as named entries (like the ground truth's
 * {@code gpu_specs.json}); {@code FILE#KEY} names one of them. Go BLIS's {@code
 * hardware_config.json} is such a file, its entries in Go BLIS's key names: {@code TFlopsPeak}
 * (bf16_dense_tflops), {@code TFlopsFP8}, {@code BwPeakTBs}, {@code MemoryGiB}; its {@code
 * mfuPrefill}/{@code mfuDecode} are not datasheet figures and are not read (the roofline's
 * efficiencies are coefficients); the link and node figures ({@code interconnect_gb_s} and the
 * four keys after it) are those of the bundled GPU of the same name.
 */
public final class GpuCatalog {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final double GIB = 1024.0 * 1024.0 * 1024.0;
  private static final double PCIE_GEN4_X16_GB_S = 32.0;
  /** CUDA-reported / nominal memory of the H100 SXM and A100 80GB (79.19 and 79.15 GiB of 80). */
  private static final double REPORTED_PER_NOMINAL_MEMORY = 0.99;
  private static final Pattern MEMORY_TOKEN = Pattern.compile("(\\d+)GB");

  private static final Map<String, GpuSpec> BY_NAME = new LinkedHashMap<>();
  private static final Map<String, String> LOOKUP = new TreeMap<>();
  private static final Map<String, Match> MATCH = new LinkedHashMap<>();

  /** How a device description names a bundled GPU: family token, nominal GB, form factor. */
  private record Match(String family, int memoryGb, String form, boolean isDefault) {}

  /** The measured kernel-efficiency entries, by GPU name ({@code gpus/efficiency.json}). */
  private static final Map<String, GpuEfficiency> MEASURED = new LinkedHashMap<>();

  static {
    String table = "/io/blis/latency/gpus/efficiency.json";
    try (InputStream in = GpuCatalog.class.getResourceAsStream(table)) {
      if (in == null) {
        throw new IllegalStateException("bundled GPU efficiency table missing: " + table);
      }
      MEASURED.putAll(GpuEfficiency.parseAll(JSON.readTree(in), "bundled " + table.substring(1)));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + table, e);
    }
  }

  static {
    String resource = "/io/blis/latency/gpus/gpus.json";
    try (InputStream in = GpuCatalog.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("bundled GPU catalog missing: " + resource);
      }
      JsonNode root = JSON.readTree(in);
      Iterator<Map.Entry<String, JsonNode>> it = root.fields();
      while (it.hasNext()) {
        Map.Entry<String, JsonNode> e = it.next();
        if (e.getKey().startsWith("_")) {
          continue;
        }
        GpuSpec spec = parse(e.getKey(), "bundled GPU " + e.getKey(), e.getValue());
        BY_NAME.put(e.getKey(), spec);
        LOOKUP.put(e.getKey().toLowerCase(Locale.ROOT), e.getKey());
        for (JsonNode alias : e.getValue().path("aliases")) {
          LOOKUP.put(alias.asText().toLowerCase(Locale.ROOT), e.getKey());
        }
        JsonNode m = e.getValue().path("match");
        if (m.isObject()) {
          MATCH.put(e.getKey(), new Match(m.path("family").asText(), m.path("memory_gb").asInt(),
              m.path("form").asText(), m.path("default").asBoolean()));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + resource, e);
    }
  }

  private GpuCatalog() {}

  /** Canonical names of the bundled GPUs. */
  public static List<String> names() {
    return Collections.unmodifiableList(new ArrayList<>(BY_NAME.keySet()));
  }

  /**
   * The bundled GPU called {@code name} or one of its aliases ({@code H100-SXM}, {@code A100},
   * {@code A100-80}, ...), case-insensitive.
   *
   * @throws IllegalArgumentException if there is none; the message lists names and aliases
   */
  public static GpuSpec byName(String name) {
    return lookup(name).orElseThrow(() -> new IllegalArgumentException(
        "unknown GPU '" + io.blis.latency.coeff.InputTrees.oneLine(name) + "'; bundled GPUs: " + String.join(", ", BY_NAME.keySet())
            + " (aliases: " + String.join(", ", LOOKUP.keySet())
            + "); or a GPU JSON file (format: docs/latency-models.md, GPU catalog)"));
  }

  /** The bundled GPU called {@code name} or one of its aliases, case-insensitive, if any. */
  public static Optional<GpuSpec> lookup(String name) {
    String key = name == null ? null : LOOKUP.get(name.trim().toLowerCase(Locale.ROOT));
    return key == null ? Optional.empty() : Optional.of(BY_NAME.get(key));
  }

  /**
   * The bundled GPU that a device description names, such as {@code NVIDIA H100 80GB HBM3},
   * {@code NVIDIA A100-SXM4-40GB} or {@code NVIDIA H100 NVL}: the description must contain the
   * GPU's family token, and a memory size ({@code 40GB}) or form factor ({@code SXM4},
   * {@code PCIe}, {@code NVL}) it mentions must be the GPU's. If that leaves several, the family's
   * default (SXM, the largest common memory) is taken. Empty if no bundled GPU fits, so that an
   * unknown variant is never mistaken for a known one.
   */
  public static Optional<GpuSpec> describedBy(String description) {
    if (description == null) {
      return Optional.empty();
    }
    Set<String> tokens = new TreeSet<>();
    for (String t : description.toUpperCase(Locale.ROOT).split("[^A-Z0-9]+")) {
      if (!t.isEmpty()) {
        tokens.add(t);
      }
    }
    int memory = -1;
    String form = null;
    for (String t : tokens) {
      Matcher m = MEMORY_TOKEN.matcher(t);
      if (m.matches()) {
        memory = Integer.parseInt(m.group(1));
      } else if (t.startsWith("SXM")) {
        form = "SXM";
      } else if (t.equals("PCIE") || t.equals("NVL")) {
        form = t;
      }
    }
    List<String> fits = new ArrayList<>();
    for (Map.Entry<String, Match> e : MATCH.entrySet()) {
      Match m = e.getValue();
      if (tokens.contains(m.family()) && (memory < 0 || memory == m.memoryGb())
          && (form == null || form.equals(m.form()))) {
        fits.add(e.getKey());
      }
    }
    if (fits.size() > 1) {
      fits.removeIf(name -> !MATCH.get(name).isDefault());
    }
    return fits.size() == 1 ? Optional.of(BY_NAME.get(fits.get(0))) : Optional.empty();
  }

  /**
   * A GPU given on the command line or in an experiments file: a GPU file (when such a file
   * exists), an entry {@code FILE#KEY} of a file of several GPUs, a bundled name or alias, or a
   * device description {@link #describedBy} recognizes.
   *
   * @throws IllegalArgumentException if it is none of these (the message lists the bundled GPUs)
   */
  public static GpuSpec resolve(String nameOrPath) {
    if (nameOrPath != null && !nameOrPath.isBlank()) {
      try {
        Path p = Path.of(nameOrPath);
        if (Files.isRegularFile(p)) {
          return fromFile(p);
        }
        int hash = nameOrPath.lastIndexOf('#');
        if (hash > 0 && Files.isRegularFile(Path.of(nameOrPath.substring(0, hash)))) {
          return fromFileEntry(Path.of(nameOrPath.substring(0, hash)), nameOrPath.substring(hash + 1));
        }
      } catch (java.nio.file.InvalidPathException notAPath) {
        // fall through to the catalog
      }
    }
    Optional<GpuSpec> known = lookup(nameOrPath);
    if (known.isPresent()) {
      return known.get();
    }
    return describedBy(nameOrPath).orElseGet(() -> byName(nameOrPath));
  }

  /**
   * Reads a GPU file (format in the class documentation).
   *
   * @throws IllegalArgumentException if the file cannot be read or a field is missing or invalid;
   *     the message names the file and the field
   */
  public static GpuSpec fromFile(Path json) {
    JsonNode root = read(json);
    String file = json.getFileName().toString();
    String fallbackName = file.endsWith(".json") ? file.substring(0, file.length() - 5) : file;
    String name = root != null && root.path("name").isTextual() ? root.get("name").asText() : fallbackName;
    return parse(name, json.toString(), root);
  }

  /**
   * Reads entry {@code key} of a file holding several GPUs as named objects (each in the format of
   * the class documentation, {@code name} optional: default the key).
   *
   * @throws IllegalArgumentException if the file cannot be read, has no such entry, or the entry
   *     is invalid; the message names the file, the entry and the field
   */
  public static GpuSpec fromFileEntry(Path json, String key) {
    JsonNode root = read(json);
    JsonNode node = root == null ? null : root.get(key);
    if (node == null || !node.isObject()) {
      List<String> keys = new ArrayList<>();
      if (root != null) {
        root.fieldNames().forEachRemaining(k -> {
          if (root.get(k).isObject()) {
            keys.add(k);
          }
        });
      }
      throw new IllegalArgumentException(json + ": no GPU entry '"
          + io.blis.latency.coeff.InputTrees.oneLine(key) + "' (entries: "
          + io.blis.latency.coeff.InputTrees.oneLine(String.join(", ", keys)) + ")");
    }
    String name = node.path("name").isTextual() ? node.get("name").asText() : key;
    return parse(name, json + "#" + key, node);
  }

  private static JsonNode read(Path json) {
    JsonNode n = io.blis.latency.coeff.InputTrees.json(io.blis.latency.coeff.InputTrees.readText(json, "GPU file"),
        json.toString());
    if (n == null) {
      throw new IllegalArgumentException(json + ": the GPU file is empty");
    }
    return n;
  }

  private static GpuSpec parse(String name, String source, JsonNode node) {
    if (node == null || !node.isObject()) {
      throw new IllegalArgumentException(source + ": expected a JSON object describing one GPU");
    }
    HfFields f = new HfFields(source, (ObjectNode) node);
    double bf16 = required(f, source, "bf16_dense_tflops", GO_PEAK);
    double fp8 = f.optionalDouble(0.0, "fp8_dense_tflops", "TFlopsFP8");
    double bw = required(f, source, "hbm_bandwidth_tb_s", "BwPeakTBs");
    double memGib = f.optionalDouble(Double.NaN, "memory_gib", "MemoryGiB");
    if (Double.isNaN(memGib)) {
      memGib = f.optionalDouble(Double.NaN, "memory_gb") * REPORTED_PER_NOMINAL_MEMORY;
    }
    if (Double.isNaN(memGib)) {
      throw new IllegalArgumentException(
          source + ": missing required field 'memory_gib' (total device memory as CUDA reports it,"
              + " in GiB; or 'memory_gb', the nominal size)");
    }
    double nvlink = f.optionalDouble(0.0, "nvlink_bandwidth_gb_s");
    // Go BLIS's hardware_config.json has no link or node figures: a bundled GPU of the same name
    // lends its own
    Optional<GpuSpec> bundled = node.has(GO_PEAK) ? lookup(name) : Optional.empty();
    double link = f.optionalDouble(bundled.map(b -> b.interconnectBandwidthBytesPerS() / 1e9)
        .orElse(nvlink > 0 ? nvlink / 2.0 : PCIE_GEN4_X16_GB_S), "interconnect_gb_s");
    HardwareSpec lender = bundled.isPresent() ? bundled.get() : GpuSpec.NODE_DEFAULTS;
    int perNode = f.optionalInt(lender.gpusPerNode(), "gpus_per_node");
    double interNode = f.optionalDouble(lender.interNodeBandwidthBytesPerS() / 1e9, "inter_node_gb_s");
    double linkLatency = seconds(f, "interconnect_latency_us", lender.interconnectLatencyS());
    double interNodeLatency = seconds(f, "inter_node_latency_us", lender.interNodeLatencyS());
    GpuEfficiency efficiency = efficiency(name, source, node.get("efficiency"), bundled);
    try {
      return new GpuSpec(name, bf16 * 1e12, fp8 * 1e12, bw * 1e12, (long) (memGib * GIB), link * 1e9,
          perNode, interNode * 1e9, linkLatency, interNodeLatency, efficiency);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(source + ": " + io.blis.latency.coeff.InputTrees.oneLine(e.getMessage()), e);
    }
  }

  /**
   * The kernel-efficiency entry a GPU description names: {@code "NAME"} (the measured entry of that
   * name; an estimate when it is another GPU's), {@code {"from": "NAME", "source": "why"}} (an
   * estimate from that measured entry, the reason in words), or an entry written out in full (as
   * {@code blis gpu-profile} writes it). Absent: a Go BLIS entry borrows the bundled GPU's; otherwise
   * none (null).
   */
  private static GpuEfficiency efficiency(String gpu, String source, JsonNode e, Optional<GpuSpec> bundled) {
    String where = source + ": efficiency";
    if (e == null || e.isNull()) {
      return bundled.map(GpuSpec::efficiency).orElse(null);
    }
    if (e.isTextual()) {
      GpuEfficiency m = measuredEntry(e.asText(), where);
      return e.asText().equalsIgnoreCase(gpu) ? m
          : m.as(GpuEfficiency.ESTIMATED, "estimated from " + e.asText() + ": its measured entry (" + m.source() + ")");
    }
    if (e.isObject() && e.has("from")) {
      Iterator<String> keys = e.fieldNames();
      while (keys.hasNext()) {
        String k = keys.next();
        if (!Set.of("from", "source", "allreduce", "basis").contains(k)) {
          throw new IllegalArgumentException(where + ": " + ESTIMATE_FORM + "; unknown key '"
              + io.blis.latency.coeff.InputTrees.oneLine(k) + "'");
        }
      }
      String basis = e.path("basis").asText(GpuEfficiency.ESTIMATED);
      if (!e.get("from").isTextual() || (e.has("source") && !e.get("source").isTextual())
          || (e.has("allreduce") && !e.get("allreduce").isBoolean())
          || !(basis.equals(GpuEfficiency.ESTIMATED) || basis.equals(GpuEfficiency.ASSUMED))) {
        throw new IllegalArgumentException(where + ": " + ESTIMATE_FORM + ", got " + e);
      }
      GpuEfficiency m = measuredEntry(e.get("from").asText(), where);
      String why = e.path("source").asText("the measured entry of " + e.get("from").asText());
      GpuEfficiency est = m.as(basis, basis + " from " + e.get("from").asText() + ": " + why);
      // the measured all-reduce belongs to the measured GPU's link; kept only when the estimate says
      // the links are alike
      return e.path("allreduce").asBoolean(false) ? est : est.withoutAllReduce();
    }
    return GpuEfficiency.parse(e, where);
  }

  private static final String ESTIMATE_FORM =
      "an estimate is {\"from\": \"GPU\", \"source\": \"why\", \"allreduce\": true|false, \"basis\":"
          + " \"estimated\"|\"assumed\"}";

  private static GpuEfficiency measuredEntry(String name, String where) {
    for (Map.Entry<String, GpuEfficiency> m : MEASURED.entrySet()) {
      if (m.getKey().equalsIgnoreCase(name)) {
        return m.getValue();
      }
    }
    throw new IllegalArgumentException(where + ": no measured efficiency entry '"
        + io.blis.latency.coeff.InputTrees.oneLine(name) + "' (measured: "
        + String.join(", ", MEASURED.keySet()) + ")");
  }

  /** Names of the GPUs whose kernel efficiency is measured (the bundled {@code gpus/efficiency.json}). */
  public static List<String> measuredEfficiencies() {
    return List.copyOf(MEASURED.keySet());
  }

  /** The measured efficiency entry of that name (case-insensitive). */
  public static GpuEfficiency measuredEfficiency(String name) {
    return measuredEntry(name, "efficiency");
  }

  /**
   * {@code gpu} as a GPU file ({@link #fromFile} reads it back to an equal {@link GpuSpec}), its
   * efficiency entry written out in full.
   */
  public static ObjectNode toJson(GpuSpec gpu) {
    ObjectNode o = JSON.createObjectNode();
    o.put("name", gpu.name());
    o.put("bf16_dense_tflops", gpu.peakFlopsBf16() / 1e12);
    o.put("fp8_dense_tflops", gpu.peakFlopsFp8() / 1e12);
    o.put("hbm_bandwidth_tb_s", gpu.memoryBandwidthBytesPerS() / 1e12);
    o.put("memory_gib", Math.round(gpu.memoryBytes() / GIB * 1e4) / 1e4); // what was read, to 0.1 MiB
    o.put("interconnect_gb_s", gpu.interconnectBandwidthBytesPerS() / 1e9);
    o.put("gpus_per_node", gpu.gpusPerNode());
    o.put("inter_node_gb_s", gpu.interNodeBandwidthBytesPerS() / 1e9);
    o.put("interconnect_latency_us", gpu.interconnectLatencyS() * 1e6);
    o.put("inter_node_latency_us", gpu.interNodeLatencyS() * 1e6);
    if (gpu.efficiency() != null) {
      o.set("efficiency", gpu.efficiency().toJson());
    }
    return o;
  }

  /** Go BLIS's name of the dense bf16 peak; its presence marks a Go BLIS hardware_config.json entry. */
  private static final String GO_PEAK = "TFlopsPeak";

  /** Field {@code key}, in microseconds, as seconds; {@code fallback} (seconds) when absent. */
  private static double seconds(HfFields f, String key, double fallback) {
    double us = f.optionalDouble(Double.NaN, key);
    return Double.isNaN(us) ? fallback : us / 1e6;
  }

  private static double required(HfFields f, String source, String key, String goKey) {
    double v = f.optionalDouble(Double.NaN, key, goKey);
    if (Double.isNaN(v)) {
      throw new IllegalArgumentException(source + ": missing required field '" + key + "' (Go BLIS's "
          + goKey + ")");
    }
    return v;
  }
}
