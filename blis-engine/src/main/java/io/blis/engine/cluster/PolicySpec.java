package io.blis.engine.cluster;

import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * A policy chosen by provider name with its own parameters (snake_case keys, values as written),
 * handed to the provider as its context's options.
 */
public record PolicySpec(String name, Map<String, String> params) {

  public PolicySpec {
    Objects.requireNonNull(name, "name");
    if (name.isBlank()) {
      throw new IllegalArgumentException("policy name must not be empty");
    }
    params = Collections.unmodifiableMap(new TreeMap<>(params));
  }

  /** A policy without parameters. */
  public static PolicySpec of(String name) {
    return new PolicySpec(name, Map.of());
  }
}
