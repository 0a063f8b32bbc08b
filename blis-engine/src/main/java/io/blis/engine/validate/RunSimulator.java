package io.blis.engine.validate;

import io.blis.api.Coefficients;

/**
 * Simulates an experiment: builds its deployment with the given latency coefficients, drives it
 * with the experiment's workload and summarizes the per-request outcomes. Implementations must be
 * deterministic (same inputs, same result) and safe to call from several threads at once.
 */
public interface RunSimulator {

  /**
   * Predicted statistics of the experiment.
   *
   * @param experiment the run to reproduce
   * @param coefficients latency-model coefficients
   * @param maxRequestsPerStage simulate only the first this many requests of each load stage; 0 =
   *     all of them
   */
  RunSummary simulate(Experiment experiment, Coefficients coefficients, int maxRequestsPerStage);

  /**
   * Observed statistics over the same requests {@link #simulate} uses. The default supports only
   * whole runs; implementations that can read the per-request trace override it.
   */
  default RunSummary observed(Experiment experiment, int maxRequestsPerStage) {
    if (maxRequestsPerStage == 0) {
      return experiment.observed();
    }
    throw new IllegalArgumentException(
        "experiment '" + experiment.id() + "': subsampled observations need the per-request trace");
  }
}
