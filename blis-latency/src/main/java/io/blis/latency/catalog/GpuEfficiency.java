package io.blis.latency.catalog;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * How much of its datasheet one GPU's kernels realize, as measured by per-operator timings (the
 * kernel profiles) or estimated from the nearest measured part. The step model divides its ideal
 * times by these fractions, relative to the {@linkplain #ANCHOR anchor GPU} its coefficients are
 * expressed for, so that the fitted coefficients carry what is common to vLLM and the table what
 * differs between GPUs ({@link KernelScales}).
 *
 * @param basis {@code measured} (derived from timings of this GPU), {@code estimated} (from the
 *     timings of a part of the same kernel family) or {@code assumed} (from a part of another
 *     architecture: nothing of this GPU's kernels is measured)
 * @param source where the figures come from, in words (files, counts, or the estimate's reasoning)
 * @param gemmBandwidthFraction share of the peak HBM bandwidth a linear layer's GEMM realizes while
 *     it streams its weights (decode-sized token counts): {@code t = fixed + bytes / (peak x f)}
 * @param gemmFixedUs the fixed time of one GEMM kernel in that fit, microseconds
 * @param gemmFlopsFraction share of the peak dense FLOP/s a GEMM realizes at prefill sizes (2,048
 *     tokens and more)
 * @param decodeGemmCost what one more token of a small batch (up to 128 tokens) adds to the GEMMs of
 *     a layer, in units of its FLOPs at the peak rate (the slope of GEMM time over FLOPs there)
 * @param elementwiseUsPerKiloHidden the element-wise kernels of one layer (norms, rotary embedding,
 *     activation, residual add) at up to 128 tokens, microseconds per 1,000 of hidden size
 * @param decodeAttentionFraction share of the peak HBM bandwidth paged decode attention realizes
 *     reading the KV cache
 * @param decodeAttentionSource where {@code decodeAttentionFraction} comes from, in words
 * @param allReduce all-reduce within one node by group size, ascending
 */
public record GpuEfficiency(
    String basis,
    String source,
    double gemmBandwidthFraction,
    double gemmFixedUs,
    double gemmFlopsFraction,
    double decodeGemmCost,
    double elementwiseUsPerKiloHidden,
    double decodeAttentionFraction,
    String decodeAttentionSource,
    List<AllReduce> allReduce) {

  /** {@link #basis()} of an entry derived from timings of the GPU itself. */
  public static final String MEASURED = "measured";
  /** {@link #basis()} of an entry estimated from a GPU of the same kernel family. */
  public static final String ESTIMATED = "estimated";
  /** {@link #basis()} of an entry taken from a GPU of another architecture: nothing of its own measured. */
  public static final String ASSUMED = "assumed";

  /**
   * The GPU the bundled coefficients are expressed for (every fitted run ran on it): its entry
   * turns every scale into exactly 1.
   */
  public static final String ANCHOR = "H100";

  /**
   * All-reduce within one node over {@code gpus} GPUs.
   *
   * @param gpus group size (the tensor-parallel degree)
   * @param latencyUs time of an all-reduce of up to 1 MiB (latency-bound), microseconds
   * @param busBandwidthFraction bus bandwidth of large all-reduces (16 MiB and more), as a share of
   *     the datasheet per-direction link bandwidth
   */
  public record AllReduce(int gpus, double latencyUs, double busBandwidthFraction) {
    public AllReduce {
      if (gpus < 2) {
        throw new IllegalArgumentException("an all-reduce needs at least 2 GPUs, got " + gpus);
      }
      positive("allreduce latency_us", latencyUs);
      positive("allreduce bus_bandwidth_fraction", busBandwidthFraction);
    }
  }

  public GpuEfficiency {
    if (!MEASURED.equals(basis) && !ESTIMATED.equals(basis) && !ASSUMED.equals(basis)) {
      throw new IllegalArgumentException("efficiency basis must be '" + MEASURED + "', '" + ESTIMATED + "' or '"
          + ASSUMED + "', got '" + io.blis.latency.coeff.InputTrees.oneLine(String.valueOf(basis)) + "'");
    }
    source = source == null ? "" : source;
    decodeAttentionSource = decodeAttentionSource == null ? "" : decodeAttentionSource;
    fraction("gemm_bandwidth_fraction", gemmBandwidthFraction);
    nonNegative("gemm_fixed_us", gemmFixedUs);
    fraction("gemm_flops_fraction", gemmFlopsFraction);
    positive("decode_gemm_cost", decodeGemmCost);
    positive("elementwise_us_per_khidden", elementwiseUsPerKiloHidden);
    fraction("decode_attention_fraction", decodeAttentionFraction);
    List<AllReduce> sorted = new ArrayList<>(allReduce == null ? List.of() : allReduce);
    sorted.sort(Comparator.comparingInt(AllReduce::gpus));
    for (int i = 1; i < sorted.size(); i++) {
      if (sorted.get(i).gpus() == sorted.get(i - 1).gpus()) {
        throw new IllegalArgumentException("allreduce lists " + sorted.get(i).gpus() + " GPUs twice");
      }
    }
    allReduce = Collections.unmodifiableList(sorted);
  }

  /** Whether the figures were measured on this GPU (not estimated from another). */
  public boolean measured() {
    return MEASURED.equals(basis);
  }

  /**
   * The all-reduce figures for a group of {@code gpus}: that size if measured, else the nearest
   * measured size (the larger on a tie); empty when none is.
   */
  public java.util.Optional<AllReduce> allReduceFor(int gpus) {
    AllReduce best = null;
    for (AllReduce a : allReduce) {
      if (best == null || Math.abs(a.gpus() - gpus) < Math.abs(best.gpus() - gpus)
          || (Math.abs(a.gpus() - gpus) == Math.abs(best.gpus() - gpus) && a.gpus() > best.gpus())) {
        best = a;
      }
    }
    return java.util.Optional.ofNullable(best);
  }

  /** This entry with another basis and source (an estimate built from a measured entry). */
  public GpuEfficiency as(String newBasis, String newSource) {
    return new GpuEfficiency(newBasis, newSource, gemmBandwidthFraction, gemmFixedUs, gemmFlopsFraction,
        decodeGemmCost, elementwiseUsPerKiloHidden, decodeAttentionFraction, decodeAttentionSource, allReduce);
  }

  /** This entry without all-reduce figures (the link latency and datasheet bandwidth then apply). */
  public GpuEfficiency withoutAllReduce() {
    return new GpuEfficiency(basis, source, gemmBandwidthFraction, gemmFixedUs, gemmFlopsFraction,
        decodeGemmCost, elementwiseUsPerKiloHidden, decodeAttentionFraction, decodeAttentionSource, List.of());
  }

  private static final Set<String> KEYS = Set.of("basis", "source", "gemm_bandwidth_fraction", "gemm_fixed_us",
      "gemm_flops_fraction", "decode_gemm_cost", "elementwise_us_per_khidden", "decode_attention_fraction",
      "decode_attention_source", "allreduce");

  /**
   * Reads an efficiency entry (the JSON {@link #toJson} writes); errors name {@code where} and the
   * key. Unknown keys are refused so that a misspelt figure is never silently replaced.
   */
  public static GpuEfficiency parse(JsonNode n, String where) {
    if (n == null || !n.isObject()) {
      throw new IllegalArgumentException(where + ": expected an efficiency object (gemm_bandwidth_fraction,"
          + " gemm_fixed_us, ...); see docs/gpu-efficiency.md");
    }
    Iterator<String> names = n.fieldNames();
    while (names.hasNext()) {
      String k = names.next();
      if (!KEYS.contains(k)) {
        throw new IllegalArgumentException(where + ": unknown efficiency key '"
            + io.blis.latency.coeff.InputTrees.oneLine(k) + "' (expected one of "
            + new java.util.TreeSet<>(KEYS) + ")");
      }
    }
    List<AllReduce> ar = new ArrayList<>();
    JsonNode list = n.get("allreduce");
    if (list != null && !list.isNull()) {
      if (!list.isArray()) {
        throw new IllegalArgumentException(where + ".allreduce must be a list of {gpus, latency_us,"
            + " bus_bandwidth_fraction}");
      }
      for (int i = 0; i < list.size(); i++) {
        JsonNode a = list.get(i);
        String w = where + ".allreduce[" + i + "]";
        try {
          ar.add(new AllReduce(integer(a, "gpus", w), number(a, "latency_us", w),
              number(a, "bus_bandwidth_fraction", w)));
        } catch (IllegalArgumentException e) {
          throw e.getMessage().startsWith(w) ? e : new IllegalArgumentException(w + ": " + e.getMessage(), e);
        }
      }
    }
    try {
      return new GpuEfficiency(text(n, "basis", where), n.path("source").asText(""),
          number(n, "gemm_bandwidth_fraction", where), number(n, "gemm_fixed_us", where),
          number(n, "gemm_flops_fraction", where), number(n, "decode_gemm_cost", where),
          number(n, "elementwise_us_per_khidden", where), number(n, "decode_attention_fraction", where),
          n.path("decode_attention_source").asText(""), ar);
    } catch (IllegalArgumentException e) {
      throw e.getMessage().startsWith(where) ? e : new IllegalArgumentException(where + ": " + e.getMessage(), e);
    }
  }

  /** This entry as JSON (numbers rounded to 4 significant digits, as measured). */
  public ObjectNode toJson() {
    ObjectNode o = new ObjectMapper().createObjectNode();
    o.put("basis", basis);
    o.put("source", source);
    o.put("gemm_bandwidth_fraction", round(gemmBandwidthFraction));
    o.put("gemm_fixed_us", round(gemmFixedUs));
    o.put("gemm_flops_fraction", round(gemmFlopsFraction));
    o.put("decode_gemm_cost", round(decodeGemmCost));
    o.put("elementwise_us_per_khidden", round(elementwiseUsPerKiloHidden));
    o.put("decode_attention_fraction", round(decodeAttentionFraction));
    o.put("decode_attention_source", decodeAttentionSource);
    ArrayNode ar = o.putArray("allreduce");
    for (AllReduce a : allReduce) {
      ObjectNode e = ar.addObject();
      e.put("gpus", a.gpus());
      e.put("latency_us", round(a.latencyUs()));
      e.put("bus_bandwidth_fraction", round(a.busBandwidthFraction()));
    }
    return o;
  }

  /** {@code v} to 4 significant digits (what the measurements support; keeps files stable). */
  public static double round(double v) {
    if (v == 0 || !Double.isFinite(v)) {
      return v;
    }
    return new java.math.BigDecimal(v).round(new java.math.MathContext(4)).doubleValue();
  }

  private static String text(JsonNode n, String key, String where) {
    JsonNode v = n.get(key);
    if (v == null || !v.isTextual()) {
      throw new IllegalArgumentException(where + ": '" + key + "' is required and must be text");
    }
    return v.asText().toLowerCase(Locale.ROOT);
  }

  private static double number(JsonNode n, String key, String where) {
    JsonNode v = n.get(key);
    if (v == null || !v.isNumber()) {
      throw new IllegalArgumentException(where + ": '" + key + "' is required and must be a number, got " + v);
    }
    return v.asDouble();
  }

  private static int integer(JsonNode n, String key, String where) {
    JsonNode v = n.get(key);
    if (v == null || !v.canConvertToInt() || !v.isIntegralNumber()) {
      throw new IllegalArgumentException(where + ": '" + key + "' is required and must be an integer, got " + v);
    }
    return v.asInt();
  }

  private static void fraction(String key, double v) {
    if (!(v > 0 && v <= 1.5)) {
      throw new IllegalArgumentException(key + " must be a share of the datasheet peak in (0, 1.5], got " + v);
    }
  }

  private static void positive(String key, double v) {
    if (!(Double.isFinite(v) && v > 0)) {
      throw new IllegalArgumentException(key + " must be a finite number > 0, got " + v);
    }
  }

  private static void nonNegative(String key, double v) {
    if (!(Double.isFinite(v) && v >= 0)) {
      throw new IllegalArgumentException(key + " must be a finite number >= 0, got " + v);
    }
  }

  /** The entries of a file of named efficiency entries ({@code {"H100": {...}, ...}}), in file order. */
  static Map<String, GpuEfficiency> parseAll(JsonNode root, String where) {
    Map<String, GpuEfficiency> out = new java.util.LinkedHashMap<>();
    Iterator<Map.Entry<String, JsonNode>> it = root.fields();
    while (it.hasNext()) {
      Map.Entry<String, JsonNode> e = it.next();
      if (!e.getKey().startsWith("_")) {
        out.put(e.getKey(), parse(e.getValue(), where + "#" + e.getKey()));
      }
    }
    return out;
  }
}
