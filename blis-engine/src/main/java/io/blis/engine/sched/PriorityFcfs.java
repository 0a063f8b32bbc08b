package io.blis.engine.sched;

import io.blis.api.BatchView;
import io.blis.api.RequestView;
import io.blis.api.Scheduler;

/**
 * vLLM's priority policy: waiting requests by priority (lower is more urgent), then arrival, then
 * id; the victim is the running request with the largest (priority, arrival), the first such in
 * running-list order. Reversed (the pathological {@code reverse-priority}): the least urgent
 * first, and the victim is the most urgent, the latest-arrived among equals.
 */
final class PriorityFcfs implements Scheduler {

  /** 1 for vLLM's order, -1 reversed. */
  private final int sign;

  PriorityFcfs(boolean reversed) {
    this.sign = reversed ? -1 : 1;
  }

  @Override
  public boolean ordersWaitingQueue() {
    return true;
  }

  @Override
  public int compareWaiting(RequestView a, RequestView b) {
    return TieBreak.thenArrivalThenId(sign * Integer.compare(a.priority(), b.priority()), a, b);
  }

  @Override
  public int preemptionVictim(BatchView running) {
    int best = 0;
    for (int i = 1, n = running.size(); i < n; i++) {
      RequestView r = running.get(i);
      RequestView b = running.get(best);
      int c = sign * Integer.compare(r.priority(), b.priority());
      if (c > 0 || (c == 0 && r.arrivalTimeUs() > b.arrivalTimeUs())) {
        best = i;
      }
    }
    return best;
  }
}
