package io.blis.engine.sched;

import io.blis.api.ProviderContext;
import io.blis.api.Scheduler;
import io.blis.api.SchedulerProvider;

/** Provides the {@code sjf} scheduler. */
public final class SjfProvider implements SchedulerProvider {

  @Override
  public String name() {
    return "sjf";
  }

  @Override
  public String description() {
    return "shortest prompt first; preempts the last running request";
  }

  @Override
  public Scheduler create(ProviderContext context) {
    return Schedulers.shortestJobFirst();
  }
}
