package io.blis.engine.host;

import com.fasterxml.jackson.databind.JsonNode;
import io.blis.engine.cluster.VllmVersion;
import io.blis.latency.coeff.InputTrees;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;

/**
 * The host time of each generation of vLLM's engine ({@link HostTime}), read from a table: the
 * bundled {@code host-times.yaml} beside this class, or a file of the same form.
 *
 * <pre>
 * version: 1
 * generations:
 *   - name: v0-before-0.6      # vLLM's first engine before async output processing
 *     engine: v0
 *     until: "0.6.0"           # releases before this one (optional: no upper bound)
 *     per_step_us: 1500
 *     per_extra_rank_us: 500
 *     per_request_us: 20
 * </pre>
 *
 * A release takes the first generation of its engine whose {@code until} is above it.
 *
 * @param generations the table, in order
 * @param source where it was read from
 */
public record HostTimes(List<Generation> generations, String source) {

  /**
   * One generation.
   *
   * @param name its name
   * @param v1 whether it is of the V1 engine
   * @param until the first release after it, or null
   * @param time its host time
   */
  public record Generation(String name, boolean v1, VllmVersion until, HostTime time) {}

  /** Classpath resource of the bundled table. */
  public static final String BUNDLED = "/io/blis/engine/host/host-times.yaml";

  public HostTimes {
    generations = List.copyOf(generations);
  }

  /** The generation of release {@code version} of the V1 ({@code v1}) or V0 engine. */
  public Generation of(VllmVersion version, boolean v1) {
    for (Generation g : generations) {
      if (g.v1() == v1 && (g.until() == null || version.compareTo(g.until()) < 0)) {
        return g;
      }
    }
    throw new IllegalArgumentException(source + ": no generation of the " + (v1 ? "V1" : "V0") + " engine holds vLLM "
        + version.text());
  }

  /** The bundled table. */
  public static HostTimes bundled() {
    try (InputStream in = HostTimes.class.getResourceAsStream(BUNDLED)) {
      if (in == null) {
        throw new IllegalStateException("bundled host times missing: " + BUNDLED);
      }
      return parse(new String(in.readAllBytes(), StandardCharsets.UTF_8), "bundled " + BUNDLED.substring(1));
    } catch (IOException e) {
      throw new IllegalStateException("cannot read bundled " + BUNDLED, e);
    }
  }

  /** Reads a table file; errors name the file and the key. */
  public static HostTimes load(Path file) {
    return parse(InputTrees.readText(file, "host-times file"), file.toString());
  }

  private static final Set<String> KEYS = Set.of("name", "engine", "until", "per_step_us", "per_extra_rank_us",
      "per_request_us", "note");

  /** Parses a table; {@code source} names it in messages. */
  public static HostTimes parse(String text, String source) {
    JsonNode root = InputTrees.yaml(text, source);
    if (root == null || !root.isObject() || !root.path("generations").isArray()) {
      throw new IllegalArgumentException(source + ": expected a mapping with version and a list 'generations'");
    }
    if (root.path("version").asInt(-1) != 1) {
      throw new IllegalArgumentException(source + ": key 'version' must be 1, got " + root.get("version"));
    }
    List<Generation> out = new ArrayList<>();
    int i = 0;
    for (JsonNode g : root.get("generations")) {
      String where = source + ": generations[" + i++ + "]";
      if (!g.isObject()) {
        throw new IllegalArgumentException(where + " must be a mapping");
      }
      for (Iterator<String> it = g.fieldNames(); it.hasNext(); ) {
        String k = it.next();
        if (!KEYS.contains(k)) {
          throw new IllegalArgumentException(where + ": unknown key '" + InputTrees.quote(k) + "'; expected one of "
              + KEYS.stream().sorted().toList());
        }
      }
      String name = g.path("name").asText("");
      String engine = g.path("engine").asText("");
      if (name.isBlank() || !(engine.equals("v0") || engine.equals("v1"))) {
        throw new IllegalArgumentException(where + ": needs a name and engine v0 or v1");
      }
      VllmVersion until = null;
      if (g.has("until")) {
        try {
          until = VllmVersion.parse(g.get("until").asText());
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException(where + ".until: " + e.getMessage(), e);
        }
      }
      try {
        out.add(new Generation(name, engine.equals("v1"), until, new HostTime(number(g, "per_step_us", where),
            number(g, "per_extra_rank_us", where), number(g, "per_request_us", where))));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(where + ": " + e.getMessage(), e);
      }
    }
    if (out.isEmpty()) {
      throw new IllegalArgumentException(source + ": 'generations' is empty");
    }
    return new HostTimes(out, source);
  }

  private static double number(JsonNode g, String key, String where) {
    JsonNode v = g.get(key);
    if (v == null || !v.isNumber()) {
      throw new IllegalArgumentException(where + "." + key + " must be a number (us), got " + v);
    }
    return v.asDouble();
  }
}
