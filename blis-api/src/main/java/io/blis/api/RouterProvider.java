package io.blis.api;

/**
 * Creates {@link Router}s. Register an implementation in {@code
 * META-INF/services/io.blis.api.RouterProvider}.
 */
public interface RouterProvider extends NamedProvider {

  Router create(ProviderContext context);
}
