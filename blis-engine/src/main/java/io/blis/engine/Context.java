package io.blis.engine;

import io.blis.api.Coefficients;
import io.blis.api.DeploymentSpec;
import io.blis.api.HardwareSpec;
import io.blis.api.ModelSpec;
import io.blis.api.ProviderContext;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * A {@link ProviderContext} made of plain values: what the CLI and embedding code hand to
 * latency-model, scheduler and router providers.
 */
public record Context(ModelSpec model, HardwareSpec hardware, DeploymentSpec deployment,
    Coefficients coefficients, Map<String, String> options, long seed) implements ProviderContext {

  public Context {
    Objects.requireNonNull(coefficients, "coefficients");
    options = java.util.Collections.unmodifiableMap(new TreeMap<>(options));
  }
}
