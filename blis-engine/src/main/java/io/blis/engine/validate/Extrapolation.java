package io.blis.engine.validate;

import io.blis.workload.TextFiles;
import java.util.Locale;

/**
 * One way a prediction lies outside what its coefficients were fitted on, with the reason in
 * words (for example {@code gpu A100-80GB not in fit (H100)}). Each kind has its own error scale
 * in the {@link Ensemble}, estimated from the runs that measure it ({@link IntervalScales}); a
 * prediction's interval adds the scales of every kind it carries.
 *
 * @param kind what is outside
 * @param reason what, in words
 */
public record Extrapolation(Kind kind, String reason) {

  /** What a prediction can be outside of. */
  public enum Kind {
    /**
     * A GPU type no fitted run ran on, whose kernel efficiency is measured (the step model scales
     * the fitted GPU's coefficients by measured kernel timings of both).
     */
    GPU,
    /**
     * A GPU type no fitted run ran on, whose kernel efficiency is estimated from a GPU of the same
     * kernel family: its interval is never narrower than a measured GPU's.
     */
    GPU_ESTIMATE,
    /**
     * A GPU type no fitted run ran on, none of whose kernels is measured (its efficiency taken from a
     * GPU of another architecture, or no entry at all): never narrower than an estimated GPU's; no
     * run measures it, so it takes the largest scale there is.
     */
    GPU_ASSUMED,
    /** A tensor-parallel degree outside the fitted range. */
    TP,
    /** A weight precision (bytes per parameter) no fitted model had. */
    PRECISION,
    /** A number of routed experts no fitted model had (dense counts as 0). */
    EXPERTS,
    /** An architecture family ({@code model_type}) no fitted model had. */
    FAMILY,
    /** Pipeline, data or expert parallelism: every fitted run was tensor-parallel only. */
    LAYOUT,
    /** Multi-head latent attention (DeepSeek-V2/V3): no fitted model had it. */
    ATTENTION,
    /**
     * The predicted run is overloaded (mean TTFT above 5 s or more than 5% of requests failed):
     * the fit saw no overloaded run, and there queues magnify every error of the step time.
     */
    SATURATED,
    /** A number of experts a token is routed to (top-k) no fitted model had (dense counts as 0). */
    TOPK,
    /**
     * vLLM's V1 engine scheduling synchronously (releases before 0.14, or async scheduling turned
     * off): its host time is not hidden behind the GPU as in the fitted runs.
     */
    ENGINE_V1_SYNC,
    /** vLLM's first engine (V0) from 0.6 (asynchronous output processing, multi-step scheduling). */
    ENGINE_V0,
    /** vLLM's first engine (V0) before 0.6: the most host time per step, and early kernels. */
    ENGINE_V0_EARLY,
    /**
     * A batch outside what the fitted runs stepped: on average at most 2 requests a step (batch-1
     * latency), or more than 128.
     */
    BATCH,
    /** Many requests arriving at once (32 or more): the fitted runs arrived as Poisson streams. */
    BURST;

    /** The name in files and JSON ({@code gpu}, {@code tp}, ...). */
    public String key() {
      return name().toLowerCase(Locale.ROOT);
    }

    /** The kind named {@code key}. */
    public static Kind parse(String key) {
      for (Kind k : values()) {
        if (k.key().equals(key)) {
          return k;
        }
      }
      throw new IllegalArgumentException("unknown extrapolation kind '" + TextFiles.quote(key) + "', expected one of "
          + java.util.Arrays.stream(values()).map(Kind::key).toList());
    }
  }

  /**
   * The kind whose scale is the floor of {@code k}'s: an estimated GPU is at least as uncertain as
   * a measured one, an assumed one at least as an estimated one; null for the other kinds.
   */
  public static Kind floorOf(Kind k) {
    return switch (k) {
      case GPU_ESTIMATE -> Kind.GPU;
      case GPU_ASSUMED -> Kind.GPU_ESTIMATE;
      default -> null;
    };
  }

  /** Mean TTFT above which a predicted run counts as overloaded, ms (as the ground truth marks runs). */
  public static final double SATURATED_TTFT_MS = 5000;
  /** Failure fraction above which a predicted run counts as overloaded. */
  public static final double SATURATED_FAILURES = 0.05;

  /** Whether a predicted run is overloaded, from its mean TTFT (ms) and failure fraction. */
  public static boolean saturated(double ttftMeanMs, double failureFraction) {
    return (Double.isFinite(ttftMeanMs) && ttftMeanMs > SATURATED_TTFT_MS)
        || (Double.isFinite(failureFraction) && failureFraction > SATURATED_FAILURES);
  }

  /** The distance of an overloaded prediction. */
  public static Extrapolation saturatedRun(double ttftMeanMs, double failureFraction) {
    return new Extrapolation(Kind.SATURATED, String.format(Locale.ROOT,
        "predicted run overloaded (mean TTFT %.0f ms, %.1f%% failed); no fitted run was", ttftMeanMs,
        100 * (Double.isFinite(failureFraction) ? failureFraction : 0)));
  }
}
