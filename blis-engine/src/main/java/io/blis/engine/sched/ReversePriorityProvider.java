package io.blis.engine.sched;

import io.blis.api.ProviderContext;
import io.blis.api.Scheduler;
import io.blis.api.SchedulerProvider;

/** Provides the {@code reverse-priority} scheduler. */
public final class ReversePriorityProvider implements SchedulerProvider {

  @Override
  public String name() {
    return "reverse-priority";
  }

  @Override
  public String description() {
    return "pathological: least urgent first; preempts the most urgent";
  }

  @Override
  public Scheduler create(ProviderContext context) {
    return Schedulers.reversePriority();
  }
}
