package io.blis.engine.sched;

import io.blis.api.ProviderContext;
import io.blis.api.Scheduler;
import io.blis.api.SchedulerProvider;

/** Provides the {@code priority-fcfs} scheduler. */
public final class PriorityFcfsProvider implements SchedulerProvider {

  @Override
  public String name() {
    return "priority-fcfs";
  }

  @Override
  public String description() {
    return "SLO priority, then arrival; preempts the least urgent, latest arrival (vLLM priority)";
  }

  @Override
  public Scheduler create(ProviderContext context) {
    return Schedulers.priorityFcfs();
  }
}
