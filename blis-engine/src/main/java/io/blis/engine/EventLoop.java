package io.blis.engine;

import io.blis.workload.RequestOutcome;

/**
 * What an {@link Instance} sees of the event loop that drives it: the clock, a way to schedule
 * its own events, the end of a request, the priority policy and the listener. The {@link Engine}
 * implements it; an instance never reaches the cluster, the metrics or the request source.
 */
interface EventLoop {

  /** The simulated clock, microseconds. */
  long nowUs();

  /** Schedules an event of type {@code type} (an {@link EventQueue} constant) at {@code atUs}. */
  void schedule(long atUs, int type, Object payload);

  /** Ends a request: metrics, records, the listener, the source's follow-ups. */
  void finish(EngineRequest r, RequestOutcome outcome, long endUs, String reason);

  /** The priority the policy gives {@code r} now. */
  int priorityOf(EngineRequest r);

  /** Whether waiting requests' priorities must be recomputed before each sort. */
  boolean prioritiesChangeWithTime();

  /** Receives journey and step events, or null when nobody listens. */
  EngineListener listener();

  /**
   * An instance's queue, batch, KV use or step estimate may have changed: {@code refresh}, which
   * copies them into its router snapshot, runs at the next refresh (instances that did not change
   * keep their snapshots).
   */
  void snapshotStale(Runnable refresh);

  /** When the routers' snapshots were last refreshed, microseconds. */
  long snapshotRefreshedAtUs();

  /** The request being routed now (the prefix-cache lookups of the snapshots), or null. */
  EngineRequest routingRequest();

  /**
   * The disaggregated request {@code r} finished its prefill on its instance (state {@code
   * HANDED_OFF}, still holding its blocks there): its KV goes on to a decode instance.
   */
  void prefilled(EngineRequest r);

  /**
   * Whether instance {@code index} holds blocks for disaggregated requests between two instances
   * (prefilled there and not yet moved, or reserved there and not yet arrived): it may wait for
   * them with nothing to step.
   */
  boolean holdsHandOffs(int index);
}
