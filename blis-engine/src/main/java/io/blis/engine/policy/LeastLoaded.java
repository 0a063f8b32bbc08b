package io.blis.engine.policy;

import io.blis.api.ClusterView;
import io.blis.api.RequestView;
import io.blis.api.Router;

/**
 * Sends each request to the instance with the smallest waiting + running + in-flight count (the
 * first two from the possibly stale snapshot, the last always current), ties to the lowest index.
 * With {@code busiest} it does the opposite: the pathological {@code always-busiest}.
 */
final class LeastLoaded implements Router {

  private final int sign;

  LeastLoaded(boolean busiest) {
    this.sign = busiest ? -1 : 1;
  }

  @Override
  public int route(RequestView request, ClusterView cluster) {
    return Load.extreme(cluster, sign, null);
  }

  @Override
  public boolean score(RequestView request, ClusterView cluster, double[] scores) {
    for (int i = 0, n = cluster.size(); i < n; i++) {
      scores[i] = -sign * (double) Load.of(cluster.get(i));
    }
    return true;
  }
}
