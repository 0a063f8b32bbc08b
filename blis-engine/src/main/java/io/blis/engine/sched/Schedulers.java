package io.blis.engine.sched;

import io.blis.api.Scheduler;

/** The built-in schedulers, also available by name through their {@code SchedulerProvider}s. */
public final class Schedulers {

  private Schedulers() {}

  /** {@code fcfs}: arrival order, preempt the last running request (vLLM default). */
  public static Scheduler fcfs() {
    return new Fcfs();
  }

  /** {@code priority-fcfs}: priority, arrival, id; preempt max (priority, arrival) (vLLM). */
  public static Scheduler priorityFcfs() {
    return new PriorityFcfs(false);
  }

  /** {@code sjf}: shortest prompt first; preempt the last running request. */
  public static Scheduler shortestJobFirst() {
    return new ShortestJobFirst();
  }

  /** {@code reverse-priority} (pathological): least urgent first; preempt the most urgent. */
  public static Scheduler reversePriority() {
    return new PriorityFcfs(true);
  }
}
