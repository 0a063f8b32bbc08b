package io.blis.engine.validate;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Predicted against observed statistics of one experiment, overall and per load stage.
 *
 * @param id experiment id
 * @param model HF model name (the grouping of leave-one-model-out)
 * @param workload workload name (the grouping of leave-one-workload-out)
 * @param saturated whether the measured run was overloaded
 * @param observed what the client measured
 * @param predicted what the simulation produced
 */
public record ExperimentComparison(
    String id, String model, String workload, boolean saturated, RunSummary observed, RunSummary predicted) {

  /** Compares a prediction with the experiment's observations. */
  public static ExperimentComparison of(Experiment e, RunSummary predicted) {
    return new ExperimentComparison(
        e.id(), e.model(), e.workloadName(), e.saturated(), e.observed(), predicted);
  }

  /** APE (percent) of a whole-run metric; NaN when not computable. */
  public double ape(Metric m) {
    return m.ape(predicted.overall(), observed.overall());
  }

  /** Absolute difference of the failure fractions, in percentage points. */
  public double failureFractionDiffPp() {
    return Math.abs(predicted.overall().failureFraction() - observed.overall().failureFraction()) * 100.0;
  }

  /** Pairs of (observed, predicted) stage statistics for the stages present in both. */
  public List<RunStats[]> stagePairs() {
    List<RunStats[]> out = new ArrayList<>();
    for (RunStats o : observed.stages()) {
      Optional<RunStats> p = predicted.stages().stream().filter(s -> s.stage() == o.stage()).findFirst();
      p.ifPresent(ps -> out.add(new RunStats[] {o, ps}));
    }
    return out;
  }
}
