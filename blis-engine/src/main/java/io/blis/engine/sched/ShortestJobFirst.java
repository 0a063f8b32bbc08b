package io.blis.engine.sched;

import io.blis.api.BatchView;
import io.blis.api.RequestView;
import io.blis.api.Scheduler;

/**
 * Shortest prompt first: waiting requests by input length, then arrival, then id; preempts the
 * last running request.
 */
final class ShortestJobFirst implements Scheduler {

  @Override
  public boolean ordersWaitingQueue() {
    return true;
  }

  @Override
  public int compareWaiting(RequestView a, RequestView b) {
    int c = Integer.compare(a.inputTokens(), b.inputTokens());
    if (c != 0) {
      return c;
    }
    c = Long.compare(a.arrivalTimeUs(), b.arrivalTimeUs());
    return c != 0 ? c : Long.compare(a.id(), b.id());
  }

  @Override
  public int preemptionVictim(BatchView running) {
    return running.size() - 1;
  }
}
