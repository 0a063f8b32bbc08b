package io.blis.latency.physics;

import io.blis.api.Coefficients;
import io.blis.latency.coeff.CoefficientVectors;
import java.util.Arrays;

/** The validated beta and alpha vectors of the trained-physics model. */
record TrainedPhysicsParameters(double[] beta, double[] alpha) {

  /**
   * Shortest beta accepted: files written before {@code sampling_us_per_kvocab} (13 values) or
   * {@code sampling_passes} (14) existed; the missing terms are 0, i.e. off.
   */
  private static final int OLDEST_BETA_LENGTH = 13;

  /** Shortest alpha accepted: written before {@code preemption_us} existed (then 0). */
  private static final int OLDEST_ALPHA_LENGTH = 3;

  static TrainedPhysicsParameters of(Coefficients given) {
    CoefficientVectors v =
        new CoefficientVectors(
            TrainedPhysicsCoefficients.LATENCY_MODEL, given, TrainedPhysicsCoefficients.bundled());
    double[] beta = v.nonNegative("beta", OLDEST_BETA_LENGTH, TrainedPhysicsCoefficients.BETA_LENGTH);
    double[] alpha = v.nonNegative("alpha", OLDEST_ALPHA_LENGTH, TrainedPhysicsCoefficients.ALPHA_LENGTH);
    return new TrainedPhysicsParameters(
        Arrays.copyOf(beta, TrainedPhysicsCoefficients.BETA_LENGTH),
        Arrays.copyOf(alpha, TrainedPhysicsCoefficients.ALPHA_LENGTH));
  }

  double[] flat() {
    double[] out = new double[beta.length + alpha.length];
    System.arraycopy(beta, 0, out, 0, beta.length);
    System.arraycopy(alpha, 0, out, beta.length, alpha.length);
    return out;
  }
}
