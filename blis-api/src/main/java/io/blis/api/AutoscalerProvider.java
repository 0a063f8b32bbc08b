package io.blis.api;

/**
 * Creates {@link Autoscaler}s. Register an implementation in {@code
 * META-INF/services/io.blis.api.AutoscalerProvider}. Its parameters (a target, thresholds, a
 * schedule) arrive as {@link ProviderContext#options()}.
 */
public interface AutoscalerProvider extends NamedProvider {

  /**
   * Builds a pool's autoscaler. Called once per simulation.
   *
   * @param context the pool's model, hardware, deployment, coefficients and seed, with the
   *     autoscaler's own parameters as {@link ProviderContext#options()}
   * @return a new autoscaler
   * @throws IllegalArgumentException with a message naming the offending option when the
   *     parameters are invalid
   */
  Autoscaler create(ProviderContext context);
}
