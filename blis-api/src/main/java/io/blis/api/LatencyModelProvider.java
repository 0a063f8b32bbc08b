package io.blis.api;

/**
 * Creates {@link LatencyModel}s. Register an implementation in {@code
 * META-INF/services/io.blis.api.LatencyModelProvider}.
 */
public interface LatencyModelProvider extends NamedProvider {

  /**
   * Builds a latency model for one instance. Called once for every scheduler of a pool (each
   * instance, or each data-parallel rank and pipeline virtual engine of one), all with the same
   * context.
   *
   * @param context the pool's model, hardware, deployment, coefficients and options
   * @return a new latency model, used by that scheduler's steps only
   * @throws IllegalArgumentException with a message naming the offending input when the context
   *     cannot be served (bad coefficients, unsupported model)
   */
  LatencyModel create(ProviderContext context);
}
