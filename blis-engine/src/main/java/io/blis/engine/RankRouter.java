package io.blis.engine;

import io.blis.api.ClusterView;
import io.blis.api.InstanceSnapshot;
import io.blis.api.RequestView;
import io.blis.api.Router;

/**
 * Routing when instances hold several schedulers (data-parallel ranks, pipeline virtual engines):
 * the cluster's router sees one snapshot per instance, summed over its ranks, and picks an
 * instance; the instance then hands the request to its rank with the fewest requests in flight
 * (lowest rank on a tie), as vLLM's data-parallel load balancer and its pipeline virtual engines
 * do.
 */
final class RankRouter implements Router {

  private final Router inner;
  /** Engine index of each instance's first rank; one more entry marks the end. */
  private final int[] firstRank;
  private final GroupView view;
  private ClusterView ranks;

  /**
   * @param inner the cluster's router
   * @param firstRank engine index of each instance's first rank, then the number of ranks
   */
  RankRouter(Router inner, int[] firstRank) {
    this.inner = inner;
    this.firstRank = firstRank.clone();
    this.view = new GroupView();
  }

  @Override
  public int route(RequestView request, ClusterView cluster) {
    ranks = cluster;
    int group = inner.route(request, view);
    if (group < 0 || group >= view.size()) {
      throw new IllegalStateException("router chose instance " + group + " of " + view.size());
    }
    int best = firstRank[group];
    for (int i = best + 1; i < firstRank[group + 1]; i++) {
      if (cluster.get(i).inFlight() < cluster.get(best).inFlight()) {
        best = i;
      }
    }
    return best;
  }

  /** The instances as the cluster's router sees them. */
  private final class GroupView implements ClusterView {
    private final Group[] groups;

    GroupView() {
      groups = new Group[firstRank.length - 1];
      for (int g = 0; g < groups.length; g++) {
        groups[g] = new Group(g);
      }
    }

    @Override
    public int size() {
      return groups.length;
    }

    @Override
    public InstanceSnapshot get(int index) {
      return groups[index];
    }

    @Override
    public long nowUs() {
      return ranks.nowUs();
    }
  }

  /** One instance: its ranks' figures summed (KV use averaged, prefix hits the best rank's). */
  private final class Group implements InstanceSnapshot {
    private final int index;

    Group(int index) {
      this.index = index;
    }

    private int from() {
      return firstRank[index];
    }

    private int to() {
      return firstRank[index + 1];
    }

    @Override
    public int index() {
      return index;
    }

    /** {@code figure} summed over the instance's ranks. */
    private long sum(java.util.function.ToLongFunction<InstanceSnapshot> figure) {
      long n = 0;
      for (int i = from(); i < to(); i++) {
        n += figure.applyAsLong(ranks.get(i));
      }
      return n;
    }

    @Override
    public int queueDepth() {
      return (int) sum(InstanceSnapshot::queueDepth);
    }

    @Override
    public int runningBatchSize() {
      return (int) sum(InstanceSnapshot::runningBatchSize);
    }

    @Override
    public double kvUtilization() {
      double sum = 0;
      for (int i = from(); i < to(); i++) {
        sum += ranks.get(i).kvUtilization();
      }
      return sum / (to() - from());
    }

    @Override
    public int inFlight() {
      return (int) sum(InstanceSnapshot::inFlight);
    }

    @Override
    public int cachedPrefixTokens() {
      int best = 0;
      for (int i = from(); i < to(); i++) {
        best = Math.max(best, ranks.get(i).cachedPrefixTokens());
      }
      return best;
    }

    @Override
    public String pool() {
      return ranks.get(from()).pool();
    }

    @Override
    public long queuedPromptTokens() {
      return sum(InstanceSnapshot::queuedPromptTokens);
    }

    @Override
    public long refreshedAtUs() {
      return ranks.get(from()).refreshedAtUs();
    }
  }
}
