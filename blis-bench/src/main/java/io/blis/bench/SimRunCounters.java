package io.blis.bench;

import io.blis.engine.result.SimulationResult;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * JMH secondary results of whole-simulation benchmarks: engine steps and simulated requests
 * completed, reported by JMH per second of wall time (steps/s, requests/s).
 */
@State(Scope.Thread)
@AuxCounters(AuxCounters.Type.OPERATIONS)
public class SimRunCounters {

  /** Engine steps executed. */
  public long steps;

  /** Requests that completed. */
  public long requests;

  @Setup(Level.Iteration)
  public void reset() {
    steps = 0;
    requests = 0;
  }

  void add(SimulationResult result) {
    steps += result.engine().steps();
    requests += result.overall().completedRequests();
  }
}
