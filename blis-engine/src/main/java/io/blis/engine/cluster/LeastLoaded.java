package io.blis.engine.cluster;

import io.blis.api.ClusterView;
import io.blis.api.InstanceSnapshot;
import io.blis.api.RequestView;
import io.blis.api.Router;

/**
 * Sends each request to the instance with the fewest requests in flight (routed and not
 * finished), then the shortest waiting queue, then the lowest index.
 */
final class LeastLoaded implements Router {

  @Override
  public int route(RequestView request, ClusterView cluster) {
    int best = 0;
    InstanceSnapshot b = cluster.get(0);
    int bestInFlight = b.inFlight();
    int bestQueue = b.queueDepth();
    for (int i = 1, n = cluster.size(); i < n; i++) {
      InstanceSnapshot s = cluster.get(i);
      int inFlight = s.inFlight();
      int queue = s.queueDepth();
      if (inFlight < bestInFlight || (inFlight == bestInFlight && queue < bestQueue)) {
        best = i;
        bestInFlight = inFlight;
        bestQueue = queue;
      }
    }
    return best;
  }
}
