package io.blis.api;

/**
 * Creates {@link AdmissionPolicy}s. Register an implementation in {@code
 * META-INF/services/io.blis.api.AdmissionPolicyProvider}. The policy's own parameters (for example
 * a token bucket's capacity) arrive as {@link ProviderContext#options()}.
 */
public interface AdmissionPolicyProvider extends NamedProvider {

  /**
   * Builds the cluster's admission policy. Called once per simulation.
   *
   * @param context the first pool's model, hardware, deployment, coefficients and seed, with the
   *     admission policy's own parameters as {@link ProviderContext#options()}
   * @return a new admission policy
   * @throws IllegalArgumentException with a message naming the offending option when the
   *     parameters are invalid
   */
  AdmissionPolicy create(ProviderContext context);
}
