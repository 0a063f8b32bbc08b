package io.blis.engine.models;

import io.blis.api.Router;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Several models on one fleet: which pools serve which model, under which names a request may
 * name it, the router of each model's instances, and optional SLO targets per model. A request
 * naming a model goes to an instance of a pool serving it, by that model's router; a request
 * naming a model no pool serves is refused ({@link #NOT_SERVED}); a request naming none goes to
 * any instance, by the cluster's router.
 *
 * @param models the models served, each once
 */
public record ModelRouting(List<Served> models) {

  /** The reason of a request refused because no pool serves the model it names. */
  public static final String NOT_SERVED = "model_not_served";

  public ModelRouting {
    models = List.copyOf(models);
    Set<String> names = new HashSet<>();
    Set<String> pools = new HashSet<>();
    for (Served m : models) {
      Set<String> own = new HashSet<>();
      m.names().forEach(n -> own.add(key(n)));
      own.add(key(m.name()));
      for (String n : own) {
        if (!names.add(n)) {
          throw new IllegalArgumentException("model name '" + n + "' names two served models");
        }
      }
      for (String p : m.pools()) {
        if (!pools.add(p)) {
          throw new IllegalArgumentException("pool '" + p + "' serves two models");
        }
      }
    }
  }

  /**
   * One served model.
   *
   * @param name its name in results (the catalog's name)
   * @param names every name a request may give it by (case is ignored), {@code name} among them
   * @param pools the pools serving it
   * @param router routes its requests among its instances (its own object: a router keeps state
   *     over the instances it sees)
   * @param slo its requests' targets in place of their SLO class's, or null
   */
  public record Served(String name, Set<String> names, Set<String> pools, Router router, Targets slo) {
    public Served {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(router, "router");
      names = Set.copyOf(names);
      pools = Set.copyOf(pools);
      if (pools.isEmpty()) {
        throw new IllegalArgumentException("model " + name + " is served by no pool");
      }
    }
  }

  /**
   * A model's own SLO targets, as a policy bundle's {@code slo:} gives a class's: TTFT and E2E,
   * milliseconds, 0 for none.
   */
  public record Targets(double ttftMs, double e2eMs) {}

  /** The lookup key of a model name: lower case, trimmed. */
  public static String key(String name) {
    return name.strip().toLowerCase(Locale.ROOT);
  }

  /** The served models by the lower-case names requests may give. */
  public Map<String, Integer> byName() {
    Map<String, Integer> out = new HashMap<>();
    for (int i = 0; i < models.size(); i++) {
      for (String n : models.get(i).names()) {
        out.put(key(n), i);
      }
      out.put(key(models.get(i).name()), i);
    }
    return out;
  }
}
