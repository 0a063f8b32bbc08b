package io.blis.engine.validate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.blis.api.Coefficients;
import io.blis.engine.EngineLimits;
import io.blis.engine.Simulation;
import io.blis.engine.result.SimulationResult;
import io.blis.latency.LatencyModels;
import io.blis.latency.catalog.GpuCatalog;
import io.blis.latency.catalog.GpuSpec;
import io.blis.latency.catalog.ModelCatalog;
import io.blis.latency.catalog.ModelConfig;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import io.blis.workload.synthetic.LengthSpec;
import io.blis.workload.synthetic.SyntheticWorkload;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/** Prediction intervals of simulations: the README's Java example, and one worked by hand. */
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

  /** The blackbox model with every step {@code stepUs} long and nothing else costing time. */
  private static Coefficients constantStep(String name, double stepUs) {
    return Coefficients.of(name, Map.of("beta", new double[] {stepUs, 0, 0}, "alpha", new double[] {0, 0, 0}));
  }

  @Test
  void theIntervalOfConstantStepModelsIsTheFormulaWorkedByHand() {
    ModelConfig llama = ModelCatalog.byName("llama-2-7b");
    GpuSpec h100 = GpuCatalog.byName("H100");
    // four requests of 64 prompt tokens and 10, 20, 30, 40 output tokens, 10 s apart: each is alone
    // in the engine, so it takes one prefill step (its first token) and one decode step per further
    // token: E2E = output tokens x step, TTFT = step
    List<RequestSpec> requests = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      requests.add(RequestSpec.simple(i, i * 10_000_000L, java.util.stream.IntStream.range(1000 * i, 1000 * i + 64)
          .toArray(), 10 * (i + 1)));
    }
    Function<Coefficients, SimulationResult> simulate = c -> Simulation.builder()
        .latencyModel(LatencyModels.create("blackbox", llama, h100, 1, c))
        .source(RequestSource.of(requests))
        .build()
        .run();
    // the point: 8 ms steps, mean E2E 8 ms x (10 + 20 + 30 + 40) / 4 = 200 ms, mean TTFT 8 ms
    SimulationResult point = simulate.apply(constantStep("point", 8000));
    assertThat(point.overall().e2e().meanUs()).isEqualTo(200_000.0);
    assertThat(point.overall().ttft().meanUs()).isEqualTo(8_000.0);
    // three members with steps 0.9, 1.05 and 1.2 times the point's: their means are those ratios of it
    Ensemble ensemble = new Ensemble("blackbox", List.of(
        new Ensemble.Member("a", constantStep("a", 7200)),
        new Ensemble.Member("b", constantStep("b", 8400)),
        new Ensemble.Member("c", constantStep("c", 9600))),
        Map.of(Metric.E2E_MEAN, 0.03, Metric.TTFT_MEAN, 0.08), null,
        Map.of(Extrapolation.Kind.GPU, new Ensemble.Scale(Map.of(Metric.E2E_MEAN, 0.05, Metric.TTFT_MEAN, 0.1), 2),
            Extrapolation.Kind.TP, new Ensemble.Scale(Map.of(Metric.E2E_MEAN, 0.12, Metric.TTFT_MEAN, 0.2), 4)),
        "hand");
    List<Extrapolation> distances = List.of(new Extrapolation(Extrapolation.Kind.GPU, "gpu X not in fit"),
        new Extrapolation(Extrapolation.Kind.TP, "tp 8 > 4"));
    Map<String, PredictionInterval> iv = SimulationIntervals.of(point, simulate, ensemble, distances, 0.9);

    // s_members = sqrt(((ln 0.9)^2 + (ln 1.05)^2 + (ln 1.2)^2) / 3) = 0.1247965 for both metrics
    double sMembers = Math.sqrt((Math.pow(Math.log(0.9), 2) + Math.pow(Math.log(1.05), 2)
        + Math.pow(Math.log(1.2), 2)) / 3);
    assertThat(sMembers).isCloseTo(0.1247965, within(1e-7));
    // interval = point x exp(+-z sqrt(s_members^2 + s_residual^2 + s_gpu^2 + s_tp^2)), z = 1.645 for 90%
    double z = 1.6448536269514722;
    // E2E: sqrt(0.1247965^2 + 0.03^2 + 0.05^2 + 0.12^2) = 0.1826859; 200 x exp(-+0.3004916)
    double sE2e = Math.sqrt(sMembers * sMembers + 0.03 * 0.03 + 0.05 * 0.05 + 0.12 * 0.12);
    PredictionInterval e2e = iv.get("e2e_mean_ms");
    assertThat(e2e.point()).isEqualTo(200.0);
    assertThat(e2e.memberLogSd()).isCloseTo(sMembers, within(1e-12));
    assertThat(e2e.low()).isCloseTo(200 * Math.exp(-z * sE2e), within(1e-9));
    assertThat(e2e.high()).isCloseTo(200 * Math.exp(z * sE2e), within(1e-9));
    assertThat(e2e.low()).isCloseTo(148.0908, within(1e-4));
    assertThat(e2e.high()).isCloseTo(270.1045, within(1e-4));
    // TTFT: sqrt(0.1247965^2 + 0.08^2 + 0.1^2 + 0.2^2) = 0.2682800; 8 x exp(-+0.4412813)
    double sTtft = Math.sqrt(sMembers * sMembers + 0.08 * 0.08 + 0.1 * 0.1 + 0.2 * 0.2);
    PredictionInterval ttft = iv.get("ttft_mean_ms");
    assertThat(ttft.point()).isEqualTo(8.0);
    assertThat(ttft.low()).isCloseTo(8 * Math.exp(-z * sTtft), within(1e-9));
    assertThat(ttft.high()).isCloseTo(8 * Math.exp(z * sTtft), within(1e-9));
    assertThat(ttft.low()).isCloseTo(5.1457, within(1e-4));
    assertThat(ttft.high()).isCloseTo(12.4376, within(1e-4));
    assertThat(ttft.extrapolation()).isEqualTo(distances);
  }
}
