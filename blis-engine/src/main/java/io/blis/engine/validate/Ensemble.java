package io.blis.engine.validate;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.blis.api.Coefficients;
import io.blis.latency.coeff.CoefficientFiles;
import io.blis.latency.coeff.InputTrees;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The coefficient sets behind BLIS's prediction intervals: the refits of a cross-validation, each
 * made without one group of runs (a model, for leave-one-model-out), and the residual spread that
 * their disagreement does not explain. How far the members' predictions of a run stray from the
 * point prediction measures how much the prediction hangs on which models the coefficients were
 * fitted to; the residual adds the error that remains on held-out runs (see
 * {@link PredictionInterval}).
 *
 * <p>File format (YAML, written by {@code blis calibrate --cross-validate model --cv-out P} as
 * {@code P-model-ensemble.yaml}; the default one is bundled with the trained-physics coefficients):
 *
 * <pre>
 * version: 1
 * latency_model: trained-physics
 * residual_log_sd: {e2e_mean: 0.031, ttft_mean: 0.094}
 * fit_domain: {gpus: [H100], tp: [1, 4], weight_bytes: [2], experts: [0, 8], families: [llama]}
 * extrapolation_log_sd:
 *   gpu: {e2e_mean: 0.15, ttft_mean: 0.30, runs: 5}
 * scales_estimated_on: [c-13-qwen3-14b-tp1-general-1, ...]
 * members:
 *   - held_out: meta-llama/Llama-2-7b-hf
 *     beta: [...]
 *     alpha: [...]
 * </pre>
 *
 * @param latencyModel the latency model the members' coefficients are for
 * @param members the refits, at least two
 * @param residualLogSd per interval metric ({@link #METRICS}), the standard deviation of the log
 *     error left on held-out runs besides the members' spread
 * @param domain what the coefficients were fitted on, or null when the file does not say (then no
 *     prediction is known to extrapolate)
 * @param extrapolation per kind of {@link Extrapolation}, the log standard deviation it adds to an
 *     interval, estimated from the runs that measure it ({@link IntervalScales})
 * @param scaleRuns the ids of the runs the residual and extrapolation scales were estimated from
 *     ({@code scales_estimated_on}), so that coverage measured on them can be told to be in sample;
 *     empty when the file does not say
 * @param source where it was read from, for messages
 */
public record Ensemble(String latencyModel, List<Member> members, Map<Metric, Double> residualLogSd,
    FitDomain domain, Map<Extrapolation.Kind, Scale> extrapolation, List<String> scaleRuns, String source) {

  /**
   * The log standard deviation one kind of extrapolation adds, per metric, and how many runs it was
   * estimated from.
   */
  public record Scale(Map<Metric, Double> logSd, int runs) {
    public Scale {
      logSd = Map.copyOf(logSd);
    }

    public double of(Metric m) {
      Double v = logSd.get(m);
      return v == null ? 0 : v;
    }
  }

  /** An ensemble without a fit domain or extrapolation scales. */
  public Ensemble(String latencyModel, List<Member> members, Map<Metric, Double> residualLogSd, String source) {
    this(latencyModel, members, residualLogSd, null, Map.of(), List.of(), source);
  }

  /** An ensemble that does not say which runs its scales were estimated from. */
  public Ensemble(String latencyModel, List<Member> members, Map<Metric, Double> residualLogSd,
      FitDomain domain, Map<Extrapolation.Kind, Scale> extrapolation, String source) {
    this(latencyModel, members, residualLogSd, domain, extrapolation, List.of(), source);
  }

  /**
   * This ensemble with another fit domain, residuals and extrapolation scales, estimated from runs
   * it does not record.
   */
  public Ensemble withScales(FitDomain d, Map<Metric, Double> residual, Map<Extrapolation.Kind, Scale> scales) {
    return withScales(d, residual, scales, List.of());
  }

  /**
   * This ensemble with another fit domain, residuals and extrapolation scales, estimated from the
   * runs {@code runs} (their ids).
   */
  public Ensemble withScales(FitDomain d, Map<Metric, Double> residual, Map<Extrapolation.Kind, Scale> scales,
      List<String> runs) {
    return new Ensemble(latencyModel, members, residual, d, scales, runs, source);
  }

  /**
   * The distances of a deployment from the fit domain (none when the ensemble has no domain).
   */
  public List<Extrapolation> distances(io.blis.api.ModelSpec model, io.blis.api.HardwareSpec gpu, int tp) {
    return distances(model, gpu, io.blis.latency.layout.Layout.tensorParallel(tp));
  }

  /** As {@link #distances(io.blis.api.ModelSpec, io.blis.api.HardwareSpec, int)} for any layout. */
  public List<Extrapolation> distances(io.blis.api.ModelSpec model, io.blis.api.HardwareSpec gpu,
      io.blis.latency.layout.Layout layout) {
    return domain == null ? List.of() : domain.distances(model, gpu, layout);
  }

  /**
   * The log standard deviation that {@code distances} add to an interval of {@code m}: the root of
   * the sum of their kinds' squared scales (each kind once). A kind no run measured takes the
   * largest scale there is; an estimated GPU takes at least a measured GPU's.
   */
  public double extrapolationLogSd(List<Extrapolation> distances, Metric m) {
    double largest = extrapolation.values().stream().mapToDouble(s -> s.of(m)).max().orElse(0);
    double ss = 0;
    for (Extrapolation.Kind k : distances.stream().map(Extrapolation::kind).distinct().toList()) {
      Scale s = extrapolation.get(k);
      double v = s == null ? largest : s.of(m);
      for (Extrapolation.Kind f = Extrapolation.floorOf(k); f != null; f = Extrapolation.floorOf(f)) {
        Scale fs = extrapolation.get(f);
        v = Math.max(v, fs == null ? largest : fs.of(m));
      }
      ss += v * v;
    }
    return Math.sqrt(ss);
  }

  /** Metrics that get intervals. */
  public static final List<Metric> METRICS = List.of(Metric.E2E_MEAN, Metric.TTFT_MEAN);

  /** Classpath resource of the default ensemble (next to the default coefficients). */
  public static final String BUNDLED = "/io/blis/latency/coefficients/trained-physics-ensemble.yaml";

  /**
   * One refit.
   *
   * @param heldOut the group it was fitted without (a model name for leave-one-model-out)
   * @param coefficients its coefficients
   */
  public record Member(String heldOut, Coefficients coefficients) {}

  public Ensemble {
    members = List.copyOf(members);
    residualLogSd = Map.copyOf(residualLogSd);
    scaleRuns = List.copyOf(scaleRuns);
    if (new java.util.HashSet<>(scaleRuns).size() != scaleRuns.size()) {
      throw new IllegalArgumentException(source + ": scales_estimated_on lists a run twice");
    }
    java.util.EnumMap<Extrapolation.Kind, Scale> ordered = new java.util.EnumMap<>(Extrapolation.Kind.class);
    ordered.putAll(extrapolation);
    extrapolation = java.util.Collections.unmodifiableMap(ordered); // kind order: files are deterministic
    if (members.size() < 2) {
      throw new IllegalArgumentException(source + ": an ensemble needs at least 2 members, got " + members.size());
    }
    for (Metric m : METRICS) {
      Double v = residualLogSd.get(m);
      if (v == null || !(v >= 0) || !Double.isFinite(v)) {
        throw new IllegalArgumentException(source + ": residual_log_sd." + m.key()
            + " must be a finite number >= 0, got " + v);
      }
    }
  }

  /** The residual log standard deviation of an interval metric. */
  public double residual(Metric m) {
    Double v = residualLogSd.get(m);
    if (v == null) {
      throw new IllegalArgumentException("no interval for " + m.key() + "; intervals cover " + METRICS);
    }
    return v;
  }

  /** The default ensemble of the trained-physics model. */
  public static Ensemble bundled() {
    try (InputStream in = Ensemble.class.getResourceAsStream(BUNDLED)) {
      if (in == null) {
        throw new IllegalStateException("bundled ensemble missing: " + BUNDLED);
      }
      return read(in, "bundled " + BUNDLED.substring(1));
    } catch (IOException e) {
      throw new IllegalStateException("cannot read bundled " + BUNDLED, e);
    }
  }

  /** Reads an ensemble file; errors name the file and the key. */
  public static Ensemble load(Path file) {
    if (!Files.exists(file)) {
      throw new IllegalArgumentException(file + ": no such ensemble file");
    }
    return parse(InputTrees.readText(file, "ensemble file"), file.toString());
  }

  /** Reads an ensemble from a stream; {@code source} names it in messages. */
  public static Ensemble read(InputStream in, String source) {
    try {
      return parse(new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8), source);
    } catch (IOException e) {
      throw new IllegalArgumentException(source + ": cannot read: " + e.getMessage(), e);
    }
  }

  /**
   * Parses ensemble text; {@code source} names it in messages. YAML anchors and aliases and
   * duplicate keys are refused ({@link InputTrees#yaml}).
   */
  public static Ensemble parse(String text, String source) {
    JsonNode root = InputTrees.yaml(text, source);
    if (root == null) {
      throw new IllegalArgumentException(source + ": the ensemble file is empty; expected a mapping with version,"
          + " residual_log_sd and members");
    }
    if (!root.isObject()) {
      throw new IllegalArgumentException(source + ": expected a mapping with version, residual_log_sd and members");
    }
    for (Iterator<String> it = root.fieldNames(); it.hasNext(); ) {
      String k = it.next();
      if (!List.of("version", "latency_model", "description", "residual_log_sd", "fit_domain",
          "extrapolation_log_sd", "scales_estimated_on", "members").contains(k)) {
        throw new IllegalArgumentException(source + ": unknown key '"
            + InputTrees.quote(k) + "'; expected version, latency_model,"
            + " description, residual_log_sd, fit_domain, extrapolation_log_sd, scales_estimated_on, members");
      }
    }
    JsonNode version = root.get("version");
    if (version == null || !version.canConvertToInt() || version.asInt() != CoefficientFiles.VERSION) {
      throw new IllegalArgumentException(source + ": key 'version' must be " + CoefficientFiles.VERSION
          + ", got " + version);
    }
    String model = root.path("latency_model").asText("trained-physics");
    JsonNode residual = root.get("residual_log_sd");
    if (residual == null || !residual.isObject()) {
      throw new IllegalArgumentException(source + ": key 'residual_log_sd' must be a mapping with "
          + METRICS.stream().map(Metric::key).toList());
    }
    Map<Metric, Double> sd = new LinkedHashMap<>();
    for (Metric m : METRICS) {
      JsonNode v = residual.get(m.key());
      if (v == null || !v.isNumber()) {
        throw new IllegalArgumentException(source + ": key 'residual_log_sd." + m.key() + "' must be a number, got " + v);
      }
      sd.put(m, v.asDouble());
    }
    JsonNode members = root.get("members");
    if (members == null || !members.isArray()) {
      throw new IllegalArgumentException(source + ": key 'members' must be a list of coefficient sets");
    }
    List<Member> out = new ArrayList<>();
    for (int i = 0; i < members.size(); i++) {
      JsonNode m = members.get(i);
      String where = source + ": members[" + i + "]";
      if (!m.isObject()) {
        throw new IllegalArgumentException(where + " must be a mapping with held_out and coefficient lists");
      }
      JsonNode held = m.get("held_out");
      if (held == null || !held.isTextual() || held.asText().isBlank()) {
        throw new IllegalArgumentException(where + ".held_out must be the name of the group left out of that fit");
      }
      ObjectNode vectors = ((ObjectNode) m).deepCopy();
      vectors.remove("held_out");
      out.add(new Member(held.asText(), CoefficientFiles.vectors(vectors, where)));
    }
    FitDomain domain = root.has("fit_domain") ? FitDomain.read(root.get("fit_domain"), source + ": fit_domain") : null;
    Map<Extrapolation.Kind, Scale> scales = new LinkedHashMap<>();
    JsonNode ex = root.get("extrapolation_log_sd");
    if (ex != null) {
      if (!ex.isObject()) {
        throw new IllegalArgumentException(source + ": key 'extrapolation_log_sd' must be a mapping of kinds");
      }
      for (Iterator<String> it = ex.fieldNames(); it.hasNext(); ) {
        String kind = it.next();
        String where = source + ": extrapolation_log_sd." + kind;
        Extrapolation.Kind k;
        try {
          k = Extrapolation.Kind.parse(kind);
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException(where + ": " + e.getMessage(), e);
        }
        JsonNode n = ex.get(kind);
        Map<Metric, Double> v = new LinkedHashMap<>();
        for (Metric m : METRICS) {
          JsonNode x = n.get(m.key());
          if (x == null || !x.isNumber() || !(x.asDouble() >= 0) || !Double.isFinite(x.asDouble())) {
            throw new IllegalArgumentException(where + "." + m.key() + " must be a number >= 0, got " + x);
          }
          v.put(m, x.asDouble());
        }
        scales.put(k, new Scale(v, n.path("runs").asInt(0)));
      }
    }
    return new Ensemble(model, out, sd, domain, scales, scaleRuns(root.get("scales_estimated_on"), source), source);
  }

  /** The run ids of {@code scales_estimated_on}: a list of distinct, non-blank strings (none when absent). */
  private static List<String> scaleRuns(JsonNode n, String source) {
    if (n == null) {
      return List.of();
    }
    String key = source + ": key 'scales_estimated_on'";
    if (!n.isArray()) {
      throw new IllegalArgumentException(key + " must be a list of run ids");
    }
    List<String> ids = new ArrayList<>();
    java.util.Set<String> seen = new java.util.HashSet<>();
    for (int i = 0; i < n.size(); i++) {
      JsonNode id = n.get(i);
      if (!id.isTextual() || id.asText().isBlank()) {
        throw new IllegalArgumentException(key + "[" + i + "] must be a run id, got " + id);
      }
      if (!seen.add(id.asText())) {
        throw new IllegalArgumentException(key + "[" + i + "]: run '" + id.asText() + "' is listed twice");
      }
      ids.add(id.asText());
    }
    return ids;
  }

  /** The file text; {@link #read} gives back equal members and residuals. */
  public String toYaml(List<String> provenance) {
    StringBuilder sb = new StringBuilder();
    for (String line : provenance) {
      sb.append("# ").append(line.replace('\n', ' ')).append('\n');
    }
    sb.append("version: ").append(CoefficientFiles.VERSION).append('\n');
    sb.append("latency_model: ").append(latencyModel).append('\n');
    sb.append("residual_log_sd:\n");
    for (Metric m : METRICS) {
      sb.append("  ").append(m.key()).append(": ").append(residual(m)).append('\n');
    }
    if (domain != null) {
      sb.append("fit_domain:\n").append(domain.toYaml("  "));
    }
    if (!extrapolation.isEmpty()) {
      sb.append("extrapolation_log_sd:\n");
      for (var e : extrapolation.entrySet()) {
        sb.append("  ").append(e.getKey().key()).append(": {");
        for (Metric m : METRICS) {
          sb.append(m.key()).append(": ").append(e.getValue().of(m)).append(", ");
        }
        sb.append("runs: ").append(e.getValue().runs()).append("}\n");
      }
    }
    if (!scaleRuns.isEmpty()) {
      sb.append("scales_estimated_on:\n");
      for (String id : scaleRuns) {
        sb.append("  - ").append(io.blis.workload.StrictYaml.quote(id)).append('\n');
      }
    }
    sb.append("members:\n");
    for (Member m : members) {
      sb.append("  - held_out: \"").append(m.heldOut().replace("\\", "\\\\").replace("\"", "\\\"")).append("\"\n");
      for (String name : m.coefficients().names()) {
        double[] v = m.coefficients().vector(name);
        sb.append("    ").append(name).append(": [");
        for (int i = 0; i < v.length; i++) {
          sb.append(i == 0 ? "" : ", ").append(v[i]);
        }
        sb.append("]\n");
      }
    }
    return sb.toString();
  }
}
