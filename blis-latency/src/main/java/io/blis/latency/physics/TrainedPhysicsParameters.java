package io.blis.latency.physics;

import io.blis.api.Coefficients;
import io.blis.latency.coeff.CoefficientVectors;

/** The validated beta and alpha vectors of the trained-physics model. */
record TrainedPhysicsParameters(double[] beta, double[] alpha) {

  static TrainedPhysicsParameters of(Coefficients given) {
    CoefficientVectors v =
        new CoefficientVectors(
            TrainedPhysicsCoefficients.LATENCY_MODEL, given, TrainedPhysicsCoefficients.bundled());
    double[] beta =
        v.nonNegative(
            "beta", 13,
            TrainedPhysicsCoefficients.BETA_LENGTH);
    if (beta.length < TrainedPhysicsCoefficients.BETA_LENGTH) {
      // files written before sampling_us_per_kvocab or sampling_passes existed: those terms are off
      beta = java.util.Arrays.copyOf(beta, TrainedPhysicsCoefficients.BETA_LENGTH);
    }
    double[] alpha = v.nonNegative("alpha", 3, TrainedPhysicsCoefficients.ALPHA_LENGTH);
    if (alpha.length < TrainedPhysicsCoefficients.ALPHA_LENGTH) {
      double[] a = new double[TrainedPhysicsCoefficients.ALPHA_LENGTH];
      System.arraycopy(alpha, 0, a, 0, alpha.length);
      alpha = a;
    }
    return new TrainedPhysicsParameters(beta, alpha);
  }

  double[] flat() {
    double[] out = new double[beta.length + alpha.length];
    System.arraycopy(beta, 0, out, 0, beta.length);
    System.arraycopy(alpha, 0, out, beta.length, alpha.length);
    return out;
  }
}
