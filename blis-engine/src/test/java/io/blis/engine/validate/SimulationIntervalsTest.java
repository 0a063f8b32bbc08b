package io.blis.engine.validate;

import static org.assertj.core.api.Assertions.assertThat;

import io.blis.api.Coefficients;
import io.blis.engine.EngineLimits;
import io.blis.engine.Simulation;
import io.blis.engine.result.SimulationResult;
import io.blis.latency.LatencyModels;
import io.blis.latency.catalog.GpuCatalog;
import io.blis.latency.catalog.GpuSpec;
import io.blis.latency.catalog.ModelCatalog;
import io.blis.latency.catalog.ModelConfig;
import io.blis.workload.synthetic.LengthSpec;
import io.blis.workload.synthetic.SyntheticWorkload;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/** The README's Java example of prediction intervals, run as written. */
class SimulationIntervalsTest {

  @Test
  void theReadmeExampleGivesAnIntervalAroundThePoint() {
    ModelConfig llama = ModelCatalog.byName("llama-2-7b");
    GpuSpec h100 = GpuCatalog.byName("H100");
    Function<Coefficients, SimulationResult> simulate = c -> Simulation.builder()
        .latencyModel(LatencyModels.create("trained-physics", llama, h100, 1, c))
        .limits(new EngineLimits(256, 2048, 0, 4096))
        .totalKvBlocks(7462)
        .source(SyntheticWorkload.poissonGaussian(5.0, 300, new LengthSpec(512, 128, 16, 2048),
            new LengthSpec(128, 32, 1, 512), 0, 42))
        .build()
        .run();
    SimulationResult point = simulate.apply(Coefficients.empty());
    Map<String, PredictionInterval> iv = SimulationIntervals.of(point, simulate, Ensemble.bundled(), 0.9);
    PredictionInterval e2e = iv.get("e2e_mean_ms");
    assertThat(e2e.point()).isEqualTo(point.overall().e2e().meanUs() / 1000.0);
    assertThat(e2e.low()).isLessThan(e2e.point());
    assertThat(e2e.high()).isGreaterThan(e2e.point());
    assertThat(e2e.memberLogSd()).isPositive();
    assertThat(iv).containsOnlyKeys(SimulationIntervals.KEYS);
    // deterministic: the same inputs give the same interval
    assertThat(SimulationIntervals.of(point, simulate, Ensemble.bundled(), 0.9)).isEqualTo(iv);
  }
}
