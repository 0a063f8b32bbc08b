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
    return FitRecovery.report(truth, TrainedPhysicsCoefficients.defaults(), o);
  }

  private static void assertDeterminedWithin5Pct(double[] truth, TraceFit.Outcome o, String report) {
    FitRecovery.assertEveryCoefficient(truth, TrainedPhysicsCoefficients.defaults(), o);
  }

  @Test
  void journeysAndStepSummariesAloneRecoverTheCoefficients(@TempDir Path dir) {
    double[] truth = FitRecovery.truth();
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
    // queueing, scheduling and per-token time come from every journey: determined
    for (int k = 0; k < 3; k++) {
      assertThat(o.notIdentified(TrainedPhysicsCoefficients.BETA_LENGTH + k)).as(report).isNull();
    }
  }

  /**
   * vLLM's defaults (docs: step summaries on 1% of steps, no snapshots; journeys on every
   * request): the coefficients such a trace determines, as README lists them.
   */
  @Test
  void aDefaultSampledTraceDeterminesTheDominantTermsAndTheAlphas(@TempDir Path dir) {
    double[] truth = FitRecovery.truth();
    Path file = dir.resolve("default.jsonl.gz");
    simulate(file, truth, 0.01, 1.0, 8, 8000);
    TraceFit.Outcome o = TraceFit.fit(file, MODEL, GPU, 1, TrainedPhysicsCoefficients.bundled());
    String report = report(truth, o);
    System.out.println("default sampling: " + report);
    FitRecovery.assertEveryCoefficient(truth, TrainedPhysicsCoefficients.defaults(), o);
    List<String> fitted = new java.util.ArrayList<>();
    for (int k = 0; k < TrainedPhysicsCoefficients.terms().size(); k++) {
      if (o.notIdentified(k) == null) {
        fitted.add(TrainedPhysicsCoefficients.terms().get(k).name());
      }
    }
    assertThat(fitted).as(report).containsExactly(DEFAULT_SAMPLED_DETERMINES.toArray(String[]::new));
    // 227 steps do not separate the weight reads from the KV reads: named, with its partner
    assertThat(o.notIdentified(4)).as(report).contains("trades against decode_memory");
  }

  /** What README says a default-sampled trace of this workload determines. */
  static final List<String> DEFAULT_SAMPLED_DETERMINES = List.of("prefill_compute", "decode_memory",
      "queueing_us", "scheduling_us", "per_output_token_us", "preemption_us");

  @Test
  void halfTheJourneysFitTheStepsWhoseBatchIsFullyTracedAndCountTheRest(@TempDir Path dir) {
    // light load (small batches), every step summarized, one request in two traced
    double[] truth = FitRecovery.truth();
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
    double[] truth = FitRecovery.truth();
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
