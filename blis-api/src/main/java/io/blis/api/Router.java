package io.blis.api;

/**
 * Chooses the instance that serves a request. Called once per admitted request, at its arrival
 * time plus the cluster's admission and routing latencies, on the engine's thread (the engine may
 * skip the call when the cluster has a single instance). Routers may keep state (a round-robin
 * cursor, say) but should be deterministic, drawing any randomness from {@link
 * ProviderContext#seed()}, so that a run can be reproduced.
 */
public interface Router {

  /**
   * Picks an instance for {@code request}.
   *
   * @param request the admitted request, not yet queued anywhere
   * @param cluster the candidate instances; each snapshot's {@link
   *     InstanceSnapshot#cachedPrefixTokens()} is for {@code request}
   * @return an index into {@code cluster}, in {@code [0, cluster.size())}; anything else fails
   *     the run
   */
  int route(RequestView request, ClusterView cluster);

  /**
   * Optional: the score this router gives each candidate for {@code request}, higher preferred,
   * written to {@code scores[0..cluster.size())}. Used only for decision traces, and called just
   * before {@link #route} with the same arguments; it must not change the router's state.
   *
   * @param request the request about to be routed
   * @param cluster the candidate instances, as {@link #route} will see them
   * @param scores where to write the scores, one per instance, with room for {@code
   *     cluster.size()}
   * @return true when {@code scores} was filled; false (the default) when the router does not
   *     score candidates
   */
  default boolean score(RequestView request, ClusterView cluster, double[] scores) {
    return false;
  }
}
