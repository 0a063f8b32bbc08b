package io.blis.engine.validate;

import java.util.List;

/**
 * The calibration objective: for each error term (mean E2E, mean TTFT, decode time per output
 * token) the root mean square over experiments of the per-experiment APE (percent), then a
 * weighted sum. RMSE across experiments penalizes the worst experiment, so no model family is
 * sacrificed to improve the others.
 */
public final class CalibrationLoss {

  private CalibrationLoss() {}

  /** Root mean square of the values; a non-finite value (failed prediction) counts as 1000 %. */
  public static double rms(double[] values) {
    if (values.length == 0) {
      return 0;
    }
    double s = 0;
    for (double v : values) {
      double x = Double.isFinite(v) ? v : 1000.0;
      s += x * x;
    }
    return Math.sqrt(s / values.length);
  }

  /** RMSE over experiments of one metric's whole-run APE. */
  public static double rmse(List<ExperimentComparison> comparisons, Metric m) {
    return rms(comparisons.stream().mapToDouble(c -> c.ape(m)).toArray());
  }

  /** The weighted loss of a set of comparisons. */
  public static double loss(List<ExperimentComparison> comparisons, double e2eWeight, double ttftWeight,
      double decodeWeight) {
    return e2eWeight * rmse(comparisons, Metric.E2E_MEAN)
        + ttftWeight * rmse(comparisons, Metric.TTFT_MEAN)
        + decodeWeight * rmse(comparisons, Metric.DECODE_MS_PER_TOKEN);
  }
}
