package io.blis.latency.fit;

import io.blis.api.Coefficients;
import io.blis.api.HardwareSpec;
import io.blis.api.ModelSpec;
import io.blis.latency.physics.StepFit;
import io.blis.latency.physics.TrainedPhysicsCoefficients;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Learns trained-physics coefficients from vLLM traces of one deployment (model, GPU, TP): beta
 * from the traced steps with request snapshots ({@link StepFit}), alpha from the request journeys
 * ({@link AlphaFit}). What the traces do not determine keeps the starting coefficients.
 */
public final class TraceFit {

  private TraceFit() {}

  /**
   * The outcome.
   *
   * @param coefficients every trained-physics coefficient, fitted or kept
   * @param beta the step fit
   * @param alpha the journey fit
   * @param stepsWithBatch traced steps with their batch (used by the step fit)
   * @param stepsWithoutBatch traced steps without request snapshots (not usable)
   * @param warnings what the import skipped
   */
  public record Outcome(Coefficients coefficients, StepFit.Result beta, AlphaFit.Result alpha,
      int stepsWithBatch, int stepsWithoutBatch, Map<String, Long> warnings) {}

  /** Reads {@code traces} and fits, starting from {@code start} (empty: the bundled defaults). */
  public static Outcome fit(Path traces, ModelSpec model, HardwareSpec gpu, int tp,
      Coefficients start) {
    TraceImport.Result imported = TraceImport.read(traces);
    List<StepFit.Step> steps = new ArrayList<>();
    int without = 0;
    for (TracedStep s : imported.steps()) {
      if (s.requests().isEmpty()) {
        without++;
      } else {
        steps.add(new StepFit.Step(s.startNs(), s.durationUs(), new TracedBatch(s)));
      }
    }
    if (steps.size() < 20) {
      throw new IllegalArgumentException("traces " + traces + ": " + steps.size()
          + " traced steps carry their batch (step.REQUEST_SNAPSHOT), at least 20 are needed; "
          + without + " have a summary only (turn on rich step tracing)");
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
        alpha, steps.size(), without, imported.warnings());
  }
}
