package io.blis.engine.validate;

import io.blis.engine.cluster.VllmVersion;
import java.util.Locale;
import java.util.Optional;

/**
 * The ways a run lies outside the fitted runs that its model, GPU and layout do not show: the
 * vLLM engine that served it, the batches it stepped and how its requests arrived. The fitted runs
 * are vLLM 0.15's V1 engine with async scheduling, between about 3 and 128 requests a step, fed by
 * Poisson streams (README, "Accuracy against real vLLM").
 */
public final class RunDistances {

  /** The first V0 release with asynchronous output processing and multi-step scheduling. */
  static final VllmVersion V0_ASYNC_OUTPUT = VllmVersion.parse("0.6.0");
  /** Mean requests a step at or below which a run is a small-batch extreme. */
  public static final double SMALL_BATCH = 2.0;
  /** Mean requests a step above which a run is a large-batch extreme. */
  public static final double LARGE_BATCH = 128.0;
  /** Requests arriving at one instant from which a run is a burst. */
  public static final int BURST = 32;

  private RunDistances() {}

  /**
   * The distance of the engine that served a run: none for V1 scheduling asynchronously (the fitted
   * runs), else its generation.
   */
  public static Optional<Extrapolation> engine(VllmVersion version, boolean v1, boolean async) {
    if (v1 && async) {
      return Optional.empty();
    }
    String v = "vLLM " + version.number();
    if (v1) {
      return Optional.of(new Extrapolation(Extrapolation.Kind.ENGINE_V1_SYNC, v + " V1 engine scheduling"
          + " synchronously not in fit (V1 with async scheduling, 0.15)"));
    }
    return Optional.of(version.compareTo(V0_ASYNC_OUTPUT) >= 0
        ? new Extrapolation(Extrapolation.Kind.ENGINE_V0, v + " V0 engine not in fit (V1 with async scheduling, 0.15)")
        : new Extrapolation(Extrapolation.Kind.ENGINE_V0_EARLY, v + " V0 engine before 0.6 not in fit (V1 with"
            + " async scheduling, 0.15)"));
  }

  /**
   * Requests per engine step over a simulated run, on average: its output tokens per step (each
   * decoding request gives one a step; NaN without a step).
   */
  public static double meanBatch(io.blis.engine.result.SimulationResult r) {
    long steps = r.engine() == null ? 0 : r.engine().steps();
    return steps == 0 ? Double.NaN : (double) r.overall().outputTokens() / steps;
  }

  /** The distance of a run that stepped {@code meanBatch} requests a step on average, if extreme. */
  public static Optional<Extrapolation> batch(double meanBatch) {
    if (!Double.isFinite(meanBatch)) {
      return Optional.empty();
    }
    if (meanBatch <= SMALL_BATCH) {
      return Optional.of(new Extrapolation(Extrapolation.Kind.BATCH, String.format(Locale.ROOT,
          "%.1f requests a step on average, at most %.0f: not in fit (3-128)", meanBatch, SMALL_BATCH)));
    }
    if (meanBatch > LARGE_BATCH) {
      return Optional.of(new Extrapolation(Extrapolation.Kind.BATCH, String.format(Locale.ROOT,
          "%.0f requests a step on average, above %.0f: not in fit (3-128)", meanBatch, LARGE_BATCH)));
    }
    return Optional.empty();
  }

  /** The distance of a run in which {@code atOnce} requests arrived at one instant, if a burst. */
  public static Optional<Extrapolation> burst(long atOnce) {
    return atOnce >= BURST
        ? Optional.of(new Extrapolation(Extrapolation.Kind.BURST, atOnce + " requests arriving at once not in fit"
            + " (Poisson arrivals)"))
        : Optional.empty();
  }
}
