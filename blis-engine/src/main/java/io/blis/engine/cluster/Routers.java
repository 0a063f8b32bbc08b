package io.blis.engine.cluster;

import io.blis.api.Router;

/** The built-in routers, also available by name through their {@code RouterProvider}s. */
public final class Routers {

  private Routers() {}

  /** {@code round-robin}: the k-th request goes to instance k mod n. */
  public static Router roundRobin() {
    return new RoundRobin();
  }

  /** {@code least-loaded}: fewest requests in flight, then shortest queue, then lowest index. */
  public static Router leastLoaded() {
    return new LeastLoaded();
  }
}
