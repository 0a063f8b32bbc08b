package io.blis.engine.sched;

import io.blis.api.BatchView;
import io.blis.api.Scheduler;

/** vLLM's default policy: waiting queue in arrival order, preempt the last running request. */
final class Fcfs implements Scheduler {

  @Override
  public int preemptionVictim(BatchView running) {
    return running.size() - 1;
  }
}
