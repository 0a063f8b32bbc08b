package io.blis.api;

/**
 * Chooses the instance that serves a request. Called once per admitted request, at its arrival
 * time plus the cluster's admission and routing latencies, on the engine's thread.
 */
public interface Router {

  /**
   * Picks an instance for {@code request}.
   *
   * @return an index into {@code cluster}
   */
  int route(RequestView request, ClusterView cluster);

  /**
   * Optional: the score this router gives each candidate for {@code request}, higher preferred,
   * written to {@code scores[0..cluster.size())}. Used only for decision traces, and called just
   * before {@link #route} with the same arguments; it must not change the router's state.
   *
   * @return false (the default) when the router does not score candidates
   */
  default boolean score(RequestView request, ClusterView cluster, double[] scores) {
    return false;
  }
}
