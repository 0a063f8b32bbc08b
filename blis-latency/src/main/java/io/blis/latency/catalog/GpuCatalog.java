package io.blis.latency.catalog;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
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
import java.util.TreeMap;

/**
 * The bundled GPU datasheets ({@code H100} = H100 SXM 80GB, {@code A100-80GB} = A100 SXM 80GB,
 * {@code L40S}), looked up by name or alias (case-insensitive), and the reader of user GPU files
 * for {@code --hardware-config}.
 *
 * <p>A GPU file is one JSON object:
 *
 * <pre>{@code
 * {
 *   "name": "H200",                 // optional, default: the file name without extension
 *   "bf16_dense_tflops": 989.4,     // required, dense (not the 2:4 sparsity figure)
 *   "fp8_dense_tflops": 1979.0,     // optional, 0 or null = no fp8 tensor cores
 *   "hbm_bandwidth_tb_s": 4.8,      // required, TB/s (1e12 bytes/s)
 *   "memory_gib": 139.8,            // required: total device memory as CUDA reports it, GiB
 *   "interconnect_gb_s": 450.0      // optional: per-GPU per-direction link bandwidth, GB/s;
 *                                   // default nvlink_bandwidth_gb_s / 2, else 32 (PCIe Gen4 x16)
 * }
 * }</pre>
 */
public final class GpuCatalog {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final double GIB = 1024.0 * 1024.0 * 1024.0;
  private static final double PCIE_GEN4_X16_GB_S = 32.0;

  private static final Map<String, GpuSpec> BY_NAME = new LinkedHashMap<>();
  private static final Map<String, String> LOOKUP = new TreeMap<>();

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
    String key = name == null ? null : LOOKUP.get(name.trim().toLowerCase(Locale.ROOT));
    if (key == null) {
      throw new IllegalArgumentException(
          "unknown GPU '" + name + "'; bundled GPUs: " + String.join(", ", BY_NAME.keySet())
              + " (aliases: " + String.join(", ", LOOKUP.keySet())
              + "); or give --hardware-config PATH");
    }
    return BY_NAME.get(key);
  }

  /**
   * A GPU given on the command line: a path to a GPU JSON file (when such a file exists), else a
   * bundled name or alias.
   *
   * @throws IllegalArgumentException if it is neither (the message lists the bundled GPUs)
   */
  public static GpuSpec resolve(String nameOrPath) {
    if (nameOrPath != null && !nameOrPath.isBlank()) {
      try {
        Path p = Path.of(nameOrPath);
        if (Files.isRegularFile(p)) {
          return fromFile(p);
        }
      } catch (java.nio.file.InvalidPathException notAPath) {
        // fall through to the catalog
      }
    }
    return byName(nameOrPath);
  }

  /**
   * Reads a GPU file (format in the class documentation).
   *
   * @throws IllegalArgumentException if the file cannot be read or a field is missing or invalid;
   *     the message names the file and the field
   */
  public static GpuSpec fromFile(Path json) {
    JsonNode root;
    try {
      root = JSON.readTree(Files.readAllBytes(json));
    } catch (IOException e) {
      throw new IllegalArgumentException(json + ": cannot read GPU file: " + e.getMessage(), e);
    }
    String file = json.getFileName().toString();
    String fallbackName = file.endsWith(".json") ? file.substring(0, file.length() - 5) : file;
    String name = root != null && root.path("name").isTextual() ? root.get("name").asText() : fallbackName;
    return parse(name, json.toString(), root);
  }

  private static GpuSpec parse(String name, String source, JsonNode node) {
    if (node == null || !node.isObject()) {
      throw new IllegalArgumentException(source + ": expected a JSON object describing one GPU");
    }
    HfFields f = new HfFields(source, (ObjectNode) node);
    double bf16 = required(f, source, "bf16_dense_tflops");
    double fp8 = f.optionalDouble(0.0, "fp8_dense_tflops");
    double bw = required(f, source, "hbm_bandwidth_tb_s");
    double memGib = f.optionalDouble(Double.NaN, "memory_gib");
    if (Double.isNaN(memGib)) {
      throw new IllegalArgumentException(
          source + ": missing required field 'memory_gib' (total device memory as CUDA reports it,"
              + " in GiB)");
    }
    double nvlink = f.optionalDouble(0.0, "nvlink_bandwidth_gb_s");
    double link =
        f.optionalDouble(nvlink > 0 ? nvlink / 2.0 : PCIE_GEN4_X16_GB_S, "interconnect_gb_s");
    try {
      return new GpuSpec(name, bf16 * 1e12, fp8 * 1e12, bw * 1e12, (long) (memGib * GIB), link * 1e9);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(source + ": " + e.getMessage(), e);
    }
  }

  private static double required(HfFields f, String source, String key) {
    double v = f.optionalDouble(Double.NaN, key);
    if (Double.isNaN(v)) {
      throw new IllegalArgumentException(source + ": missing required field '" + key + "'");
    }
    return v;
  }
}
