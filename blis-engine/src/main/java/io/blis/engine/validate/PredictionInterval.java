package io.blis.engine.validate;

import java.util.Arrays;
import java.util.List;
import org.hipparchus.distribution.continuous.NormalDistribution;

/**
 * A prediction interval for one statistic (a run's mean E2E or mean TTFT), on the log scale:
 *
 * <pre>
 * s_members = sqrt(mean over members of (ln member - ln point)^2)
 * s         = sqrt(s_members^2 + s_residual^2 + s_extrapolation^2)
 * interval  = [point exp(-z s), point exp(z s)],   z = the normal quantile of (1 + level) / 2
 * </pre>
 *
 * {@code s_members} is how much the prediction of this run moves when the coefficients are
 * refitted without one model (the {@link Ensemble}'s members), so the interval widens where the
 * folds disagree; {@code s_residual} is the error that runs no fit saw show beyond that spread,
 * inside the fitted family; {@code s_extrapolation} adds the scale of each way the deployment lies
 * outside the family ({@link Extrapolation}), estimated from the runs that measure it. Latency
 * errors are relative, so the interval is symmetric in log space.
 *
 * @param level nominal coverage, in (0, 1)
 * @param point the point prediction
 * @param low lower end
 * @param high upper end
 * @param memberLogSd the members' log spread around the point
 * @param residualLogSd the residual log standard deviation used
 * @param extrapolationLogSd the log standard deviation added for extrapolation (0 inside the
 *     family)
 * @param extrapolation how the prediction lies outside the family (empty inside)
 */
public record PredictionInterval(double level, double point, double low, double high, double memberLogSd,
    double residualLogSd, double extrapolationLogSd, List<Extrapolation> extrapolation) {

  public PredictionInterval {
    extrapolation = List.copyOf(extrapolation);
  }

  /** An interval inside the fitted family. */
  public PredictionInterval(double level, double point, double low, double high, double memberLogSd,
      double residualLogSd) {
    this(level, point, low, high, memberLogSd, residualLogSd, 0, List.of());
  }

  /** Default nominal coverage. */
  public static final double DEFAULT_LEVEL = 0.9;

  /** The interval around {@code point} given the members' predictions of the same statistic. */
  public static PredictionInterval of(double point, double[] members, double residualLogSd, double level) {
    return of(point, members, residualLogSd, 0, List.of(), level);
  }

  /**
   * The interval around {@code point}, widened by {@code extrapolationLogSd} for the reasons
   * given.
   */
  public static PredictionInterval of(double point, double[] members, double residualLogSd,
      double extrapolationLogSd, List<Extrapolation> reasons, double level) {
    checkLevel(level);
    if (!(point > 0) || !Double.isFinite(point)) {
      return new PredictionInterval(level, point, Double.NaN, Double.NaN, Double.NaN, residualLogSd,
          extrapolationLogSd, reasons);
    }
    double sm = memberLogSd(point, members);
    double h = logHalfWidth(sm, residualLogSd, extrapolationLogSd, level);
    return new PredictionInterval(level, point, point * Math.exp(-h), point * Math.exp(h), sm, residualLogSd,
        extrapolationLogSd, reasons);
  }

  /** Half the interval's width in log space: {@code z sqrt(s_members^2 + s_residual^2)}. */
  public static double logHalfWidth(double memberLogSd, double residualLogSd, double level) {
    return logHalfWidth(memberLogSd, residualLogSd, 0, level);
  }

  /** Half the interval's width in log space with an extrapolation scale. */
  public static double logHalfWidth(double memberLogSd, double residualLogSd, double extrapolationLogSd,
      double level) {
    return z(level) * Math.sqrt(memberLogSd * memberLogSd + residualLogSd * residualLogSd
        + extrapolationLogSd * extrapolationLogSd);
  }

  /** Root mean square of ln(member / point) over the finite, positive members (0 when none). */
  public static double memberLogSd(double point, double[] members) {
    double[] logs = Arrays.stream(members).filter(v -> v > 0 && Double.isFinite(v))
        .map(v -> Math.log(v / point)).toArray();
    if (logs.length == 0) {
      return 0;
    }
    double ss = 0;
    for (double l : logs) {
      ss += l * l;
    }
    return Math.sqrt(ss / logs.length);
  }

  /** The two-sided normal quantile of a nominal coverage (1.645 for 0.9). */
  public static double z(double level) {
    checkLevel(level);
    return new NormalDistribution(0, 1).inverseCumulativeProbability(0.5 + level / 2);
  }

  /** Whether {@code observed} lies in the interval (false when either is undefined). */
  public boolean contains(double observed) {
    return Double.isFinite(observed) && Double.isFinite(low) && observed >= low && observed <= high;
  }

  static void checkLevel(double level) {
    if (!(level > 0 && level < 1)) {
      throw new IllegalArgumentException("interval level must be in (0, 1), got " + level);
    }
  }
}
