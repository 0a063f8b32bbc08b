package io.blis.api;

/** Indexed, read-only snapshots of the routable instances of a cluster. */
public interface ClusterView {

  /** Number of routable instances (at least 1). */
  int size();

  /** Snapshot of the instance at {@code index}. */
  InstanceSnapshot get(int index);

  /** Current simulation time in microseconds. */
  long nowUs();
}
