package io.blis.engine.validate;

import com.fasterxml.jackson.databind.JsonNode;
import io.blis.api.HardwareSpec;
import io.blis.api.ModelSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * What a set of coefficients was fitted on: the GPU types, the tensor-parallel range, the weight
 * precisions, the routed-expert counts and the architecture families of the fitted runs. A
 * deployment outside any of them is an {@link Extrapolation}.
 *
 * @param gpus GPU names (as the catalog names them)
 * @param minTp smallest tensor-parallel degree fitted
 * @param maxTp largest tensor-parallel degree fitted
 * @param weightBytes bytes per weight parameter fitted (2 for bf16, 1 for fp8, ...)
 * @param experts routed-expert counts fitted (0 for dense models)
 * @param families architecture families fitted ({@code model_type}); empty: not recorded
 * @param topK experts per token fitted (0 for dense models); empty: not recorded
 */
public record FitDomain(SortedSet<String> gpus, int minTp, int maxTp, SortedSet<Double> weightBytes,
    SortedSet<Integer> experts, SortedSet<String> families, SortedSet<Integer> topK) {

  /** A domain that does not record the experts per token. */
  public FitDomain(SortedSet<String> gpus, int minTp, int maxTp, SortedSet<Double> weightBytes,
      SortedSet<Integer> experts, SortedSet<String> families) {
    this(gpus, minTp, maxTp, weightBytes, experts, families, new TreeSet<>());
  }

  public FitDomain {
    gpus = new TreeSet<>(gpus);
    weightBytes = new TreeSet<>(weightBytes);
    experts = new TreeSet<>(experts);
    families = new TreeSet<>(families);
    topK = new TreeSet<>(topK);
    if (gpus.isEmpty() || minTp < 1 || maxTp < minTp || weightBytes.isEmpty() || experts.isEmpty()) {
      throw new IllegalArgumentException("a fit domain needs at least one GPU, a TP range, a precision and an"
          + " expert count");
    }
  }

  /** One fitted deployment: what the domain is made of. */
  public record Fitted(ModelSpec model, HardwareSpec gpu, int tp) {}

  /** The domain of runs fitted on these deployments. */
  public static FitDomain of(List<Fitted> fitted) {
    if (fitted.isEmpty()) {
      throw new IllegalArgumentException("no fitted deployment to take a fit domain from");
    }
    SortedSet<String> gpus = new TreeSet<>();
    SortedSet<Double> bytes = new TreeSet<>();
    SortedSet<Integer> experts = new TreeSet<>();
    SortedSet<String> families = new TreeSet<>();
    SortedSet<Integer> topK = new TreeSet<>();
    int min = Integer.MAX_VALUE;
    int max = 0;
    for (Fitted f : fitted) {
      gpus.add(f.gpu().name());
      bytes.add(f.model().weightBytesPerParam());
      experts.add(f.model().isMoe() ? f.model().numExperts() : 0);
      topK.add(f.model().isMoe() ? f.model().expertsPerToken() : 0);
      if (!f.model().family().isEmpty()) {
        families.add(f.model().family());
      }
      min = Math.min(min, f.tp());
      max = Math.max(max, f.tp());
    }
    return new FitDomain(gpus, min, max, bytes, experts, families, topK);
  }

  /** How far a deployment of {@code model} on {@code tp} x {@code gpu} lies outside this domain. */
  public List<Extrapolation> distances(ModelSpec model, HardwareSpec gpu, int tp) {
    return distances(model, gpu, io.blis.latency.layout.Layout.tensorParallel(tp));
  }

  /**
   * How far a deployment of {@code model} on {@code gpu} laid out so lies outside this domain.
   * The domain holds tensor-parallel runs of models with ordinary attention only: pipeline, data
   * and expert parallelism, and multi-head latent attention, are always outside it.
   */
  public List<Extrapolation> distances(ModelSpec model, HardwareSpec gpu, io.blis.latency.layout.Layout layout) {
    int tp = layout.tp();
    List<Extrapolation> out = new ArrayList<>();
    if (!gpus.contains(gpu.name())) {
      out.add(gpuDistance(gpu));
    }
    if (tp > maxTp) {
      out.add(new Extrapolation(Extrapolation.Kind.TP, "tp " + tp + " > " + maxTp));
    } else if (tp < minTp) {
      out.add(new Extrapolation(Extrapolation.Kind.TP, "tp " + tp + " < " + minTp));
    }
    if (!weightBytes.contains(model.weightBytesPerParam())) {
      out.add(new Extrapolation(Extrapolation.Kind.PRECISION, "weights of " + bytes(model.weightBytesPerParam())
          + " bytes/param not in fit (" + weightBytes.stream().map(FitDomain::bytes).collect(Collectors.joining(", ")) + ")"));
    } else if (model.isMoe() && !weightBytes.contains(model.expertWeightBytesPerParam())) {
      out.add(new Extrapolation(Extrapolation.Kind.PRECISION, "experts of " + bytes(model.expertWeightBytesPerParam())
          + " bytes/param not in fit (" + weightBytes.stream().map(FitDomain::bytes).collect(Collectors.joining(", ")) + ")"));
    }
    int e = model.isMoe() ? model.numExperts() : 0;
    if (!experts.contains(e)) {
      out.add(new Extrapolation(Extrapolation.Kind.EXPERTS, (e == 0 ? "a dense model" : e + " experts")
          + " not in fit (" + experts.stream().map(x -> x == 0 ? "dense" : x + "").collect(Collectors.joining(", ")) + ")"));
    }
    int k = model.isMoe() ? model.expertsPerToken() : 0;
    if (!topK.isEmpty() && !topK.contains(k)) {
      out.add(new Extrapolation(Extrapolation.Kind.TOPK, "top-" + k + " routing not in fit ("
          + topK.stream().map(x -> x == 0 ? "dense" : "top-" + x).collect(Collectors.joining(", ")) + ")"));
    }
    if (!families.isEmpty() && !model.family().isEmpty() && !families.contains(model.family())) {
      out.add(new Extrapolation(Extrapolation.Kind.FAMILY, "family " + model.family() + " not in fit ("
          + String.join(", ", families) + ")"));
    }
    if (layout.gpus() != tp || layout.expertParallel()) {
      out.add(new Extrapolation(Extrapolation.Kind.LAYOUT, "layout " + layout
          + " not in fit (tensor parallelism only; no measured run checks pipeline, data or expert parallelism)"));
    }
    if (model.usesLatentAttention()) {
      out.add(new Extrapolation(Extrapolation.Kind.ATTENTION,
          "multi-head latent attention not in fit (no measured run checks it)"));
    } else if (model.slidingWindowLayers() > 0) {
      out.add(new Extrapolation(Extrapolation.Kind.ATTENTION, model.slidingWindowLayers() + " sliding-window layers ("
          + model.slidingWindow() + " tokens) not in fit (full attention only)"));
    }
    return out;
  }

  /**
   * The distance of a GPU no fitted run ran on: {@link Extrapolation.Kind#GPU} when its kernel
   * efficiency is measured, {@link Extrapolation.Kind#GPU_ESTIMATE} when it is estimated from
   * another GPU or not known at all.
   */
  private Extrapolation gpuDistance(HardwareSpec gpu) {
    String base = "gpu " + gpu.name() + " not in fit (" + String.join(", ", gpus) + ")";
    io.blis.latency.catalog.GpuEfficiency e = io.blis.latency.catalog.KernelScales.efficiencyOf(gpu);
    if (e == null) {
      return new Extrapolation(Extrapolation.Kind.GPU_ASSUMED, base + ", no kernel-efficiency entry, taken to"
          + " realize the " + io.blis.latency.catalog.GpuEfficiency.ANCHOR + "'s shares of its datasheet");
    }
    if (e.measured()) {
      return new Extrapolation(Extrapolation.Kind.GPU, base + ", kernel efficiency measured");
    }
    // an estimate's source reads "<basis> from <GPU>: why"
    String src = e.source();
    String lead = e.basis() + " from ";
    int colon = src.indexOf(':');
    String from = src.startsWith(lead) && colon > lead.length() ? src.substring(lead.length(), colon) : "another GPU";
    return e.basis().equals(io.blis.latency.catalog.GpuEfficiency.ASSUMED)
        ? new Extrapolation(Extrapolation.Kind.GPU_ASSUMED, base + ", kernel efficiency assumed from " + from
            + " (none of its kernels measured)")
        : new Extrapolation(Extrapolation.Kind.GPU_ESTIMATE, base + ", kernel efficiency estimated from " + from);
  }

  private static String bytes(double b) {
    return b == Math.rint(b) ? String.valueOf((long) b) : String.valueOf(b);
  }

  /** The YAML of this domain, indented by {@code indent}. */
  String toYaml(String indent) {
    return indent + "gpus: [" + gpus.stream().map(g -> "\"" + g + "\"").collect(Collectors.joining(", ")) + "]\n"
        + indent + "tp: [" + minTp + ", " + maxTp + "]\n"
        + indent + "weight_bytes: [" + weightBytes.stream().map(FitDomain::bytes).collect(Collectors.joining(", ")) + "]\n"
        + indent + "experts: [" + experts.stream().map(String::valueOf).collect(Collectors.joining(", ")) + "]\n"
        + indent + "families: [" + families.stream().map(f -> "\"" + f + "\"").collect(Collectors.joining(", ")) + "]\n"
        + (topK.isEmpty() ? "" : indent + "top_k: [" + topK.stream().map(String::valueOf).collect(Collectors.joining(", "))
            + "]\n");
  }

  /** Reads a domain from its YAML node; errors name {@code where} and the key. */
  static FitDomain read(JsonNode n, String where) {
    if (n == null || !n.isObject()) {
      throw new IllegalArgumentException(where + " must be a mapping with gpus, tp, weight_bytes, experts, families");
    }
    JsonNode tp = n.get("tp");
    if (tp == null || !tp.isArray() || tp.size() != 2 || !tp.get(0).canConvertToInt() || !tp.get(1).canConvertToInt()) {
      throw new IllegalArgumentException(where + ".tp must be [min, max], got " + tp);
    }
    SortedSet<String> gpus = new TreeSet<>();
    list(n, "gpus", where).forEach(v -> gpus.add(v.asText()));
    SortedSet<Double> bytes = new TreeSet<>();
    list(n, "weight_bytes", where).forEach(v -> bytes.add(v.asDouble()));
    SortedSet<Integer> experts = new TreeSet<>();
    list(n, "experts", where).forEach(v -> experts.add(v.asInt()));
    SortedSet<String> families = new TreeSet<>();
    if (n.has("families")) {
      list(n, "families", where).forEach(v -> families.add(v.asText().toLowerCase(Locale.ROOT)));
    }
    SortedSet<Integer> topK = new TreeSet<>();
    if (n.has("top_k")) {
      list(n, "top_k", where).forEach(v -> topK.add(v.asInt()));
    }
    try {
      return new FitDomain(gpus, tp.get(0).asInt(), tp.get(1).asInt(), bytes, experts, families, topK);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(where + ": " + e.getMessage(), e);
    }
  }

  private static JsonNode list(JsonNode n, String key, String where) {
    JsonNode v = n.get(key);
    if (v == null || !v.isArray()) {
      throw new IllegalArgumentException(where + "." + key + " must be a list, got " + v);
    }
    return v;
  }
}
