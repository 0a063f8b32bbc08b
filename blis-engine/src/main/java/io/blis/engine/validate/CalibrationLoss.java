package io.blis.engine.validate;

import java.util.List;

/**
 * The calibration objective over the per-experiment APEs (percent) of mean E2E, mean TTFT and
 * decode time per output token: the weighted root mean square over all (experiment, term) pairs,
 * {@code sqrt((w_e2e MSE_e2e + w_ttft MSE_ttft + w_decode MSE_decode) / (w_e2e + w_ttft +
 * w_decode))}, where MSE is the mean over experiments of the squared APE. Squares across
 * experiments penalize the worst experiment, so no model family is sacrificed to improve the
 * others. The optimizers minimize the square of this value, which is smooth (a sum of squares)
 * where an RMSE has a kink at zero error.
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

  /** The weighted RMS loss of a set of comparisons (percent). */
  public static double loss(List<ExperimentComparison> comparisons, double e2eWeight, double ttftWeight,
      double decodeWeight) {
    return Math.sqrt(squared(comparisons, e2eWeight, ttftWeight, decodeWeight));
  }

  /** The square of {@link #loss}: what the optimizers minimize. */
  public static double squared(List<ExperimentComparison> comparisons, double e2eWeight, double ttftWeight,
      double decodeWeight) {
    double e = rmse(comparisons, Metric.E2E_MEAN);
    double t = rmse(comparisons, Metric.TTFT_MEAN);
    double d = rmse(comparisons, Metric.DECODE_MS_PER_TOKEN);
    return (e2eWeight * e * e + ttftWeight * t * t + decodeWeight * d * d) / (e2eWeight + ttftWeight + decodeWeight);
  }
}
