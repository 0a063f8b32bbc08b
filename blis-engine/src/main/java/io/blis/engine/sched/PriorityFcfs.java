package io.blis.engine.sched;

import io.blis.api.BatchView;
import io.blis.api.RequestView;
import io.blis.api.Scheduler;

/**
 * vLLM's priority policy: waiting requests by priority (lower is more urgent), then arrival, then
 * id; the victim is the running request with the largest (priority, arrival), the first such in
 * running-list order.
 */
final class PriorityFcfs implements Scheduler {

  @Override
  public boolean ordersWaitingQueue() {
    return true;
  }

  @Override
  public int compareWaiting(RequestView a, RequestView b) {
    return Schedulers.thenArrivalThenId(Integer.compare(a.priority(), b.priority()), a, b);
  }

  @Override
  public int preemptionVictim(BatchView running) {
    int best = 0;
    for (int i = 1, n = running.size(); i < n; i++) {
      RequestView r = running.get(i);
      RequestView b = running.get(best);
      if (r.priority() > b.priority()
          || (r.priority() == b.priority() && r.arrivalTimeUs() > b.arrivalTimeUs())) {
        best = i;
      }
    }
    return best;
  }
}
