package io.blis.api;

/**
 * Indexed, read-only snapshots of the routable instances of a cluster, as admission policies and
 * routers see them. Valid only during the call that receives it.
 */
public interface ClusterView {

  /** {@return the number of routable instances} At least 1. */
  int size();

  /**
   * Snapshot of the instance at {@code index}.
   *
   * @param index index of the instance, in {@code [0, size())}
   * @return its snapshot, valid only during the current call
   */
  InstanceSnapshot get(int index);

  /** {@return the current simulation time in microseconds} */
  long nowUs();
}
