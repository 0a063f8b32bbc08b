package io.blis.api;

/** Chooses the instance that serves a request. */
public interface Router {

  /**
   * Picks an instance for {@code request}.
   *
   * @return an index into {@code cluster}
   */
  int route(RequestView request, ClusterView cluster);
}
