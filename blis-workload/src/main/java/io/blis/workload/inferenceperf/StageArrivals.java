package io.blis.workload.inferenceperf;

import io.blis.workload.Sampling;
import java.util.SplittableRandom;

/**
 * Send offsets within one load stage, seconds from the stage start, pulled one at a time.
 *
 * <p>{@code CONSTANT}: {@code n = int(rate x duration)} exponential gaps {@code g_i} are drawn,
 * and request i is sent at {@code 1 s + duration x (g_1 + ... + g_i) / (g_1 + ... + g_n)}; the
 * gaps are drawn twice from the same seed (once to sum, once to emit) so nothing per request is
 * stored. {@code POISSON}: for every second j of the stage a Poisson count with mean {@code rate}
 * (prorated for a final partial second) is spread the same way over {@code [1 + j, 1 + j + 1)}.
 */
final class StageArrivals {

  /** inference-perf starts sending 1 s after a stage begins. */
  static final double START_DELAY_S = 1.0;

  private final LoadStage stage;
  private final InferencePerfProfile.LoadType type;
  private final long seed;
  private SplittableRandom rng;
  private double windowStartS;
  private double windowLengthS;
  private int windowCount;
  private int emittedInWindow;
  private double gapSum;
  private double cumulative;
  private int second = -1;
  private final int seconds;

  StageArrivals(LoadStage stage, InferencePerfProfile.LoadType type, long seed) {
    this.stage = stage;
    this.type = type;
    this.seed = seed;
    this.seconds = (int) Math.ceil(stage.durationS());
    if (type == InferencePerfProfile.LoadType.CONSTANT) {
      openWindow(new SplittableRandom(seed), 0, stage.durationS(), stage.numRequests());
    }
  }

  private void openWindow(SplittableRandom r, double startS, double lengthS, int count) {
    this.windowStartS = startS;
    this.windowLengthS = lengthS;
    this.windowCount = count;
    this.emittedInWindow = 0;
    this.gapSum = 0;
    this.cumulative = 0;
    long windowSeed = r.nextLong();
    SplittableRandom sum = new SplittableRandom(windowSeed);
    for (int i = 0; i < count; i++) {
      gapSum += Sampling.exponential(sum, 1.0);
    }
    this.rng = new SplittableRandom(windowSeed);
  }

  /** Offset of the next send from the stage start, seconds; NaN when the stage is complete. */
  double next() {
    while (emittedInWindow == windowCount) {
      if (type == InferencePerfProfile.LoadType.CONSTANT || second + 1 >= seconds) {
        return Double.NaN;
      }
      second++;
      SplittableRandom perSecond = new SplittableRandom(Sampling.mix(seed, second));
      double length = Math.min(1.0, stage.durationS() - second);
      int count = Sampling.poisson(perSecond, stage.rateRps() * length);
      openWindow(perSecond, second, length, count);
    }
    cumulative += Sampling.exponential(rng, 1.0);
    emittedInWindow++;
    double fraction = emittedInWindow == windowCount ? 1.0 : Math.min(1.0, cumulative / gapSum);
    return START_DELAY_S + windowStartS + windowLengthS * fraction;
  }
}
