package io.blis.api;

/**
 * Creates {@link LatencyModel}s. Register an implementation in {@code
 * META-INF/services/io.blis.api.LatencyModelProvider}.
 */
public interface LatencyModelProvider extends NamedProvider {

  /**
   * Builds a latency model for one instance.
   *
   * @throws IllegalArgumentException with a message naming the offending input when the context
   *     cannot be served (bad coefficients, unsupported model)
   */
  LatencyModel create(ProviderContext context);
}
