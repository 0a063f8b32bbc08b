package io.blis.workload.synthetic;

/** Log-gamma for the Weibull parameterisation (Lanczos approximation, g = 7, n = 9). */
final class SpecialFunctions {

  private static final double[] LANCZOS = {
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
    -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
    1.5056327351493116e-7
  };

  private SpecialFunctions() {}

  /** ln Gamma(x) for x > 0. */
  static double logGamma(double x) {
    if (x < 0.5) {
      return StrictMath.log(Math.PI / StrictMath.sin(Math.PI * x)) - logGamma(1 - x);
    }
    x -= 1;
    double a = LANCZOS[0];
    double t = x + 7.5;
    for (int i = 1; i < 9; i++) {
      a += LANCZOS[i] / (x + i);
    }
    return 0.5 * StrictMath.log(2 * Math.PI) + (x + 0.5) * StrictMath.log(t) - t + StrictMath.log(a);
  }
}
