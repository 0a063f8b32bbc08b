package io.blis.workload.synthetic;

import io.blis.workload.RequestSpec;
import io.blis.workload.Sampling;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * A distribution of token counts (prompt or output lengths). Every sample is an integer of at
 * least 1 token and at most {@link RequestSpec#MAX_TOKENS}.
 */
public sealed interface LengthDistribution
    permits LengthSpec,
        LengthDistribution.Exponential,
        LengthDistribution.LogNormal,
        LengthDistribution.Constant,
        LengthDistribution.Empirical,
        LengthDistribution.ParetoLogNormal {

  /** Draws one length, in tokens (at least 1). */
  int sample(SplittableRandom rng);

  /** Mean of the distribution before clamping and rounding, in tokens. */
  double nominalMean();

  /** Exponential with mean {@code mean} tokens, rounded and clamped to [min, max]. */
  record Exponential(double mean, int min, int max) implements LengthDistribution {
    public Exponential {
      requirePositive("exponential mean", mean);
      requireBounds("exponential", min, max);
    }

    @Override
    public int sample(SplittableRandom rng) {
      return clampRound(Sampling.exponential(rng, mean), min, max);
    }

    @Override
    public double nominalMean() {
      return mean;
    }
  }

  /**
   * Log-normal: {@code exp(mu + sigma Z)} tokens, rounded and clamped to [min, max]; {@code mu} and
   * {@code sigma} are those of the underlying normal.
   */
  record LogNormal(double mu, double sigma, int min, int max) implements LengthDistribution {
    public LogNormal {
      if (!Double.isFinite(mu)) {
        throw new IllegalArgumentException("lognormal mu must be a finite number, got " + mu);
      }
      if (!(sigma >= 0) || !Double.isFinite(sigma)) {
        throw new IllegalArgumentException("lognormal sigma must be >= 0, got " + sigma);
      }
      requireBounds("lognormal", min, max);
    }

    @Override
    public int sample(SplittableRandom rng) {
      return clampRound(StrictMath.exp(mu + sigma * Sampling.standardNormal(rng)), min, max);
    }

    @Override
    public double nominalMean() {
      return StrictMath.exp(mu + sigma * sigma / 2);
    }
  }

  /**
   * A mixture (ServeGen's language lengths): with probability {@code mixWeight} a Pareto draw of
   * shape {@code alpha} and scale (smallest value) {@code xm}, {@code xm / U^(1/alpha)}; otherwise
   * a log-normal draw {@code exp(mu + sigma Z)}. Rounded and clamped to [min, max].
   */
  record ParetoLogNormal(double alpha, double xm, double mu, double sigma, double mixWeight, int min,
      int max) implements LengthDistribution {
    public ParetoLogNormal {
      requirePositive("pareto_lognormal alpha", alpha);
      requirePositive("pareto_lognormal xm", xm);
      if (!Double.isFinite(mu)) {
        throw new IllegalArgumentException("pareto_lognormal mu must be a finite number, got " + mu);
      }
      if (!(sigma >= 0) || !Double.isFinite(sigma)) {
        throw new IllegalArgumentException("pareto_lognormal sigma must be >= 0, got " + sigma);
      }
      if (!(mixWeight >= 0 && mixWeight <= 1)) {
        throw new IllegalArgumentException(
            "pareto_lognormal mix_weight (the probability of the Pareto part) must be in [0, 1], got "
                + mixWeight);
      }
      requireBounds("pareto_lognormal", min, max);
    }

    @Override
    public int sample(SplittableRandom rng) {
      double x;
      if (rng.nextDouble() < mixWeight) {
        x = xm / StrictMath.pow(Sampling.uniformOpenZero(rng), 1.0 / alpha);
      } else {
        x = StrictMath.exp(mu + sigma * Sampling.standardNormal(rng));
      }
      return clampRound(x, min, max);
    }

    @Override
    public double nominalMean() {
      double pareto = alpha > 1 ? alpha * xm / (alpha - 1) : Double.POSITIVE_INFINITY;
      double logNormal = StrictMath.exp(mu + sigma * sigma / 2);
      return mixWeight == 0 ? logNormal : mixWeight * pareto + (1 - mixWeight) * logNormal;
    }
  }

  /** Always {@code value} tokens. */
  record Constant(int value) implements LengthDistribution {
    public Constant {
      if (value < 1 || value > RequestSpec.MAX_TOKENS) {
        throw new IllegalArgumentException("constant length must be at least 1 token and at most "
            + RequestSpec.MAX_TOKENS + " (" + TOKEN_BOUND + "), got " + value);
      }
    }

    @Override
    public int sample(SplittableRandom rng) {
      return value;
    }

    @Override
    public double nominalMean() {
      return value;
    }
  }

  /**
   * A finite distribution: length {@code values[i]} with probability {@code probabilities[i]}
   * (normalised to sum 1). Sampled by inverse CDF over the values in ascending order.
   */
  record Empirical(int[] values, double[] probabilities) implements LengthDistribution {
    public Empirical {
      if (values.length == 0 || values.length != probabilities.length) {
        throw new IllegalArgumentException(
            "empirical distribution needs one probability per value and at least one value");
      }
      Integer[] order = new Integer[values.length];
      for (int i = 0; i < order.length; i++) {
        order[i] = i;
      }
      int[] vs = values;
      Arrays.sort(order, (a, b) -> Integer.compare(vs[a], vs[b]));
      int[] sortedValues = new int[values.length];
      double[] cdf = new double[values.length];
      double total = 0;
      for (int i = 0; i < order.length; i++) {
        int v = values[order[i]];
        double p = probabilities[order[i]];
        if (v < 1 || v > RequestSpec.MAX_TOKENS) {
          throw new IllegalArgumentException("empirical length must be in [1, "
              + RequestSpec.MAX_TOKENS + "] tokens (" + TOKEN_BOUND + "), got " + v);
        }
        if (i > 0 && v == sortedValues[i - 1]) {
          throw new IllegalArgumentException("empirical distribution lists length " + v + " twice");
        }
        if (!(p >= 0) || !Double.isFinite(p)) {
          throw new IllegalArgumentException(
              "empirical probability of length " + v + " must be >= 0, got " + p);
        }
        sortedValues[i] = v;
        total += p;
        cdf[i] = total;
      }
      if (!(total > 0)) {
        throw new IllegalArgumentException("empirical probabilities must not all be 0");
      }
      for (int i = 0; i < cdf.length; i++) {
        cdf[i] /= total;
      }
      values = sortedValues;
      probabilities = cdf;
    }

    /** The values in ascending order; {@link #probabilities()} then holds the cumulative sums. */
    @Override
    public int[] values() {
      return values.clone();
    }

    @Override
    public double[] probabilities() {
      return probabilities.clone();
    }

    @Override
    public int sample(SplittableRandom rng) {
      double u = rng.nextDouble();
      int lo = 0;
      int hi = probabilities.length - 1;
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        if (probabilities[mid] > u) {
          hi = mid;
        } else {
          lo = mid + 1;
        }
      }
      return values[lo];
    }

    @Override
    public double nominalMean() {
      double mean = 0;
      double prev = 0;
      for (int i = 0; i < values.length; i++) {
        mean += values[i] * (probabilities[i] - prev);
        prev = probabilities[i];
      }
      return mean;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Empirical e
          && Arrays.equals(values, e.values)
          && Arrays.equals(probabilities, e.probabilities);
    }

    @Override
    public int hashCode() {
      return 31 * Arrays.hashCode(values) + Arrays.hashCode(probabilities);
    }

    @Override
    public String toString() {
      return "Empirical[values=" + Arrays.toString(values) + ", cdf=" + Arrays.toString(probabilities)
          + "]";
    }
  }

  /** Rounds {@code x} half up and clamps it to [min, max]. */
  static int clampRound(double x, int min, int max) {
    if (x <= min) {
      return min;
    }
    if (x >= max) {
      return max;
    }
    return (int) StrictMath.floor(x + 0.5);
  }

  static void requirePositive(String what, double v) {
    if (!(v > 0) || !Double.isFinite(v)) {
      throw new IllegalArgumentException(what + " must be a positive number, got " + v);
    }
  }

  /** Why lengths are bounded, for error messages. */
  String TOKEN_BOUND = "the most tokens a request may have";

  static void requireBounds(String what, int min, int max) {
    if (min < 1 || min > RequestSpec.MAX_TOKENS) {
      throw new IllegalArgumentException(what + " min must be in [1, " + RequestSpec.MAX_TOKENS
          + "] tokens, got " + min);
    }
    if (max > RequestSpec.MAX_TOKENS) {
      throw new IllegalArgumentException(what + " max must be at most " + RequestSpec.MAX_TOKENS
          + " tokens (" + TOKEN_BOUND + "), got " + max);
    }
    if (max < min) {
      throw new IllegalArgumentException(what + " max " + max + " is below min " + min);
    }
  }
}
