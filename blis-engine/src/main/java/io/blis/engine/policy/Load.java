package io.blis.engine.policy;

import io.blis.api.ClusterView;
import io.blis.api.InstanceSnapshot;

/** The load measure routers share: waiting + running + in flight (routed, not finished). */
final class Load {

  private Load() {}

  static int of(InstanceSnapshot s) {
    return s.queueDepth() + s.runningBatchSize() + s.inFlight();
  }

  /**
   * The index with the smallest load ({@code sign} 1) or the largest ({@code sign} -1) among the
   * instances with {@code eligible[i]} (all when null); ties go to the lowest index.
   */
  static int extreme(ClusterView cluster, int sign, boolean[] eligible) {
    int best = -1;
    long bestKey = Long.MAX_VALUE;
    for (int i = 0, n = cluster.size(); i < n; i++) {
      if (eligible != null && !eligible[i]) {
        continue;
      }
      long key = (long) sign * of(cluster.get(i));
      if (key < bestKey) {
        best = i;
        bestKey = key;
      }
    }
    return best;
  }
}
