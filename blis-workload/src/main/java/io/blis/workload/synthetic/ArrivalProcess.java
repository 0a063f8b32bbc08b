package io.blis.workload.synthetic;

import io.blis.workload.Sampling;
import java.util.SplittableRandom;

/**
 * An arrival process given by its inter-arrival gaps, in seconds. Every process has a mean rate
 * {@link #rateRps()} (requests per second); gamma and Weibull also have a coefficient of variation
 * of the gaps ({@code cv}: 1 is as bursty as Poisson, above 1 burstier, below 1 more regular).
 */
public sealed interface ArrivalProcess
    permits ArrivalProcess.Poisson,
        ArrivalProcess.Constant,
        ArrivalProcess.Gamma,
        ArrivalProcess.Weibull {

  /** Mean arrival rate, requests per second. */
  double rateRps();

  /** Draws the gap to the next arrival, seconds (positive). */
  double nextGapS(SplittableRandom rng);

  /** The same process shape at another mean rate. */
  ArrivalProcess withRate(double newRateRps);

  /** Exponential gaps with mean {@code 1/rate}. */
  record Poisson(double rateRps) implements ArrivalProcess {
    public Poisson {
      LengthDistribution.requirePositive("poisson rate", rateRps);
    }

    @Override
    public double nextGapS(SplittableRandom rng) {
      return Sampling.exponential(rng, 1.0 / rateRps);
    }

    @Override
    public ArrivalProcess withRate(double r) {
      return new Poisson(r);
    }
  }

  /** Evenly spaced arrivals, {@code 1/rate} apart. */
  record Constant(double rateRps) implements ArrivalProcess {
    public Constant {
      LengthDistribution.requirePositive("constant rate", rateRps);
    }

    @Override
    public double nextGapS(SplittableRandom rng) {
      return 1.0 / rateRps;
    }

    @Override
    public ArrivalProcess withRate(double r) {
      return new Constant(r);
    }
  }

  /** Gamma gaps with mean {@code 1/rate} and coefficient of variation {@code cv}: shape 1/cv^2. */
  record Gamma(double rateRps, double cv) implements ArrivalProcess {
    public Gamma {
      LengthDistribution.requirePositive("gamma rate", rateRps);
      LengthDistribution.requirePositive("gamma cv", cv);
    }

    @Override
    public double nextGapS(SplittableRandom rng) {
      double shape = 1.0 / (cv * cv);
      return Sampling.gamma(rng, shape, cv * cv / rateRps);
    }

    @Override
    public ArrivalProcess withRate(double r) {
      return new Gamma(r, cv);
    }
  }

  /**
   * Weibull gaps with mean {@code 1/rate} and coefficient of variation {@code cv}; the shape k is
   * solved from the CV by bisection, the scale is {@code mean / Gamma(1 + 1/k)}.
   */
  final class Weibull implements ArrivalProcess {
    private final double rateRps;
    private final double cv;
    private final double shape;
    private final double scaleS;

    public Weibull(double rateRps, double cv) {
      LengthDistribution.requirePositive("weibull rate", rateRps);
      LengthDistribution.requirePositive("weibull cv", cv);
      this.rateRps = rateRps;
      this.cv = cv;
      this.shape = shapeForCv(cv);
      this.scaleS = 1.0 / rateRps / StrictMath.exp(SpecialFunctions.logGamma(1 + 1 / shape));
    }

    @Override
    public double rateRps() {
      return rateRps;
    }

    /** Coefficient of variation of the gaps. */
    public double cv() {
      return cv;
    }

    /** Weibull shape k solved from the CV. */
    public double shape() {
      return shape;
    }

    @Override
    public double nextGapS(SplittableRandom rng) {
      return Sampling.weibull(rng, shape, scaleS);
    }

    @Override
    public ArrivalProcess withRate(double r) {
      return new Weibull(r, cv);
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Weibull w && w.rateRps == rateRps && w.cv == cv;
    }

    @Override
    public int hashCode() {
      return Double.hashCode(rateRps) * 31 + Double.hashCode(cv);
    }

    @Override
    public String toString() {
      return "Weibull[rateRps=" + rateRps + ", cv=" + cv + "]";
    }

    static double shapeForCv(double cv) {
      if (!(cv > 0) || !Double.isFinite(cv)) {
        throw new IllegalArgumentException("weibull cv must be a positive number, got " + cv);
      }
      // CV of Weibull(k) decreases monotonically in k.
      double lo = 0.02;
      double hi = 500;
      if (cv > weibullCv(lo) || cv < weibullCv(hi)) {
        throw new IllegalArgumentException(
            "weibull cv " + cv + " is outside the supported range [" + weibullCv(hi) + ", "
                + weibullCv(lo) + "]");
      }
      for (int i = 0; i < 200; i++) {
        double mid = 0.5 * (lo + hi);
        if (weibullCv(mid) > cv) {
          lo = mid;
        } else {
          hi = mid;
        }
      }
      return 0.5 * (lo + hi);
    }

    static double weibullCv(double k) {
      double g1 = SpecialFunctions.logGamma(1 + 1 / k);
      double g2 = SpecialFunctions.logGamma(1 + 2 / k);
      return StrictMath.sqrt(StrictMath.expm1(g2 - 2 * g1));
    }
  }
}
