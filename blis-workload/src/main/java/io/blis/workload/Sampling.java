package io.blis.workload;

import java.util.SplittableRandom;

/**
 * Random variates drawn from a {@link SplittableRandom} with {@link StrictMath}, so a seed gives
 * bit-identical samples on every JDK. Shared by the generators of this module; the units of each
 * sample are those of its parameters.
 */
public final class Sampling {

  private Sampling() {}

  /** Uniform in (0, 1]: never 0, so its logarithm is finite. */
  public static double uniformOpenZero(SplittableRandom rng) {
    return 1.0 - rng.nextDouble();
  }

  /** Exponential with the given mean. */
  public static double exponential(SplittableRandom rng, double mean) {
    return -mean * StrictMath.log(uniformOpenZero(rng));
  }

  /** Standard normal (Marsaglia's polar method; the second variate is discarded). */
  public static double standardNormal(SplittableRandom rng) {
    while (true) {
      double u = 2.0 * rng.nextDouble() - 1.0;
      double v = 2.0 * rng.nextDouble() - 1.0;
      double s = u * u + v * v;
      if (s > 0 && s < 1) {
        return u * StrictMath.sqrt(-2.0 * StrictMath.log(s) / s);
      }
    }
  }

  /** Gamma with the given shape and scale (Marsaglia and Tsang; boosted for shape below 1). */
  public static double gamma(SplittableRandom rng, double shape, double scale) {
    if (shape < 1) {
      double boost = StrictMath.pow(uniformOpenZero(rng), 1.0 / shape);
      return gamma(rng, shape + 1, scale) * boost;
    }
    double d = shape - 1.0 / 3.0;
    double c = 1.0 / StrictMath.sqrt(9.0 * d);
    while (true) {
      double x = standardNormal(rng);
      double v = 1.0 + c * x;
      if (v <= 0) {
        continue;
      }
      v = v * v * v;
      double u = uniformOpenZero(rng);
      if (StrictMath.log(u) < 0.5 * x * x + d - d * v + d * StrictMath.log(v)) {
        return d * v * scale;
      }
    }
  }

  /** Weibull with the given shape k and scale lambda (inverse CDF). */
  public static double weibull(SplittableRandom rng, double shape, double scale) {
    return scale * StrictMath.pow(-StrictMath.log(uniformOpenZero(rng)), 1.0 / shape);
  }

  /**
   * Poisson-distributed count with the given mean (exact: sums inversion draws of mean at most
   * 30).
   */
  public static int poisson(SplittableRandom rng, double mean) {
    if (!(mean >= 0) || !Double.isFinite(mean)) {
      throw new IllegalArgumentException("poisson mean must be >= 0, got " + mean);
    }
    int pieces = (int) Math.ceil(mean / 30.0);
    double part = pieces == 0 ? 0 : mean / pieces;
    int count = 0;
    for (int k = 0; k < pieces; k++) {
      double limit = StrictMath.exp(-part);
      double product = rng.nextDouble();
      while (product > limit) {
        count++;
        product *= rng.nextDouble();
      }
    }
    return count;
  }

  /** Shuffles {@code a} in place (Fisher-Yates). */
  public static void shuffle(int[] a, SplittableRandom rng) {
    for (int i = a.length - 1; i > 0; i--) {
      int j = rng.nextInt(i + 1);
      int t = a[i];
      a[i] = a[j];
      a[j] = t;
    }
  }

  /** A well-mixed 64-bit hash of two values (SplitMix64 finalizer), for deriving sub-seeds. */
  public static long mix(long a, long b) {
    long z = a * 0x9E3779B97F4A7C15L + b;
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  /** A sub-seed for a named subsystem, stable across runs (FNV-1a of the name mixed with seed). */
  public static long subSeed(long seed, String name) {
    long h = 0xcbf29ce484222325L;
    for (int i = 0; i < name.length(); i++) {
      h ^= name.charAt(i);
      h *= 0x100000001b3L;
    }
    return mix(seed, h);
  }
}
