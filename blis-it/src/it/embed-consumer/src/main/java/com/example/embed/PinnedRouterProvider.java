package com.example.embed;

import io.blis.api.ClusterView;
import io.blis.api.ProviderContext;
import io.blis.api.RequestView;
import io.blis.api.Router;
import io.blis.api.RouterProvider;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Sends every request to one instance: the policy parameter {@code instance} (default 0).
 * Selected by the name {@code pinned}.
 */
public final class PinnedRouterProvider implements RouterProvider {

  /** Routers created. */
  public static final AtomicLong CREATED = new AtomicLong();
  /** Requests routed. */
  public static final AtomicLong ROUTED = new AtomicLong();

  @Override
  public String name() {
    return "pinned";
  }

  @Override
  public Router create(ProviderContext context) {
    int target = Integer.parseInt(context.option("instance").orElse("0"));
    CREATED.incrementAndGet();
    return (RequestView request, ClusterView cluster) -> {
      ROUTED.incrementAndGet();
      return Math.min(target, cluster.size() - 1);
    };
  }
}
