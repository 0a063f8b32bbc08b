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
    return TieBreak.thenArrivalThenId(Integer.compare(a.inputTokens(), b.inputTokens()), a, b);
  }

  @Override
  public int preemptionVictim(BatchView running) {
    return running.size() - 1;
  }
}
