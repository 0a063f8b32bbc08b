package io.blis.latency.coeff;

import com.fasterxml.jackson.databind.JsonNode;
import io.blis.api.Coefficients;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Reads latency-model coefficients from versioned files and from the command line.
 *
 * <p>File format (YAML or JSON; JSON is valid YAML):
 *
 * <pre>
 * version: 1                        # required, currently 1
 * latency_model: trained-physics    # optional: the model the file is meant for
 * description: "..."                # optional free text (also: source, notes, model, gpu)
 * alpha: [15563.2, 777.3, 45.9]     # any other key: a list of finite numbers (or one number)
 * beta: [0.15, 0.0, 1.36, ...]
 * </pre>
 *
 * Which vectors a model reads, and the unit of every entry, is documented by each latency model.
 */
public final class CoefficientFiles {

  /** The only file version this reader understands. */
  public static final int VERSION = 1;

  private static final Set<String> TEXT_KEYS =
      Set.of("latency_model", "description", "source", "notes", "model", "gpu", "hardware");
  private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_.-]*");

  private CoefficientFiles() {}

  /** A parsed coefficient file: the model it names (may be empty) and its vectors. */
  public record CoefficientFile(String latencyModel, Coefficients coefficients) {}

  /**
   * Loads the vectors of a coefficient file.
   *
   * @throws IllegalArgumentException naming the file and the key when the file cannot be read,
   *     has no or a wrong {@code version}, or a value is not a list of finite numbers
   */
  public static Coefficients load(Path file) {
    return read(file).coefficients();
  }

  /** As {@link #load(Path)}, also returning the {@code latency_model} the file names. */
  public static CoefficientFile read(Path file) {
    return parse(InputTrees.readText(file, "coefficient file"), file.toString());
  }

  /**
   * The bundled default coefficient file of a latency model ({@code
   * io/blis/latency/coefficients/<model>.yaml} on the class path).
   *
   * @throws IllegalStateException if the resource is missing (a packaging bug)
   */
  public static Coefficients bundled(String latencyModel) {
    String resource = "/io/blis/latency/coefficients/" + latencyModel + ".yaml";
    try (InputStream in = CoefficientFiles.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("bundled coefficient file missing: " + resource);
      }
      return read(in, "bundled " + resource.substring(1)).coefficients();
    } catch (IOException e) {
      throw new IllegalStateException("cannot read bundled " + resource, e);
    }
  }

  /** Reads a coefficient file from a stream; {@code source} names it in error messages. */
  public static CoefficientFile read(InputStream in, String source) {
    String text;
    try {
      text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalArgumentException(source + ": cannot read: " + e.getMessage(), e);
    }
    return parse(text, source);
  }

  /**
   * Parses coefficient-file text; {@code source} names it in error messages. YAML anchors and
   * aliases and duplicate keys are refused ({@link InputTrees#yaml}).
   */
  public static CoefficientFile parse(String text, String source) {
    JsonNode root = InputTrees.yaml(text, source);
    if (root == null) {
      throw new IllegalArgumentException(source + ": the coefficient file is empty; expected 'version: "
          + VERSION + "' and coefficient lists such as alpha: [...], beta: [...]");
    }
    if (!root.isObject()) {
      throw new IllegalArgumentException(
          source + ": expected a mapping with 'version: " + VERSION + "' and coefficient lists");
    }
    JsonNode version = root.get("version");
    if (version == null || !version.canConvertToInt()) {
      throw new IllegalArgumentException(
          source + ": key 'version' is required and must be the integer " + VERSION);
    }
    if (version.asInt() != VERSION) {
      throw new IllegalArgumentException(
          source + ": key 'version' is " + version.asText() + "; this BLIS reads version "
              + VERSION);
    }
    String latencyModel = root.path("latency_model").asText("");
    return new CoefficientFile(latencyModel, vectors(root, source));
  }

  /**
   * The coefficient vectors of a parsed mapping (every key but {@code version} and the text keys
   * such as {@code latency_model} and {@code description}), for formats that embed coefficient
   * sets, such as an interval ensemble.
   *
   * @throws IllegalArgumentException naming {@code source} and the key when a value is not a list
   *     of finite numbers or there is no vector
   */
  public static Coefficients vectors(JsonNode root, String source) {
    Map<String, double[]> vectors = new LinkedHashMap<>();
    Iterator<Map.Entry<String, JsonNode>> it = root.fields();
    while (it.hasNext()) {
      Map.Entry<String, JsonNode> e = it.next();
      String key = e.getKey();
      if (key.equals("version") || TEXT_KEYS.contains(key)) {
        continue;
      }
      vectors.put(key, numbers(source, key, e.getValue()));
    }
    if (vectors.isEmpty()) {
      throw new IllegalArgumentException(
          source + ": no coefficient lists (expected keys such as alpha: [...], beta: [...])");
    }
    return Coefficients.of(source, vectors);
  }

  private static double[] numbers(String source, String key, JsonNode value) {
    if (value.isNumber()) {
      return new double[] {finite(source, key, 0, value.asDouble())};
    }
    if (!value.isArray() || value.isEmpty()) {
      throw new IllegalArgumentException(
          source + ": key '" + InputTrees.oneLine(key) + "' must be a non-empty list of numbers, got " + value);
    }
    double[] out = new double[value.size()];
    for (int i = 0; i < out.length; i++) {
      JsonNode v = value.get(i);
      if (!v.isNumber()) {
        throw new IllegalArgumentException(
            source + ": key '" + InputTrees.oneLine(key) + "' entry " + i + " must be a number, got " + v);
      }
      out[i] = finite(source, key, i, v.asDouble());
    }
    return out;
  }

  private static double finite(String source, String key, int index, double v) {
    if (!Double.isFinite(v)) {
      throw new IllegalArgumentException(
          source + ": key '" + InputTrees.oneLine(key) + "' entry " + index + " must be finite, got " + v);
    }
    return v;
  }

  /**
   * Renders coefficients as a version-1 coefficient file (YAML) that {@link #load(Path)} reads back
   * to identical values. Deterministic: vectors in their order, numbers in shortest round-trip form.
   *
   * @param latencyModel the model the file is for (may be empty)
   * @param description free text, e.g. how the values were obtained (may be empty)
   */
  public static String toYaml(String latencyModel, String description, Coefficients c) {
    StringBuilder sb = new StringBuilder("version: ").append(VERSION).append('\n');
    if (latencyModel != null && !latencyModel.isEmpty()) {
      sb.append("latency_model: ").append(latencyModel).append('\n');
    }
    if (description != null && !description.isEmpty()) {
      sb.append("description: \"")
          .append(description.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", " "))
          .append("\"\n");
    }
    for (String name : c.names()) {
      double[] v = c.vector(name);
      sb.append(name).append(": [");
      for (int i = 0; i < v.length; i++) {
        sb.append(i == 0 ? "" : ", ").append(v[i]);
      }
      sb.append("]\n");
    }
    return sb.toString();
  }

  /**
   * The inline form {@link #parseInline} reads back to identical values ({@code alpha=1.0,2.0;beta=...}).
   */
  public static String toInline(Coefficients c) {
    StringBuilder sb = new StringBuilder();
    for (String name : c.names()) {
      sb.append(sb.length() == 0 ? "" : ";").append(name).append('=');
      double[] v = c.vector(name);
      for (int i = 0; i < v.length; i++) {
        sb.append(i == 0 ? "" : ",").append(v[i]);
      }
    }
    return sb.toString();
  }

  /**
   * Parses inline coefficients as given on the command line: {@code name=v1,v2,...} groups
   * separated by {@code ;}, e.g. {@code alpha=1,2,3;beta=4,5,6}.
   *
   * @throws IllegalArgumentException with one message quoting the text and saying what is wrong
   */
  public static Coefficients parseInline(String text) {
    String expected = "expected name=v1,v2,...;name=v1,... (e.g. alpha=1,2,3;beta=4,5,6)";
    if (text == null || text.isBlank()) {
      throw new IllegalArgumentException("inline coefficients are empty; " + expected);
    }
    String shown = InputTrees.quote(text);
    Map<String, double[]> vectors = new LinkedHashMap<>();
    for (String group : text.split(";")) {
      if (group.isBlank()) {
        continue;
      }
      int eq = group.indexOf('=');
      String name = eq < 0 ? group.trim() : group.substring(0, eq).trim();
      if (eq < 0 || !NAME.matcher(name).matches()) {
        throw new IllegalArgumentException(
            "inline coefficients '" + shown + "': '" + InputTrees.quote(group.trim())
                + "' is not name=values; "
                + expected);
      }
      if (vectors.containsKey(name)) {
        throw new IllegalArgumentException(
            "inline coefficients '" + shown + "': '" + name + "' is given twice");
      }
      String[] parts = group.substring(eq + 1).split(",", -1);
      double[] values = new double[parts.length];
      for (int i = 0; i < parts.length; i++) {
        String p = parts[i].trim();
        try {
          values[i] = Double.parseDouble(p);
        } catch (NumberFormatException e) {
          throw new IllegalArgumentException(
              "inline coefficients '" + shown + "': value " + i + " of '" + name + "' ('"
                  + InputTrees.quote(p) + "') is not a number; " + expected);
        }
        if (!Double.isFinite(values[i])) {
          throw new IllegalArgumentException(
              "inline coefficients '" + shown + "': value " + i + " of '" + name
                  + "' must be finite, got " + p);
        }
      }
      vectors.put(name, values);
    }
    if (vectors.isEmpty()) {
      throw new IllegalArgumentException("inline coefficients '" + shown + "' are empty; " + expected);
    }
    return Coefficients.of("inline coefficients", vectors);
  }
}
