package io.blis.engine.sched;

import io.blis.api.BatchView;
import io.blis.api.RequestView;
import io.blis.api.Scheduler;

/**
 * Pathological: the least urgent waiting request first (priority descending, then arrival, then
 * id); preempts the most urgent running request, the latest-arrived among equals.
 */
final class ReversePriority implements Scheduler {

  @Override
  public boolean ordersWaitingQueue() {
    return true;
  }

  @Override
  public int compareWaiting(RequestView a, RequestView b) {
    return Schedulers.thenArrivalThenId(Integer.compare(b.priority(), a.priority()), a, b);
  }

  @Override
  public int preemptionVictim(BatchView running) {
    int best = 0;
    for (int i = 1, n = running.size(); i < n; i++) {
      RequestView r = running.get(i);
      RequestView b = running.get(best);
      if (r.priority() < b.priority()
          || (r.priority() == b.priority() && r.arrivalTimeUs() > b.arrivalTimeUs())) {
        best = i;
      }
    }
    return best;
  }
}
