package io.blis.latency.physics;

import io.blis.api.BatchView;
import io.blis.api.Coefficients;
import io.blis.api.HardwareSpec;
import io.blis.api.ModelSpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.hipparchus.linear.Array2DRowRealMatrix;
import org.hipparchus.linear.ArrayRealVector;
import org.hipparchus.linear.DiagonalMatrix;
import org.hipparchus.linear.RealMatrix;
import org.hipparchus.linear.RealVector;
import org.hipparchus.optim.nonlinear.vector.leastsquares.LeastSquaresBuilder;
import org.hipparchus.optim.nonlinear.vector.leastsquares.LeastSquaresOptimizer;
import org.hipparchus.optim.nonlinear.vector.leastsquares.LevenbergMarquardtOptimizer;
import org.hipparchus.util.Pair;

/**
 * Fits the trained-physics step coefficients (beta) to traced steps whose batch is known (each
 * request's scheduled tokens, context length and phase), as vLLM step tracing with request
 * snapshots records them.
 *
 * <p>The model is the one {@link TrainedPhysicsModel} evaluates: {@code max(b0 PC, b4 W + b5 EW +
 * b1 PM + b3 DM) + b2 DC + b6 TP + b7 MR + (b10 + b14 LP) R + b11 + C}, where the basis terms come
 * from {@link StepBasis} and {@code C = b8 layers + b9 all-reduces + b12 MoE layers + b13 kilo-vocab}
 * is constant for one deployment, as is the logits pass {@code LP}; so only {@code b11} (per step)
 * and {@code b10} (per request) are fitted of those, and b8, b9, b12, b13, b14 keep their starting
 * values.
 * Levenberg-Marquardt (Hipparchus) minimizes relative squared errors with parameters clamped to
 * {@link TrainedPhysicsCoefficients}' physical bounds, reweighted three times with Huber weights
 * (k = 1.345 robust standard deviations) so outlier steps do not pull the fit. The fit is rejected
 * when, with the bounds relaxed, a determined coefficient moves past its physical bound by more
 * than 3 standard errors and 2%.
 *
 * <p>Steps are split by time: the first 60% train, the next 20% validate, the last 20% test. A
 * coefficient is <em>exercised</em> when, after a first fit of all of them, its term makes at least
 * 1% of the predicted time of the training steps on the side of the max that is active and the
 * data determine it (standard error at most 2% of its value, from the fit's covariance scaled by
 * the residual variance). Backward elimination: the least determined coefficient is held at its
 * starting value and the fit repeated, until every free one qualifies.
 */
public final class StepFit {

  /**
   * Beta indices whose terms vary with the batch (fitted when exercised), plus b11. Not b13
   * ({@code sampling_us_per_kvocab}): within one deployment it is a constant per step that cannot
   * be told apart from b11, so it stays at its starting value, in the per-deployment constant with
   * b8, b9 and b12. Not b14 ({@code sampling_passes}) either: within one deployment it is a
   * constant per request that cannot be told apart from b10, so it stays at its starting value
   * (the fixed per-row addend, basis column 9).
   */
  private static final int[] FREE = {0, 1, 2, 3, 4, 5, 6, 7, 10, 11};
  private static final double EXERCISED_SHARE = 0.01;
  private static final double HUBER_K = 1.345;
  /** Largest standard error, relative to the value, of a coefficient the data determine. */
  private static final double MAX_RELATIVE_SE = 0.02;

  /**
   * A fitted beta with each free coefficient's standard error (NaN for held ones) and the
   * correlation of each pair of free coefficients' estimates (NaN where either is held).
   */
  private record Fitted(double[] beta, double[] sigma, double[][] correlation) {}

  private StepFit() {}

  /** One traced step: its measured duration and its batch. */
  public record Step(long startNs, double durationUs, BatchView batch) {}

  /**
   * The fit.
   *
   * @param beta fitted beta (15 values; unexercised ones at their starting values)
   * @param exercised per beta index, whether the data determined it
   * @param standardErrors per beta index, the standard error of the fitted value (NaN when held)
   * @param trainSteps steps in the training split
   * @param testSteps steps in the test split
   * @param validationMapePct mean absolute percentage error of the step time, validation split
   * @param testMapePct the same on the test split
   * @param testPearson Pearson correlation of predicted and measured step times, test split
   * @param testResiduals relative residuals (predicted / measured - 1) of the test split
   * @param testBatchSizes requests in each test step
   * @param testWithPrefill whether each test step had a request in prefill
   * @param notIdentified per beta index, why the trace does not determine it (null when fitted):
   *     its term is absent or under 1% of the step time, its standard error is too large (with
   *     the coefficient it trades against, the one whose estimate is most correlated with it), or
   *     it is a constant of the deployment that no trace of one deployment separates
   */
  public record Result(double[] beta, boolean[] exercised, double[] standardErrors,
      int trainSteps, int testSteps,
      double validationMapePct, double testMapePct, double testPearson, double[] testResiduals,
      int[] testBatchSizes, boolean[] testWithPrefill, String[] notIdentified) {}

  /**
   * Fits {@code steps} (any order) of one deployment, starting from {@code start}'s beta.
   *
   * @throws IllegalArgumentException with fewer than 20 steps, or when the fit leaves the
   *     physical bounds
   */
  public static Result fit(ModelSpec model, HardwareSpec gpu, int tp, Coefficients start,
      List<Step> steps) {
    if (steps.size() < 20) {
      throw new IllegalArgumentException("step fit: need at least 20 traced steps with their batch, got "
          + steps.size());
    }
    List<Step> sorted = new ArrayList<>(steps);
    sorted.sort((a, b) -> Long.compare(a.startNs(), b.startNs()));
    int n = sorted.size();
    int trainEnd = (int) Math.round(n * 0.6);
    int validEnd = (int) Math.round(n * 0.8);
    StepBasis basis = new StepBasis(model, gpu, tp);
    double[][] x = new double[n][];
    double[] y = new double[n];
    double[] moeFixed = new double[n];
    double[] b0 = TrainedPhysicsParameters.of(start).beta().clone();
    for (int i = 0; i < n; i++) {
      basis.compute(sorted.get(i).batch());
      x[i] = new double[] {basis.prefillComputeUs, basis.prefillMemoryUs, basis.decodeComputeUs,
          basis.decodeMemoryUs, basis.weightLoadUs, basis.expertWeightLoadUs, basis.tpCommUs,
          basis.moeRoutingUs, basis.requests, b0[14] * basis.logitsPassUs * basis.requests};
      // the fused-MoE layers' fixed time per distinct expert is a measured time, not a fitted one
      moeFixed[i] = basis.moeExpertFixedUs;
      y[i] = sorted.get(i).durationUs() - moeFixed[i];
    }
    double constant = b0[8] * basis.layerUnits + b0[9] * basis.allReduceUnits + b0[12] * basis.moeLayerUnits
        + b0[13] * basis.kiloVocabUnits;
    double[] lower = TrainedPhysicsCoefficients.lowerBounds();
    double[] upper = TrainedPhysicsCoefficients.upperBounds();

    boolean[] all = new boolean[b0.length]; // every coefficient whose term is ever non-zero
    int[] column = {0, 1, 2, 3, 4, 5, 6, 7, -1, -1, 8, -1, -1};
    for (int k : FREE) {
      for (int i = 0; i < trainEnd && !all[k]; i++) {
        all[k] = column[k] < 0 || x[i][column[k]] != 0;
      }
    }
    // backward elimination: hold the least determined coefficient until every free one is
    // determined (relative standard error <= MAX_RELATIVE_SE) and makes >= 1% of the time
    boolean[] exercised = all.clone();
    String[] why = new String[b0.length];
    List<TrainedPhysicsCoefficients.Term> terms = TrainedPhysicsCoefficients.terms();
    for (int k = 0; k < b0.length; k++) {
      if (!isFree(k)) {
        why[k] = k == 14
            ? "a constant per request within one deployment: not separable from per_request_us"
            : "a constant per step within one deployment: not separable from per_step_us";
      } else if (!all[k]) {
        why[k] = "its term is zero in every training step";
      }
    }
    Fitted fitted = robustFit(b0, exercised, x, y, trainEnd, constant, lower, upper);
    while (true) {
      boolean[] shares = exercised(fitted.beta(), x, trainEnd, constant);
      int worst = -1;
      double worstScore = 0;
      for (int k : FREE) {
        if (!exercised[k]) {
          continue;
        }
        double rel = fitted.sigma()[k] / Math.max(1e-12, fitted.beta()[k]);
        double score = shares[k] ? rel : Double.POSITIVE_INFINITY;
        if (score > MAX_RELATIVE_SE && (worst < 0 || score > worstScore)) {
          worst = k;
          worstScore = score;
        }
      }
      if (worst < 0) {
        break;
      }
      why[worst] = !shares[worst]
          ? String.format(java.util.Locale.ROOT, "its term is under %.0f%% of the training steps' time",
              100 * EXERCISED_SHARE)
          : tradeOff(worst, fitted, exercised, terms);
      exercised[worst] = false;
      fitted = robustFit(b0, exercised, x, y, trainEnd, constant, lower, upper);
    }
    double[] beta = fitted.beta();
    // the search is kept within the physical bounds; a determined coefficient may rest on one
    // (the bundled decode_memory is 1.0, the peak-bandwidth bound). Refit with the bounds relaxed:
    // when the data pull a coefficient well past its bound, the model does not fit these steps
    double[] relaxedLower = lower.clone();
    double[] relaxedUpper = upper.clone();
    for (int k = 0; k < lower.length; k++) {
      relaxedLower[k] = lower[k] * 0.25;
      relaxedUpper[k] = upper[k] * 4;
    }
    Fitted relaxed = robustFit(beta, exercised, x, y, trainEnd, constant, relaxedLower, relaxedUpper);
    for (int k : FREE) {
      if (!exercised[k]) {
        continue;
      }
      double v = relaxed.beta()[k];
      double margin = Math.max(3 * relaxed.sigma()[k], 0.02 * Math.abs(beta[k]));
      if (v < lower[k] - margin || v > upper[k] + margin) {
        throw new IllegalArgumentException("step fit rejected: " + TrainedPhysicsCoefficients.terms().get(k).name()
            + " would be " + v + ", outside its physical bounds [" + lower[k] + ", " + upper[k]
            + "]; the traced steps do not fit the trained-physics model (wrong model, GPU or TP?)");
      }
    }
    double validMape = mape(beta, x, y, moeFixed, trainEnd, validEnd, constant);
    double testMape = mape(beta, x, y, moeFixed, validEnd, n, constant);
    double[] pred = new double[n - validEnd];
    double[] meas = new double[n - validEnd];
    double[] resid = new double[n - validEnd];
    int[] sizes = new int[n - validEnd];
    boolean[] withPrefill = new boolean[n - validEnd];
    for (int i = validEnd; i < n; i++) {
      sizes[i - validEnd] = (int) x[i][8];
      withPrefill[i - validEnd] = x[i][0] > 0;
      pred[i - validEnd] = predict(beta, x[i], constant) + moeFixed[i];
      meas[i - validEnd] = y[i] + moeFixed[i];
      resid[i - validEnd] = pred[i - validEnd] / meas[i - validEnd] - 1;
    }
    return new Result(beta, exercised, fitted.sigma(), trainEnd, n - validEnd, validMape, testMape,
        pearson(pred, meas), resid, sizes, withPrefill, why);
  }

  private static boolean isFree(int k) {
    return Arrays.stream(FREE).anyMatch(f -> f == k);
  }

  /**
   * Why coefficient {@code k} is not determined: its relative standard error, and the free
   * coefficient whose estimate is most correlated with it (the one it trades against).
   */
  private static String tradeOff(int k, Fitted f, boolean[] free, List<TrainedPhysicsCoefficients.Term> terms) {
    double rel = f.sigma()[k] / Math.max(1e-12, f.beta()[k]);
    int partner = -1;
    for (int j : FREE) {
      if (j != k && free[j] && !Double.isNaN(f.correlation()[k][j])
          && (partner < 0 || Math.abs(f.correlation()[k][j]) > Math.abs(f.correlation()[k][partner]))) {
        partner = j;
      }
    }
    String se = Double.isFinite(rel)
        ? String.format(java.util.Locale.ROOT, "standard error %.0f%% of its value (at most %.0f%% to count as fitted)",
            100 * rel, 100 * MAX_RELATIVE_SE)
        : "the fit's covariance is singular";
    if (partner < 0) {
      return se;
    }
    return String.format(java.util.Locale.ROOT, "%s; trades against %s (correlation %.2f)", se,
        terms.get(partner).name(), f.correlation()[k][partner]);
  }

  /**
   * Levenberg-Marquardt on the relative residuals of the training steps for the coefficients
   * marked {@code free}, the others held at {@code start}; four rounds of Huber reweighting.
   */
  private static Fitted robustFit(double[] start, boolean[] free, double[][] x, double[] y,
      int m, double constant, double[] lower, double[] upper) {
    int[] idx = java.util.stream.IntStream.range(0, start.length).filter(k -> free[k]).toArray();
    double[] beta = start.clone();
    if (idx.length == 0) {
      double[] none = new double[start.length];
      Arrays.fill(none, Double.NaN);
      return new Fitted(beta, none, nanMatrix(start.length));
    }
    double[] weights = new double[m];
    Arrays.fill(weights, 1.0);
    double[] sigma = new double[start.length];
    Arrays.fill(sigma, Double.NaN);
    double[][] corr = nanMatrix(start.length);
    for (int round = 0; round < 4; round++) {
      double[] p0 = new double[idx.length];
      for (int k = 0; k < idx.length; k++) {
        p0[k] = beta[idx[k]];
      }
      final double[] base = beta.clone();
      LeastSquaresBuilder lsb = new LeastSquaresBuilder()
          .start(p0)
          .target(new double[m]) // relative residuals pred / y - 1 against 0
          .model(p -> value(p, idx, base, x, y, m, constant))
          .weight(new DiagonalMatrix(weights.clone()))
          .parameterValidator(p -> clamp(p, idx, lower, upper))
          .maxEvaluations(20000)
          .maxIterations(10000);
      LeastSquaresOptimizer.Optimum opt = new LevenbergMarquardtOptimizer().optimize(lsb.build());
      double[] p = clamp(opt.getPoint(), idx, lower, upper).toArray();
      for (int k = 0; k < idx.length; k++) {
        beta[idx[k]] = p[k];
      }
      // standard errors: the covariance (J'WJ)^-1 scaled by the residual variance
      double dof = Math.max(1, m - idx.length);
      double variance = opt.getCost() * opt.getCost() / dof;
      try {
        RealVector se = opt.getSigma(1e-14);
        for (int k = 0; k < idx.length; k++) {
          sigma[idx[k]] = se.getEntry(k) * Math.sqrt(variance);
        }
        RealMatrix cov = opt.getCovariances(1e-14);
        for (int a = 0; a < idx.length; a++) {
          for (int b = 0; b < idx.length; b++) {
            corr[idx[a]][idx[b]] = cov.getEntry(a, b) / Math.sqrt(cov.getEntry(a, a) * cov.getEntry(b, b));
          }
        }
      } catch (org.hipparchus.exception.MathIllegalArgumentException singular) {
        for (int k : idx) {
          sigma[k] = Double.POSITIVE_INFINITY; // not determined by the data
          Arrays.fill(corr[k], Double.NaN);
        }
      }
      weights = huber(beta, x, y, m, constant);
    }
    return new Fitted(beta, sigma, corr);
  }

  private static double[][] nanMatrix(int n) {
    double[][] m = new double[n][n];
    for (double[] row : m) {
      Arrays.fill(row, Double.NaN);
    }
    return m;
  }

  /** Predicted step time of basis row {@code f} with full beta {@code b}. */
  static double predict(double[] b, double[] f, double constant) {
    double compute = b[0] * f[0];
    double memory = b[4] * f[4] + b[5] * f[5] + b[1] * f[1] + b[3] * f[3];
    return Math.max(compute, memory) + b[2] * f[2] + b[6] * f[6] + b[7] * f[7] + b[10] * f[8] + f[9] + b[11] + constant;
  }

  private static Pair<RealVector, RealMatrix> value(RealVector p, int[] idx, double[] base,
      double[][] x, double[] y, int m, double constant) {
    double[] b = base.clone();
    for (int k = 0; k < idx.length; k++) {
      b[idx[k]] = p.getEntry(k);
    }
    double[] r = new double[m];
    double[][] jac = new double[m][idx.length];
    double[] d = new double[b.length];
    for (int i = 0; i < m; i++) {
      double[] f = x[i];
      double compute = b[0] * f[0];
      double memory = b[4] * f[4] + b[5] * f[5] + b[1] * f[1] + b[3] * f[3];
      boolean computeBound = compute >= memory;
      r[i] = predict(b, f, constant) / y[i] - 1;
      double inv = 1 / y[i];
      // derivative of the prediction by each coefficient, divided by y
      d[0] = computeBound ? f[0] * inv : 0;
      d[1] = computeBound ? 0 : f[1] * inv;
      d[2] = f[2] * inv;
      d[3] = computeBound ? 0 : f[3] * inv;
      d[4] = computeBound ? 0 : f[4] * inv;
      d[5] = computeBound ? 0 : f[5] * inv;
      d[6] = f[6] * inv;
      d[7] = f[7] * inv;
      d[10] = f[8] * inv;
      d[11] = inv;
      for (int k = 0; k < idx.length; k++) {
        jac[i][k] = d[idx[k]];
      }
    }
    return new Pair<>(new ArrayRealVector(r, false), new Array2DRowRealMatrix(jac, false));
  }

  private static RealVector clamp(RealVector p, int[] idx, double[] lower, double[] upper) {
    double[] v = p.toArray();
    for (int k = 0; k < idx.length; k++) {
      v[k] = Math.min(upper[idx[k]], Math.max(lower[idx[k]], v[k]));
    }
    return new ArrayRealVector(v, false);
  }

  /** Huber weights of the training residuals (scale: 1.4826 x median absolute residual). */
  private static double[] huber(double[] b, double[][] x, double[] y, int m, double c) {
    double[] r = new double[m];
    for (int i = 0; i < m; i++) {
      r[i] = Math.abs(predict(b, x[i], c) / y[i] - 1);
    }
    double[] sorted = r.clone();
    Arrays.sort(sorted);
    double scale = Math.max(1e-9, 1.4826 * sorted[m / 2]);
    double[] w = new double[m];
    for (int i = 0; i < m; i++) {
      double u = r[i] / scale;
      w[i] = u <= HUBER_K ? 1.0 : HUBER_K / u;
    }
    return w;
  }

  /** Whether each coefficient's term is at least 2% of the training steps' predicted time. */
  private static boolean[] exercised(double[] b, double[][] x, int m, double c) {
    double[] share = new double[b.length];
    double total = 0;
    for (int i = 0; i < m; i++) {
      double[] f = x[i];
      double compute = b[0] * f[0];
      double memory = b[4] * f[4] + b[5] * f[5] + b[1] * f[1] + b[3] * f[3];
      share[2] += b[2] * f[2];
      if (compute >= memory) {
        share[0] += b[0] * f[0];
      } else {
        share[1] += b[1] * f[1];
        share[3] += b[3] * f[3];
        share[4] += b[4] * f[4];
        share[5] += b[5] * f[5];
      }
      share[6] += b[6] * f[6];
      share[7] += b[7] * f[7];
      share[10] += b[10] * f[8];
      share[11] += b[11];
      total += predict(b, f, c);
    }
    boolean[] out = new boolean[b.length];
    for (int k : FREE) {
      out[k] = share[k] >= EXERCISED_SHARE * total;
    }
    return out;
  }

  private static double mape(double[] b, double[][] x, double[] y, double[] fixed, int from, int to, double c) {
    if (to <= from) {
      return Double.NaN;
    }
    double sum = 0;
    for (int i = from; i < to; i++) {
      sum += Math.abs((predict(b, x[i], c) + fixed[i]) / (y[i] + fixed[i]) - 1);
    }
    return 100 * sum / (to - from);
  }

  private static double pearson(double[] a, double[] b) {
    int n = a.length;
    double ma = Arrays.stream(a).average().orElse(0);
    double mb = Arrays.stream(b).average().orElse(0);
    double sab = 0;
    double saa = 0;
    double sbb = 0;
    for (int i = 0; i < n; i++) {
      sab += (a[i] - ma) * (b[i] - mb);
      saa += (a[i] - ma) * (a[i] - ma);
      sbb += (b[i] - mb) * (b[i] - mb);
    }
    return saa == 0 || sbb == 0 ? Double.NaN : sab / Math.sqrt(saa * sbb);
  }
}
