package io.blis.engine.validate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.blis.api.Coefficients;
import io.blis.latency.physics.TrainedPhysicsCoefficients;
import io.blis.workload.inferenceperf.InferencePerfProfile;
import io.blis.workload.inferenceperf.LoadStage;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Parameter recovery through the real engine: observations are produced by the simulator itself
 * with known trained-physics coefficients, and the calibration must find them again.
 */
class EngineCalibrationTest {

  private static final List<String> FREE = List.of("decode_memory", "weight_load", "scheduling_us");

  @Test
  void recoversCoefficientsTheSimulatorUsed() {
    EngineRunSimulator sim = new EngineRunSimulator(EngineRunSimulator.Mode.SYNTHETIC, "trained-physics", 7);
    // a fixed truth, not the bundled defaults, which change whenever they are recalibrated
    double[] truth = {2.34, 1.51, 0.755, 1.0, 1.21, 1.09, 2.24, 2.0, 19.6, 5.76, 4.76, 656.1, 18.6,
        5.5, 30.0, 2892.2, 5053.2, 0, 0};
    List<String> names = TrainedPhysicsCoefficients.names();
    double[] known = {1.4, 1.6, 3000};
    for (int i = 0; i < FREE.size(); i++) {
      truth[names.indexOf(FREE.get(i))] = known[i];
    }
    Coefficients truthCoefficients = TrainedPhysicsCoefficients.toCoefficients(truth, "truth");

    Experiment base = ExperimentsFile.read(TraceFixtures.resource("experiments-small.json")).get(0);
    List<Experiment> exps = new ArrayList<>();
    for (double rate : new double[] {2, 8, 16}) {
      InferencePerfProfile p = new InferencePerfProfile(base.profile().data(), List.of(new LoadStage(rate, 15)), 1, 300);
      Experiment e = copy(base, "rate-" + rate, p, base.observed());
      exps.add(copy(e, e.id(), p, sim.simulate(e, truthCoefficients, 0)));
    }

    // start from the truth with the free coefficients moved away
    double[] start = truth.clone();
    double[] offStart = {1.15, 1.3, 800};
    for (int i = 0; i < FREE.size(); i++) {
      start[names.indexOf(FREE.get(i))] = offStart[i];
    }
    ParameterSpace space = TrainedPhysicsCalibration.space(TrainedPhysicsCoefficients.toCoefficients(start, "start"));
    // Staged like the real calibration: the step-time multipliers from the decode time per
    // token (which the per-request overhead does not touch), then the overhead from TTFT.
    List<CalibrationStage> stages = List.of(
        new CalibrationStage("steps", FREE.subList(0, 2), 0, 0, 1, 0, 150, 60),
        new CalibrationStage("overhead", FREE.subList(2, 3), 0, 1, 0, 0, 0, 60));
    PrintStream quiet = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
    try (Calibrator cal = new Calibrator(sim, space, new Calibrator.Settings(11, 2, 0, 0.05), quiet)) {
      Calibrator.Result r = cal.fit(exps, stages);
      // the multipliers within 4%; the overhead, which only shifts TTFT by a few percent of a
      // step-quantized value (which step a request joins moves with the multipliers' last
      // 0.1-0.3%), within 15% (from a start 73% off)
      double[] tolerance = {0.04, 0.04, 0.15};
      for (int i = 0; i < FREE.size(); i++) {
        assertThat(r.values()[names.indexOf(FREE.get(i))]).as(FREE.get(i))
            .isCloseTo(known[i], within(tolerance[i] * known[i]));
      }
      for (ExperimentComparison c : r.comparisons()) {
        assertThat(c.ape(Metric.E2E_MEAN)).as(c.id()).isLessThan(1.0);
      }
    }
  }

  private static Experiment copy(Experiment b, String id, InferencePerfProfile p, RunSummary observed) {
    return new Experiment(id, b.model(), b.modelConfig(), b.gpu(), b.tp(), b.dp(), b.maxModelLen(),
        b.maxNumBatchedTokens(), b.maxNumSeqs(), b.gpuMemoryUtilization(), b.blockSizeTokens(), b.kvBlocksGpu(),
        b.cpuOffloadBytes(), b.workloadName(), p, false, observed, b.trace());
  }
}
