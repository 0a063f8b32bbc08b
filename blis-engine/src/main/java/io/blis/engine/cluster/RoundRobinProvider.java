package io.blis.engine.cluster;

import io.blis.api.ProviderContext;
import io.blis.api.Router;
import io.blis.api.RouterProvider;

/** Provides the {@code round-robin} router. */
public final class RoundRobinProvider implements RouterProvider {

  @Override
  public String name() {
    return "round-robin";
  }

  @Override
  public String description() {
    return "the k-th request goes to instance k mod n";
  }

  @Override
  public Router create(ProviderContext context) {
    return Routers.roundRobin();
  }
}
