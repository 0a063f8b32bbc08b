package io.blis.workload.synthetic;

import io.blis.workload.RequestSpec;
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

  /**
   * The lowest rate a process may have, requests per second: one request per {@link
   * RequestSpec#MAX_TIME_US} (365 days), about 3.17e-8. At a lower rate the mean gap between
   * requests is beyond the latest time a workload may reach.
   */
  double MIN_RATE_RPS = 1e6 / RequestSpec.MAX_TIME_US;

  /** Mean arrival rate, requests per second. */
  double rateRps();

  /** {@link #MIN_RATE_RPS} and what it means, for messages. */
  static String minRateWords() {
    return String.format(java.util.Locale.ROOT, "%.3g", MIN_RATE_RPS) + " requests per second"
        + " (one per " + RequestSpec.MAX_TIME_WORDS + ", the latest simulated time)";
  }

  /** Checks a rate: finite and at least {@link #MIN_RATE_RPS}. */
  static void requireRate(String what, double rateRps) {
    LengthDistribution.requirePositive(what, rateRps);
    if (rateRps < MIN_RATE_RPS) {
      throw new IllegalArgumentException(what + " must be at least " + minRateWords()
          + ", got " + rateRps);
    }
  }

  /** Draws the gap to the next arrival, seconds (positive). */
  double nextGapS(SplittableRandom rng);

  /** The same process shape at another mean rate. */
  ArrivalProcess withRate(double newRateRps);

  /** Exponential gaps with mean {@code 1/rate}. */
  record Poisson(double rateRps) implements ArrivalProcess {
    public Poisson {
      ArrivalProcess.requireRate("poisson rate", rateRps);
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
      ArrivalProcess.requireRate("constant rate", rateRps);
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
      ArrivalProcess.requireRate("gamma rate", rateRps);
      LengthDistribution.requirePositive("gamma cv", cv);
      if (cv < MIN_GAMMA_CV || cv > MAX_GAMMA_CV) {
        throw new IllegalArgumentException("gamma cv " + cv + " is outside the supported range ["
            + MIN_GAMMA_CV + ", " + MAX_GAMMA_CV + "]");
      }
    }

    /**
     * Supported coefficients of variation: beyond them the gamma sampler degenerates (gaps that
     * all round to 0, or a rejection loop that never accepts).
     */
    public static final double MIN_GAMMA_CV = 0.01;

    public static final double MAX_GAMMA_CV = 100;

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
      ArrivalProcess.requireRate("weibull rate", rateRps);
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

    /**
     * Weibull gaps of shape {@code k} and scale {@code scaleS} seconds (fitted parameters, as
     * ServeGen gives them): mean rate {@code 1 / (scale Gamma(1 + 1/k))}.
     */
    public static Weibull ofShapeAndScale(double k, double scaleS) {
      LengthDistribution.requirePositive("weibull scale", scaleS);
      double cv = cvForShape(k);
      return new Weibull(1.0 / (scaleS * StrictMath.exp(SpecialFunctions.logGamma(1 + 1 / k))), cv);
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

    /**
     * The coefficient of variation of Weibull gaps of shape {@code k} (the inverse of the shape
     * solved from a CV): {@code sqrt(Gamma(1 + 2/k) / Gamma(1 + 1/k)^2 - 1)}.
     *
     * @throws IllegalArgumentException unless {@code k} is a positive finite number
     */
    public static double cvForShape(double k) {
      LengthDistribution.requirePositive("weibull shape", k);
      return weibullCv(k);
    }

    static double weibullCv(double k) {
      double g1 = SpecialFunctions.logGamma(1 + 1 / k);
      double g2 = SpecialFunctions.logGamma(1 + 2 / k);
      return StrictMath.sqrt(StrictMath.expm1(g2 - 2 * g1));
    }
  }
}
