package io.blis.workload.synthetic;

import io.blis.workload.Sampling;
import java.util.SplittableRandom;

/**
 * A Gaussian length distribution in tokens: {@code round(clamp(mean + stdev Z, min, max))}.
 *
 * @param mean mean before clamping, tokens
 * @param stdev standard deviation, tokens (0 gives {@code mean} every time)
 * @param min smallest length, tokens, at least 1
 * @param max largest length, tokens, at least {@code min}
 */
public record LengthSpec(double mean, double stdev, int min, int max) implements LengthDistribution {

  public LengthSpec {
    if (!Double.isFinite(mean)) {
      throw new IllegalArgumentException("gaussian mean must be a finite number, got " + mean);
    }
    if (!(stdev >= 0) || !Double.isFinite(stdev)) {
      throw new IllegalArgumentException("gaussian std_dev must be >= 0, got " + stdev);
    }
    LengthDistribution.requireBounds("gaussian", min, max);
  }

  /** Always {@code tokens}: mean {@code tokens}, no spread. */
  public static LengthSpec fixed(int tokens) {
    return new LengthSpec(tokens, 0, tokens, tokens);
  }

  @Override
  public int sample(SplittableRandom rng) {
    if (stdev == 0 || min == max) {
      return LengthDistribution.clampRound(mean, min, max);
    }
    return LengthDistribution.clampRound(mean + stdev * Sampling.standardNormal(rng), min, max);
  }

  @Override
  public double nominalMean() {
    return mean;
  }
}
