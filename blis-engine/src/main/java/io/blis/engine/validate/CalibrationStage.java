package io.blis.engine.validate;

import java.util.List;

/**
 * One stage of a staged calibration: which parameters move (the others stay at the best values
 * so far), how the three error terms are weighted, how many requests per load stage are
 * simulated and how many objective evaluations the CMA-ES search and the BOBYQA polish may use.
 *
 * @param name label used in progress lines
 * @param freeParameters names of the parameters this stage optimizes
 * @param e2eWeight weight of the RMSE over experiments of the mean-E2E APE
 * @param ttftWeight weight of the RMSE of the mean-TTFT APE
 * @param decodeWeight weight of the RMSE of the decode-per-token APE
 * @param maxRequestsPerStage requests simulated per load stage (0 = the whole run)
 * @param searchEvaluations CMA-ES evaluation budget (0 skips the global search)
 * @param polishEvaluations BOBYQA evaluation budget (0 skips the polish)
 */
public record CalibrationStage(
    String name,
    List<String> freeParameters,
    double e2eWeight,
    double ttftWeight,
    double decodeWeight,
    int maxRequestsPerStage,
    int searchEvaluations,
    int polishEvaluations) {

  public CalibrationStage {
    freeParameters = List.copyOf(freeParameters);
    if (freeParameters.isEmpty()) {
      throw new IllegalArgumentException("calibration stage " + name + ": no free parameters");
    }
    if (e2eWeight < 0 || ttftWeight < 0 || decodeWeight < 0 || e2eWeight + ttftWeight + decodeWeight <= 0) {
      throw new IllegalArgumentException("calibration stage " + name + ": weights must be >= 0 and not all 0");
    }
    if (maxRequestsPerStage < 0 || searchEvaluations < 0 || polishEvaluations < 0) {
      throw new IllegalArgumentException("calibration stage " + name + ": negative request limit or budget");
    }
  }
}
