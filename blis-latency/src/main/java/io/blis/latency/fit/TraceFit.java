package io.blis.latency.fit;

import io.blis.api.Coefficients;
import io.blis.api.HardwareSpec;
import io.blis.api.ModelSpec;
import io.blis.latency.physics.StepFit;
import io.blis.latency.physics.TrainedPhysicsCoefficients;
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
 * by reason. What the traces do not determine keeps the starting coefficients.
 */
public final class TraceFit {

  /** Fewest steps with their batch that the step fit accepts. */
  public static final int MIN_STEPS = 20;

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
   */
  public record Outcome(Coefficients coefficients, StepFit.Result beta, AlphaFit.Result alpha,
      int stepsFromSnapshots, int stepsFromJourneys, Map<String, Long> stepsLeftOut,
      Map<String, Long> warnings) {

    public Outcome {
      stepsLeftOut = Collections.unmodifiableMap(new LinkedHashMap<>(stepsLeftOut));
      warnings = Collections.unmodifiableMap(new LinkedHashMap<>(warnings));
    }

    /** Traced steps used by the step fit. */
    public int stepsWithBatch() {
      return stepsFromSnapshots + stepsFromJourneys;
    }

    /** Traced steps left out (their batch unknown). */
    public long stepsWithoutBatch() {
      return stepsLeftOut.values().stream().mapToLong(Long::longValue).sum();
    }
  }

  /** Reads {@code traces} and fits, starting from {@code start} (empty: the bundled defaults). */
  public static Outcome fit(Path traces, ModelSpec model, HardwareSpec gpu, int tp,
      Coefficients start) {
    TraceImport.Result imported = TraceImport.read(traces);
    if (imported.steps().isEmpty()) {
      throw new IllegalArgumentException("traces " + traces + ": no step.BATCH_SUMMARY event"
          + " (turn on step tracing: vLLM writes its scheduler_steps span when the server shuts down"
          + " gracefully)" + (imported.journeys().isEmpty() ? "" : "; "
          + imported.journeys().size() + " request journeys alone do not give step times"));
    }
    List<StepFit.Step> steps = new ArrayList<>();
    int fromSnapshots = 0;
    for (TracedStep s : imported.steps()) {
      if (!s.requests().isEmpty()) {
        // vLLM snapshots every running request, also those given no token in the step
        List<TracedStep.Request> scheduled = s.requests().stream()
            .filter(q -> q.scheduledTokens() > 0).toList();
        if (!scheduled.isEmpty()) {
          steps.add(new StepFit.Step(s.startNs(), s.durationUs(), new TracedBatch(scheduled)));
          fromSnapshots++;
        }
      }
    }
    BatchReconstruction.Result rebuilt = BatchReconstruction.reconstruct(imported.steps(),
        imported.journeys());
    for (TracedStep s : rebuilt.steps()) {
      steps.add(new StepFit.Step(s.startNs(), s.durationUs(), new TracedBatch(s)));
    }
    int fromJourneys = rebuilt.steps().size();
    if (steps.size() < MIN_STEPS) {
      throw new IllegalArgumentException(tooFew(traces, imported, fromSnapshots, fromJourneys,
          rebuilt.leftOut()));
    }
    Coefficients startC = start.names().isEmpty() ? TrainedPhysicsCoefficients.bundled() : start;
    double[] all = TrainedPhysicsCoefficients.toArray(startC);
    StepFit.Result beta = StepFit.fit(model, gpu, tp, startC, steps);
    double[] startAlpha = java.util.Arrays.copyOfRange(all, TrainedPhysicsCoefficients.BETA_LENGTH,
        all.length);
    AlphaFit.Result alpha = AlphaFit.fit(imported.journeys(), startAlpha);
    double[] out = all.clone();
    System.arraycopy(beta.beta(), 0, out, 0, TrainedPhysicsCoefficients.BETA_LENGTH);
    System.arraycopy(alpha.alpha(), 0, out, TrainedPhysicsCoefficients.BETA_LENGTH, alpha.alpha().length);
    return new Outcome(TrainedPhysicsCoefficients.toCoefficients(out, "fit of " + traces), beta,
        alpha, fromSnapshots, fromJourneys, rebuilt.leftOut(), imported.warnings());
  }

  /** The error when too few steps have their batch: the counts, and what would give more. */
  private static String tooFew(Path traces, TraceImport.Result imported, int fromSnapshots,
      int fromJourneys, Map<String, Long> leftOut) {
    StringBuilder m = new StringBuilder("traces ").append(traces).append(": ")
        .append(fromSnapshots + fromJourneys).append(" of ").append(imported.steps().size())
        .append(" traced steps have their batch (").append(fromSnapshots)
        .append(" from step.REQUEST_SNAPSHOT, ").append(fromJourneys)
        .append(" rebuilt from ").append(imported.journeys().size())
        .append(" request journeys), at least ").append(MIN_STEPS).append(" are needed");
    if (!leftOut.isEmpty()) {
      m.append("; left out: ");
      String sep = "";
      for (BatchReconstruction.Reason r : BatchReconstruction.Reason.values()) {
        Long n = leftOut.get(r.key());
        if (n != null) {
          m.append(sep).append(n).append(' ').append(r.key()).append(" (").append(r.description())
              .append(')');
          sep = ", ";
        }
      }
    }
    if (imported.journeys().isEmpty()) {
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
