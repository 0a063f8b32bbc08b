package io.blis.api;

/**
 * Creates {@link PriorityPolicy}s. Register an implementation in {@code
 * META-INF/services/io.blis.api.PriorityPolicyProvider}. The policy's own parameters arrive as
 * {@link ProviderContext#options()}.
 */
public interface PriorityPolicyProvider extends NamedProvider {

  /**
   * Builds the cluster's priority policy. Called once per simulation.
   *
   * @param context the first pool's model, hardware, deployment, coefficients and seed, with the
   *     priority policy's own parameters as {@link ProviderContext#options()}
   * @return a new priority policy
   * @throws IllegalArgumentException with a message naming the offending option when the
   *     parameters are invalid
   */
  PriorityPolicy create(ProviderContext context);
}
