package io.blis.engine.cluster;

import io.blis.api.ProviderContext;
import io.blis.api.Router;
import io.blis.api.RouterProvider;

/** Provides the {@code least-loaded} router. */
public final class LeastLoadedProvider implements RouterProvider {

  @Override
  public String name() {
    return "least-loaded";
  }

  @Override
  public String description() {
    return "fewest requests in flight, then shortest waiting queue, then lowest index";
  }

  @Override
  public Router create(ProviderContext context) {
    return Routers.leastLoaded();
  }
}
