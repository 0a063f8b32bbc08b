package io.blis.engine.sched;

import io.blis.api.ProviderContext;
import io.blis.api.Scheduler;
import io.blis.api.SchedulerProvider;

/** Provides the {@code fcfs} scheduler. */
public final class FcfsProvider implements SchedulerProvider {

  @Override
  public String name() {
    return "fcfs";
  }

  @Override
  public String description() {
    return "first come first served; preempts the last running request (vLLM default)";
  }

  @Override
  public Scheduler create(ProviderContext context) {
    return Schedulers.fcfs();
  }
}
