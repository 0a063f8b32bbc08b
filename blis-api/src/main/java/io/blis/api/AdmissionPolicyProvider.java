package io.blis.api;

/**
 * Creates {@link AdmissionPolicy}s. Register an implementation in {@code
 * META-INF/services/io.blis.api.AdmissionPolicyProvider}. The policy's own parameters (for example
 * a token bucket's capacity) arrive as {@link ProviderContext#options()}.
 */
public interface AdmissionPolicyProvider extends NamedProvider {

  AdmissionPolicy create(ProviderContext context);
}
