package io.blis.engine;

import io.blis.engine.result.RequestRecord;
import io.blis.engine.result.SimulationResult;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/** A test run's result with every step the engine took, in order. */
record RecordedRun(SimulationResult result, List<StepRecord> steps) {

  /** Runs {@code b} (requests recorded) and keeps its steps. */
  static RecordedRun of(Simulation.Builder b) {
    List<StepRecord> steps = new ArrayList<>();
    SimulationResult r = b.recordRequests(true).listener(new EngineListener() {
      @Override
      public void onStep(int instance, StepRecord step) {
        steps.add(step);
      }
    }).build().run();
    return new RecordedRun(r, steps);
  }

  /** The recorded requests by id. */
  List<RequestRecord> byId() {
    return result.requests().stream().sorted(Comparator.comparingLong(RequestRecord::id)).toList();
  }
}
