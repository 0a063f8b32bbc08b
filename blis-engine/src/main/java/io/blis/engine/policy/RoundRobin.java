package io.blis.engine.policy;

import io.blis.api.ClusterView;
import io.blis.api.RequestView;
import io.blis.api.Router;

/** Sends the k-th request to instance {@code k mod n}. */
final class RoundRobin implements Router {

  private long next;

  @Override
  public int route(RequestView request, ClusterView cluster) {
    return (int) (next++ % cluster.size());
  }
}
