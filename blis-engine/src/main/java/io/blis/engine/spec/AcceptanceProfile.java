package io.blis.engine.spec;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * How likely each draft position is to be accepted. Position {@code i} (from 0) is accepted with
 * probability {@code conditional[i]} when every position before it was; the first rejection ends
 * the run (the target's own token replaces it), so a verification of {@code k} drafts keeps 0 to
 * {@code k} of them and the spread of tokens per step, and so of inter-token latency, is that of
 * the real engine rather than a mean.
 *
 * <p>vLLM's metrics print unconditional rates per position (the fraction of drafts whose position
 * {@code i} was accepted, {@code vllm:spec_decode_num_accepted_tokens_per_pos}); {@link
 * #ofPositionRates} turns them into this form. Go BLIS gives one mean fraction; {@link #ofMeanRate}
 * spreads it as a constant conditional rate with the same mean.
 *
 * @param conditional per position, the probability it is accepted given the ones before were; each
 *     in [0, 1]
 */
public record AcceptanceProfile(double[] conditional) {

  public AcceptanceProfile {
    if (conditional == null || conditional.length == 0) {
      throw new IllegalArgumentException("an acceptance profile needs at least one position");
    }
    conditional = conditional.clone();
    for (int i = 0; i < conditional.length; i++) {
      double p = conditional[i];
      if (!(p >= 0 && p <= 1)) {
        throw new IllegalArgumentException("acceptance of position " + (i + 1) + " must be in [0, 1], got " + p);
      }
    }
  }

  /**
   * A profile from vLLM's unconditional per-position acceptance rates (the fraction of
   * verifications that kept position {@code i}), which cannot rise from one position to the next.
   *
   * @throws IllegalArgumentException when a rate is outside [0, 1] or above the one before it
   */
  public static AcceptanceProfile ofPositionRates(double... rates) {
    if (rates == null || rates.length == 0) {
      throw new IllegalArgumentException("per-position acceptance rates: give at least one");
    }
    double[] c = new double[rates.length];
    double before = 1.0;
    for (int i = 0; i < rates.length; i++) {
      double a = rates[i];
      if (!(a >= 0 && a <= 1)) {
        throw new IllegalArgumentException("acceptance rate of position " + (i + 1) + " must be in [0, 1], got " + a);
      }
      if (a > before + 1e-9) {
        throw new IllegalArgumentException("acceptance rate of position " + (i + 1) + " (" + a + ") is above position "
            + i + "'s (" + before + "): a draft is kept only when every draft before it was");
      }
      c[i] = before <= 0 ? 0.0 : Math.min(1.0, a / before);
      before = a;
    }
    return new AcceptanceProfile(c);
  }

  /**
   * Go BLIS's {@code --speculative-acceptance-rate}: the mean fraction of the {@code k} drafts
   * accepted, spread as the constant conditional rate {@code p} with {@code p + p^2 + ... + p^k =
   * rate x k}.
   *
   * @throws IllegalArgumentException when {@code rate} is outside [0, 1] or {@code k} below 1
   */
  public static AcceptanceProfile ofMeanRate(double rate, int k) {
    if (!(rate >= 0 && rate <= 1)) {
      throw new IllegalArgumentException("speculative acceptance rate must be in [0, 1], got " + rate);
    }
    if (k < 1) {
      throw new IllegalArgumentException("a mean acceptance rate needs at least 1 speculative token, got " + k);
    }
    double target = rate * k;
    double lo = 0;
    double hi = 1;
    for (int it = 0; it < 80; it++) { // bisection: the mean rises with p
      double mid = (lo + hi) / 2;
      if (meanOfConstant(mid, k) < target) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    double[] c = new double[k];
    Arrays.fill(c, rate >= 1 ? 1.0 : rate <= 0 ? 0.0 : (lo + hi) / 2);
    return new AcceptanceProfile(c);
  }

  private static double meanOfConstant(double p, int k) {
    double sum = 0;
    double pi = 1;
    for (int i = 0; i < k; i++) {
      pi *= p;
      sum += pi;
    }
    return sum;
  }

  /** {@return the conditional acceptance of position {@code i} (from 0); past the last, the last one's} */
  public double conditionalAt(int i) {
    return conditional[Math.min(i, conditional.length - 1)];
  }

  /** {@return the unconditional rate of position {@code i} (from 0): the chance a verification keeps it} */
  public double positionRate(int i) {
    double a = 1;
    for (int j = 0; j <= i; j++) {
      a *= conditionalAt(j);
    }
    return a;
  }

  /** {@return the expected drafts kept out of {@code k}} */
  public double meanAccepted(int k) {
    double sum = 0;
    double a = 1;
    for (int i = 0; i < k; i++) {
      a *= conditionalAt(i);
      sum += a;
    }
    return sum;
  }

  /**
   * Draws how many of {@code proposed} drafts one verification keeps.
   *
   * @param rng the instance's generator (the same seed gives the same draws)
   */
  public int draw(SplittableRandom rng, int proposed) {
    int kept = 0;
    while (kept < proposed && rng.nextDouble() < conditionalAt(kept)) {
      kept++;
    }
    return kept;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof AcceptanceProfile p && Arrays.equals(conditional, p.conditional);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(conditional);
  }

  @Override
  public String toString() {
    return "AcceptanceProfile" + Arrays.toString(conditional);
  }
}
