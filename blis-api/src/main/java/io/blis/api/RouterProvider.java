package io.blis.api;

/**
 * Creates {@link Router}s. Register an implementation in {@code
 * META-INF/services/io.blis.api.RouterProvider}.
 */
public interface RouterProvider extends NamedProvider {

  /**
   * Builds the cluster's router. Called once per simulation.
   *
   * @param context the first pool's model, hardware, deployment, coefficients and seed, with the
   *     router's own parameters as {@link ProviderContext#options()}
   * @return a new router
   * @throws IllegalArgumentException with a message naming the offending option when the
   *     parameters are invalid
   */
  Router create(ProviderContext context);
}
