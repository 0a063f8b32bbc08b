package io.blis.engine.spec;

import com.fasterxml.jackson.databind.JsonNode;
import io.blis.latency.coeff.InputTrees;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;

/**
 * Published acceptance profiles by method and dataset, each with its source: the bundled {@code
 * acceptance-profiles.yaml} beside this class.
 *
 * <pre>
 * version: 1
 * profiles:
 *   - name: eagle3-llama-3.1-8b-mt-bench
 *     method: eagle3
 *     default: true                     # the method's profile when none is named (one per method)
 *     model: meta-llama/Llama-3.1-8B-Instruct
 *     dataset: MT-Bench
 *     position_rates: [0.75, 0.5, 0.3]  # unconditional, as vLLM's metrics print them
 *     source: https://...
 * </pre>
 *
 * @param profiles the table, in order
 */
public record AcceptanceProfiles(List<Entry> profiles) {

  private static final String RESOURCE = "acceptance-profiles.yaml";
  private static final Set<String> KEYS = Set.of("name", "method", "default", "model", "dataset", "position_rates",
      "source", "note");
  private static AcceptanceProfiles bundled;

  public AcceptanceProfiles {
    profiles = List.copyOf(profiles);
  }

  /**
   * One published profile.
   *
   * @param name how {@code --speculative-acceptance-profile} names it
   * @param method the drafter's method it was measured with
   * @param isDefault whether it is the method's profile when none is named
   * @param model the target model it was measured on
   * @param dataset the prompts it was measured on
   * @param positionRates unconditional per-position acceptance rates
   * @param source where it was published
   */
  public record Entry(String name, SpeculativeMethod method, boolean isDefault, String model, String dataset,
      double[] positionRates, String source) {

    /** {@return the profile} */
    public AcceptanceProfile profile() {
      return AcceptanceProfile.ofPositionRates(positionRates);
    }
  }

  /** {@return the bundled table} */
  public static synchronized AcceptanceProfiles bundled() {
    if (bundled == null) {
      try (InputStream in = AcceptanceProfiles.class.getResourceAsStream(RESOURCE)) {
        if (in == null) {
          throw new IllegalStateException("the bundled " + RESOURCE + " is missing from the classpath");
        }
        bundled = parse(new String(in.readAllBytes(), StandardCharsets.UTF_8), "bundled " + RESOURCE);
      } catch (IOException e) {
        throw new IllegalStateException("cannot read the bundled " + RESOURCE, e);
      }
    }
    return bundled;
  }

  /**
   * Reads a table of the form above.
   *
   * @throws IllegalArgumentException naming the source, the entry and the key at fault
   */
  public static AcceptanceProfiles parse(String yaml, String source) {
    JsonNode root = InputTrees.yaml(yaml, source);
    if (root == null || !root.isObject() || !root.path("profiles").isArray()) {
      throw new IllegalArgumentException(source + ": expected 'version: 1' and a 'profiles' list");
    }
    if (root.path("version").asInt(0) != 1) {
      throw new IllegalArgumentException(source + ": version must be 1, got " + root.get("version"));
    }
    List<Entry> out = new ArrayList<>();
    java.util.Set<String> names = new java.util.HashSet<>();
    java.util.Set<SpeculativeMethod> defaults = java.util.EnumSet.noneOf(SpeculativeMethod.class);
    int i = 0;
    for (JsonNode p : root.get("profiles")) {
      i++;
      String where = source + ", profile " + i;
      for (Iterator<String> it = p.fieldNames(); it.hasNext(); ) {
        String k = it.next();
        if (!KEYS.contains(k)) {
          throw new IllegalArgumentException(where + ": unknown key '" + k + "'; expected " + new java.util.TreeSet<>(KEYS));
        }
      }
      String name = p.path("name").asText("");
      if (name.isBlank() || !names.add(name)) {
        throw new IllegalArgumentException(where + ": needs a name of its own, got '" + name + "'");
      }
      SpeculativeMethod method;
      try {
        method = SpeculativeMethod.of(p.path("method").asText(""));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(where + " (" + InputTrees.quote(name) + "): " + e.getMessage(), e);
      }
      JsonNode rates = p.path("position_rates");
      if (!rates.isArray() || rates.isEmpty()) {
        throw new IllegalArgumentException(where + " (" + InputTrees.quote(name) + "): position_rates must be a list of numbers");
      }
      double[] r = new double[rates.size()];
      for (int k = 0; k < r.length; k++) {
        if (!rates.get(k).isNumber()) {
          throw new IllegalArgumentException(where + " (" + InputTrees.quote(name) + "): position_rates[" + k + "] is not a number");
        }
        r[k] = rates.get(k).asDouble();
      }
      try {
        AcceptanceProfile.ofPositionRates(r);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(where + " (" + InputTrees.quote(name) + "): " + e.getMessage(), e);
      }
      boolean isDefault = p.path("default").asBoolean(false);
      if (isDefault && !defaults.add(method)) {
        throw new IllegalArgumentException(where + " (" + InputTrees.quote(name) + "): a second default for " + method.vllmName());
      }
      String src = p.path("source").asText("");
      if (src.isBlank()) {
        throw new IllegalArgumentException(where + " (" + InputTrees.quote(name) + "): every profile names its source");
      }
      out.add(new Entry(name, method, isDefault, p.path("model").asText(""), p.path("dataset").asText(""), r, src));
    }
    return new AcceptanceProfiles(out);
  }

  /**
   * The profile named {@code name}.
   *
   * @throws IllegalArgumentException naming the profiles there are
   */
  public Entry named(String name) {
    for (Entry e : profiles) {
      if (e.name().equals(name)) {
        return e;
      }
    }
    throw new IllegalArgumentException("no acceptance profile '" + InputTrees.quote(String.valueOf(name))
        + "'; the bundled ones are " + names());
  }

  /** {@return the method's default profile, or null when the table has none for it} */
  public Entry defaultFor(SpeculativeMethod method) {
    for (Entry e : profiles) {
      if (e.method() == method && e.isDefault()) {
        return e;
      }
    }
    return null;
  }

  /** {@return the profiles' names, in order} */
  public List<String> names() {
    return profiles.stream().map(Entry::name).toList();
  }
}
