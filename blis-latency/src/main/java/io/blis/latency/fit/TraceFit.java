package io.blis.latency.fit;

import io.blis.api.Coefficients;
import io.blis.api.HardwareSpec;
import io.blis.api.ModelSpec;
import io.blis.latency.physics.StepFit;
import io.blis.latency.physics.TrainedPhysicsCoefficients;
import org.hipparchus.exception.MathRuntimeException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Learns trained-physics coefficients from vLLM traces of one deployment (model, GPU, TP): beta
 * from the traced steps whose batch is known ({@link StepFit}), alpha from the request journeys
 * ({@link AlphaFit}). A step's batch comes from its request snapshots ({@code
 * step.REQUEST_SNAPSHOT}, rich step tracing) when it has them, otherwise it is rebuilt from the
 * journeys ({@link BatchReconstruction}); steps whose batch is neither are left out and counted
 * by reason, as are steps whose {@code step.duration_us} is 0 or negative (a step takes time; such
 * a duration is a broken clock, and fitted it would turn the fit upside down). What the traces do
 * not determine keeps the starting coefficients.
 *
 * <p>A fit whose result is nonsense is refused rather than written: on the test steps, a mean
 * absolute error above {@value #MAX_TEST_MAPE_PCT}% of the measured step time, or predictions that
 * correlate negatively with the measurements (Pearson r below 0) while missing them by more than
 * {@value #NOISE_MAPE_PCT}% on average (a flat, noise-dominated trace may correlate weakly either
 * way and still fit well).
 */
public final class TraceFit {

  /** Fewest steps with their batch that the step fit accepts. */
  public static final int MIN_STEPS = 20;

  /** Largest test MAPE, percent, of a fit that is written. */
  public static final double MAX_TEST_MAPE_PCT = 100;

  /** Test MAPE, percent, below which a negative correlation is taken for noise on a flat trace. */
  public static final double NOISE_MAPE_PCT = 10;

  /** Left-out key of steps whose duration is 0 or negative. */
  public static final String NON_POSITIVE_DURATION = "non_positive_duration";

  private TraceFit() {}

  /**
   * The outcome.
   *
   * @param coefficients every trained-physics coefficient, fitted or kept
   * @param beta the step fit
   * @param alpha the journey fit
   * @param stepsFromSnapshots traced steps whose batch came from request snapshots
   * @param stepsFromJourneys traced steps whose batch was rebuilt from the journeys
   * @param stepsLeftOut traced steps without a known batch, by reason ({@link
   *     BatchReconstruction.Reason#key()})
   * @param warnings what the import skipped
   * @param firstSeen where each kind of warning was first seen ({@code FILE line N})
   */
  public record Outcome(Coefficients coefficients, StepFit.Result beta, AlphaFit.Result alpha,
      int stepsFromSnapshots, int stepsFromJourneys, Map<String, Long> stepsLeftOut,
      Map<String, Long> warnings, Map<String, String> firstSeen) {

    public Outcome {
      stepsLeftOut = Collections.unmodifiableMap(new LinkedHashMap<>(stepsLeftOut));
      warnings = Collections.unmodifiableMap(new LinkedHashMap<>(warnings));
      firstSeen = Collections.unmodifiableMap(new LinkedHashMap<>(firstSeen));
    }

    /** Traced steps used by the step fit. */
    public int stepsWithBatch() {
      return stepsFromSnapshots + stepsFromJourneys;
    }

    /** Traced steps left out (their batch unknown). */
    public long stepsWithoutBatch() {
      return stepsLeftOut.values().stream().mapToLong(Long::longValue).sum();
    }

    /**
     * Why coefficient {@code k} (in {@link TrainedPhysicsCoefficients#terms()} order: beta, then
     * alpha) was kept at its starting value, or null when the trace determined it.
     */
    public String notIdentified(int k) {
      int betas = TrainedPhysicsCoefficients.BETA_LENGTH;
      return k < betas ? beta.notIdentified()[k] : alpha.notIdentified()[k - betas];
    }
  }

  /** Reads {@code traces} and fits, starting from {@code start} (empty: the bundled defaults). */
  public static Outcome fit(Path traces, ModelSpec model, HardwareSpec gpu, int tp,
      Coefficients start) {
    TraceImport.Result imported = TraceImport.read(traces);
    if (imported.steps().isEmpty()) {
      throw new IllegalArgumentException(noSteps(traces, imported));
    }
    List<StepFit.Step> steps = new ArrayList<>();
    int fromSnapshots = 0;
    long nonPositive = 0;
    TracedStep firstNonPositive = null;
    for (TracedStep s : imported.steps()) {
      if (!s.requests().isEmpty()) {
        // vLLM snapshots every running request, also those given no token in the step
        List<TracedStep.Request> scheduled = s.requests().stream()
            .filter(q -> q.scheduledTokens() > 0).toList();
        if (!scheduled.isEmpty()) {
          if (s.durationUs() <= 0) {
            nonPositive++;
            firstNonPositive = firstNonPositive == null ? s : firstNonPositive;
            continue;
          }
          steps.add(new StepFit.Step(s.startNs(), s.durationUs(), new TracedBatch(scheduled)));
          fromSnapshots++;
        }
      }
    }
    BatchReconstruction.Result rebuilt = BatchReconstruction.reconstruct(imported.steps(),
        imported.journeys());
    int fromJourneys = 0;
    for (TracedStep s : rebuilt.steps()) {
      if (s.durationUs() <= 0) {
        nonPositive++;
        firstNonPositive = firstNonPositive == null ? s : firstNonPositive;
        continue;
      }
      steps.add(new StepFit.Step(s.startNs(), s.durationUs(), new TracedBatch(s)));
      fromJourneys++;
    }
    Map<String, Long> leftOut = new LinkedHashMap<>(rebuilt.leftOut());
    if (nonPositive > 0) {
      leftOut.put(NON_POSITIVE_DURATION, nonPositive);
    }
    if (steps.size() < MIN_STEPS) {
      throw new IllegalArgumentException(tooFew(traces, imported, fromSnapshots, fromJourneys,
          leftOut, firstNonPositive));
    }
    Coefficients startC = start.names().isEmpty() ? TrainedPhysicsCoefficients.bundled() : start;
    double[] all = TrainedPhysicsCoefficients.toArray(startC);
    StepFit.Result beta;
    try {
      beta = StepFit.fit(model, gpu, tp, startC, steps);
    } catch (MathRuntimeException e) {
      throw new IllegalArgumentException("traces " + traces + ": the step fit cannot determine the"
          + " coefficients from these " + steps.size() + " steps (" + e.getMessage() + "); check that"
          + " their step.duration_us and batches are real measurements", e);
    }
    refuseNonsense(traces, beta);
    double[] startAlpha = java.util.Arrays.copyOfRange(all, TrainedPhysicsCoefficients.BETA_LENGTH,
        all.length);
    AlphaFit.Result alpha = AlphaFit.fit(imported.journeys(), startAlpha);
    double[] out = all.clone();
    System.arraycopy(beta.beta(), 0, out, 0, TrainedPhysicsCoefficients.BETA_LENGTH);
    System.arraycopy(alpha.alpha(), 0, out, TrainedPhysicsCoefficients.BETA_LENGTH, alpha.alpha().length);
    return new Outcome(TrainedPhysicsCoefficients.toCoefficients(out, "fit of " + traces), beta,
        alpha, fromSnapshots, fromJourneys, leftOut, imported.warnings(), imported.firstSeen());
  }

  /** What a left-out key ({@link #NON_POSITIVE_DURATION} or a {@link BatchReconstruction.Reason}) means. */
  public static String describe(String leftOutKey) {
    if (leftOutKey.equals(NON_POSITIVE_DURATION)) {
      return "its step.duration_us is 0 or negative";
    }
    for (BatchReconstruction.Reason r : BatchReconstruction.Reason.values()) {
      if (r.key().equals(leftOutKey)) {
        return r.description();
      }
    }
    return leftOutKey;
  }

  /**
   * Refuses a fit whose test predictions miss by more than {@link #MAX_TEST_MAPE_PCT}% on average,
   * or correlate negatively with the measurements beyond noise.
   */
  private static void refuseNonsense(Path traces, StepFit.Result b) {
    boolean tooFar = !(b.testMapePct() < MAX_TEST_MAPE_PCT); // 100%: predictions nothing next to the steps
    // no correlation at all (constant durations or predictions: r undefined) counts as backwards
    boolean backwards = !(b.testPearson() >= 0) && b.testMapePct() > NOISE_MAPE_PCT;
    if (tooFar || backwards) {
      throw new IllegalArgumentException(String.format(java.util.Locale.ROOT,
          "traces %s: fit refused: on its %d test steps the fitted step times %s (test MAPE %.2f%%,"
              + " Pearson r %.4f); the traced step durations do not follow their batches: check"
              + " step.duration_us, and the model, GPU and TP", traces, b.testSteps(),
          backwards ? "run opposite to the measured ones" : "miss the measured ones by more than "
              + (int) MAX_TEST_MAPE_PCT + "% on average", b.testMapePct(), b.testPearson()));
    }
  }

  /**
   * The error when no step summary could be used: none in the trace (step tracing off), or every
   * one skipped, with the reasons and where each was first seen.
   */
  private static String noSteps(Path traces, TraceImport.Result imported) {
    if (imported.summaries() == 0) {
      return "traces " + traces + ": no step.BATCH_SUMMARY event (turn on step tracing: vLLM writes its"
          + " scheduler_steps span when the server shuts down gracefully)" + (imported.journeys().isEmpty()
          ? "" : "; " + imported.journeys().size() + " request journeys alone do not give step times");
    }
    StringBuilder m = new StringBuilder("traces ").append(traces).append(": none of the ")
        .append(imported.summaries()).append(" step.BATCH_SUMMARY events can be used: ");
    String sep = "";
    for (Map.Entry<String, Long> w : imported.warnings().entrySet()) {
      if (w.getKey().startsWith("step summary")) {
        m.append(sep).append(w.getValue()).append(' ').append(w.getKey())
            .append(" (first at ").append(imported.firstSeen().get(w.getKey())).append(')');
        sep = ", ";
      }
    }
    return m.append(". Each needs step.id, step.ts_start_ns, step.ts_end_ns, a finite step.duration_us"
        + " and the batch counts (batch.num_prefill_reqs, batch.num_decode_reqs, batch.prefill_tokens,"
        + " batch.decode_tokens)").toString();
  }

  /** The error when too few steps have their batch: the counts, and what would give more. */
  private static String tooFew(Path traces, TraceImport.Result imported, int fromSnapshots,
      int fromJourneys, Map<String, Long> leftOut, TracedStep firstNonPositive) {
    StringBuilder m = new StringBuilder("traces ").append(traces).append(": ")
        .append(fromSnapshots + fromJourneys).append(" of ").append(imported.steps().size())
        .append(leftOut.containsKey(NON_POSITIVE_DURATION) ? " traced steps have their batch and a positive"
            + " duration (" : " traced steps have their batch (").append(fromSnapshots)
        .append(" from step.REQUEST_SNAPSHOT, ").append(fromJourneys)
        .append(" rebuilt from ").append(imported.journeys().size())
        .append(" request journeys), at least ").append(MIN_STEPS).append(" are needed");
    if (!leftOut.isEmpty()) {
      m.append("; left out: ");
      String sep = "";
      for (Map.Entry<String, Long> e : leftOut.entrySet()) {
        m.append(sep).append(e.getValue()).append(' ').append(e.getKey()).append(" (")
            .append(describe(e.getKey())).append(')');
        sep = ", ";
      }
    }
    long nonPositive = leftOut.getOrDefault(NON_POSITIVE_DURATION, 0L);
    if (nonPositive > 0 && fromSnapshots + fromJourneys + nonPositive >= MIN_STEPS) {
      m.append(". The trace's step durations are broken (step ").append(firstNonPositive.stepId())
          .append(firstNonPositive.instance().isEmpty() ? "" : " of instance '" + firstNonPositive.instance() + "'")
          .append(" lasts ").append(firstNonPositive.durationUs()).append(" us): a step fit needs the"
              + " measured step.duration_us of each step");
    } else if (imported.journeys().isEmpty()) {
      m.append(". Turn on journey tracing (--enable-journey-tracing) or rich step tracing"
          + " (step.REQUEST_SNAPSHOT)");
    } else if (leftOut.getOrDefault(BatchReconstruction.Reason.UNTRACED_REQUESTS.key(), 0L) > 0) {
      m.append(". Trace every request's journey (--journey-tracing-sample-rate 1.0), or more steps");
    } else {
      m.append(". Trace more steps (--step-tracing-sample-rate)");
    }
    return m.toString();
  }
}
