package io.blis.engine.trace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.blis.api.Coefficients;
import io.blis.api.HardwareSpec;
import io.blis.api.LatencyModel;
import io.blis.api.ModelSpec;
import io.blis.engine.EngineLimits;
import io.blis.engine.Simulation;
import io.blis.latency.LatencyModels;
import io.blis.latency.catalog.GpuCatalog;
import io.blis.latency.catalog.ModelCatalog;
import io.blis.latency.fit.TraceFit;
import io.blis.latency.fit.TraceImport;
import io.blis.latency.physics.TrainedPhysicsCoefficients;
import io.blis.workload.synthetic.LengthSpec;
import io.blis.workload.synthetic.SyntheticWorkload;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Parameter recovery without request snapshots: simulate with known trained-physics coefficients
 * and 3% multiplicative noise on every step, export journeys and step summaries only (vLLM's
 * {@code --enable-journey-tracing} with plain step tracing), fit, and find every coefficient the
 * data determine within 5%, with the step-time error at the noise floor; then the same with only
 * half of the requests' journeys traced.
 */
class JourneyFitRecoveryTest {

  private static final ModelSpec MODEL = ModelCatalog.byName("meta-llama/Llama-2-7b-hf");
  private static final HardwareSpec GPU = GpuCatalog.byName("H100");

  /** The ground truth: the defaults scaled, as in StepFitRecoveryTest. */
  private static double[] truth() {
    double[] truth = TrainedPhysicsCoefficients.defaults();
    double[] factors = {1.3, 1.2, 1.15, 1.25, 1.1, 1, 1, 1, 1, 1, 1.3, 0.8, 1};
    for (int k = 0; k < factors.length; k++) {
      truth[k] *= factors[k];
    }
    return truth;
  }

  /** The truth's step times with 3% lognormal noise (seeded: the run is deterministic). */
  private static LatencyModel noisy(double[] truth) {
    Coefficients c = TrainedPhysicsCoefficients.toCoefficients(truth, "truth");
    LatencyModel exact = LatencyModels.create("trained-physics", MODEL, GPU, 1, c);
    return new NoisyLatencyModel(exact, 0.03, 3);
  }

  /** Simulates the recovery workload, writing journeys and step summaries (no snapshots). */
  private static void simulate(Path file, double[] truth, double stepRate, double journeyRate,
      double requestRate, long requests) {
    try (OtlpTraceWriter w = new OtlpTraceWriter(file, stepRate, journeyRate, false, 11)) {
      Simulation.builder().latencyModel(noisy(truth)).limits(new EngineLimits(256, 2048, 0, 8192))
          .totalKvBlocks(7462)
          .source(SyntheticWorkload.poissonGaussian(requestRate, requests,
              new LengthSpec(1500, 1000, 16, 6000), new LengthSpec(200, 150, 1, 800), 0, 5))
          .listener(w).build().run();
    }
  }

  private static String report(double[] truth, TraceFit.Outcome o) {
    StringBuilder r = new StringBuilder();
    List<String> names = TrainedPhysicsCoefficients.names();
    for (int k = 0; k < 13; k++) {
      r.append(String.format("%s truth %.4f fit %.4f exercised %s%n", names.get(k), truth[k],
          o.beta().beta()[k], o.beta().exercised()[k]));
    }
    return r.append(String.format("steps %d from journeys, %d from snapshots, left out %s;"
        + " test MAPE %.2f%% r %.4f", o.stepsFromJourneys(), o.stepsFromSnapshots(),
        o.stepsLeftOut(), o.beta().testMapePct(), o.beta().testPearson())).toString();
  }

  private static void assertDeterminedWithin5Pct(double[] truth, TraceFit.Outcome o, String report) {
    for (int k = 0; k < 13; k++) {
      if (o.beta().exercised()[k]) {
        assertThat(o.beta().beta()[k] / truth[k]).as(report).isBetween(0.95, 1.05);
      }
    }
  }

  @Test
  void journeysAndStepSummariesAloneRecoverTheCoefficients(@TempDir Path dir) {
    double[] truth = truth();
    Path file = dir.resolve("journeys.jsonl.gz");
    simulate(file, truth, 0.1, 1.0, 8, 8000);
    TraceImport.Result imported = TraceImport.read(file);
    assertThat(imported.steps()).allSatisfy(s -> assertThat(s.requests()).isEmpty());

    TraceFit.Outcome o = TraceFit.fit(file, MODEL, GPU, 1, TrainedPhysicsCoefficients.bundled());
    String report = report(truth, o);
    System.out.println("journeys + summaries: " + report);
    assertThat(o.stepsFromSnapshots()).isZero();
    // nearly every traced step's batch is rebuilt; the rest are counted, none is guessed
    assertThat(o.stepsFromJourneys()).as(report).isGreaterThan((int) (0.9 * imported.steps().size()));
    assertThat(o.stepsWithBatch() + o.stepsWithoutBatch()).isEqualTo(imported.steps().size());
    assertThat(o.stepsLeftOut()).doesNotContainKey("untraced_requests")
        .doesNotContainKey("disagrees_with_summary");
    assertDeterminedWithin5Pct(truth, o, report);
    assertThat(o.beta().exercised()[0] && o.beta().exercised()[3] && o.beta().exercised()[4])
        .as(report).isTrue();
    // 3% lognormal noise alone gives about 2.4% MAPE
    assertThat(o.beta().testMapePct()).as(report).isLessThan(3);
    assertThat(o.beta().testPearson()).as(report).isGreaterThan(0.99);
    double[] fitted = TrainedPhysicsCoefficients.toArray(o.coefficients());
    for (int k = 0; k < 3; k++) {
      double expected = Math.floor(truth[13 + k]);
      assertThat(fitted[13 + k]).as("alpha %d", k).isCloseTo(expected,
          org.assertj.core.data.Offset.offset(Math.max(1.0, 0.05 * expected)));
    }
  }

  @Test
  void halfTheJourneysFitTheStepsWhoseBatchIsFullyTracedAndCountTheRest(@TempDir Path dir) {
    // light load (small batches), every step summarized, one request in two traced
    double[] truth = truth();
    Path file = dir.resolve("half.jsonl.gz");
    simulate(file, truth, 1.0, 0.5, 2, 1500);
    TraceImport.Result imported = TraceImport.read(file);
    TraceFit.Outcome o = TraceFit.fit(file, MODEL, GPU, 1, TrainedPhysicsCoefficients.bundled());
    String report = report(truth, o);
    System.out.println("half the journeys, light load: " + report);
    long untraced = o.stepsLeftOut().getOrDefault("untraced_requests", 0L);
    assertThat(untraced).as(report).isGreaterThan(imported.steps().size() / 2);
    assertThat(o.stepsWithBatch() + o.stepsWithoutBatch()).isEqualTo(imported.steps().size());
    // what the fully traced steps determine is right; the rest keeps its starting value
    assertDeterminedWithin5Pct(truth, o, report);
    assertThat(o.beta().exercised()[3] && o.beta().exercised()[4]).as(report).isTrue();
    assertThat(o.beta().testMapePct()).as(report).isLessThan(3);
  }

  @Test
  void halfTheJourneysOfAHeavyLoadAreAClearErrorWithTheCounts(@TempDir Path dir) {
    // the recovery workload's batches of tens of requests are almost never fully traced
    double[] truth = truth();
    Path file = dir.resolve("half-heavy.jsonl.gz");
    simulate(file, truth, 0.1, 0.5, 8, 8000);
    int steps = TraceImport.read(file).steps().size();
    assertThatThrownBy(() -> TraceFit.fit(file, MODEL, GPU, 1, TrainedPhysicsCoefficients.bundled()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("traced steps have their batch (0 from step.REQUEST_SNAPSHOT, ")
        .hasMessageContaining(" of " + steps + " traced steps")
        .hasMessageContaining("at least 20 are needed")
        .hasMessageContaining("untraced_requests (the summary counts more requests than have a journey")
        .hasMessageContaining("--journey-tracing-sample-rate 1.0");
  }
}
