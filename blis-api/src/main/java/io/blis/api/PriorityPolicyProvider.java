package io.blis.api;

/**
 * Creates {@link PriorityPolicy}s. Register an implementation in {@code
 * META-INF/services/io.blis.api.PriorityPolicyProvider}. The policy's own parameters arrive as
 * {@link ProviderContext#options()}.
 */
public interface PriorityPolicyProvider extends NamedProvider {

  PriorityPolicy create(ProviderContext context);
}
