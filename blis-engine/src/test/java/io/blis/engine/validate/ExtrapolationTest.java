package io.blis.engine.validate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.blis.api.ModelSpec;
import io.blis.latency.catalog.GpuCatalog;
import io.blis.latency.catalog.ModelCatalog;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ExtrapolationTest {

  private static final List<Metric> METRICS = Ensemble.METRICS;

  /** The runs the bundled coefficients were fitted on: seven models on H100, TP 1 to 4. */
  private static final List<Object[]> FITTED = List.of(
      new Object[] {"meta-llama/Llama-2-7b-hf", 1}, new Object[] {"meta-llama/Llama-2-70b-hf", 4},
      new Object[] {"mistralai/Mixtral-8x7B-v0.1", 2}, new Object[] {"meta-llama/Llama-3.1-70B-Instruct", 4},
      new Object[] {"mistralai/Mistral-Nemo-Instruct-2407", 1}, new Object[] {"mistralai/Mistral-Nemo-Instruct-2407", 2},
      new Object[] {"Qwen/Qwen2.5-7B-Instruct", 1}, new Object[] {"01-ai/Yi-34B", 2});

  @Test
  void theBundledDomainIsTheDomainOfTheFittedRuns() {
    List<FitDomain.Fitted> fitted = new ArrayList<>();
    for (Object[] f : FITTED) {
      fitted.add(new FitDomain.Fitted(ModelCatalog.byName((String) f[0]), GpuCatalog.byName("H100"), (int) f[1]));
    }
    assertThat(Ensemble.bundled().domain()).isEqualTo(FitDomain.of(fitted));
  }

  @Test
  void distancesNameWhatLiesOutside() {
    Ensemble e = Ensemble.bundled();
    ModelSpec llama8b = ModelCatalog.byName("meta-llama/Llama-3.1-8B-Instruct");
    assertThat(e.distances(llama8b, GpuCatalog.byName("H100"), 2)).isEmpty();
    assertThat(e.distances(llama8b, GpuCatalog.resolve("A100-80GB"), 1)).extracting(Extrapolation::reason)
        .containsExactly("gpu A100-80GB not in fit (H100), kernel efficiency measured");
    assertThat(e.distances(llama8b, GpuCatalog.resolve("A100-80GB"), 1)).extracting(Extrapolation::kind)
        .containsExactly(Extrapolation.Kind.GPU);
    assertThat(e.distances(ModelCatalog.byName("mistralai/Mixtral-8x22B-Instruct-v0.1"), GpuCatalog.byName("H100"), 8))
        .extracting(Extrapolation::reason).containsExactly("tp 8 > 4");
    assertThat(e.distances(ModelCatalog.byName("RedHatAI/Llama-4-Scout-17B-16E-Instruct-FP8-dynamic"),
        GpuCatalog.byName("H100"), 2)).extracting(Extrapolation::kind)
        .containsExactly(Extrapolation.Kind.PRECISION, Extrapolation.Kind.EXPERTS, Extrapolation.Kind.TOPK,
            Extrapolation.Kind.FAMILY);
    assertThat(e.distances(ModelCatalog.byName("Qwen/Qwen3-14B"), GpuCatalog.resolve("L40S"), 1))
        .extracting(Extrapolation::reason)
        .containsExactly("gpu L40S not in fit (H100), kernel efficiency estimated from A40",
            "family qwen3 not in fit (llama, mistral, mixtral, qwen2)");
    assertThat(e.distances(ModelCatalog.byName("Qwen/Qwen3-14B"), GpuCatalog.resolve("L40S"), 1))
        .extracting(Extrapolation::kind).containsExactly(Extrapolation.Kind.GPU_ESTIMATE, Extrapolation.Kind.FAMILY);
    // a GPU nothing is known of: its datasheet with the anchor's shares, an estimate
    io.blis.latency.catalog.GpuSpec bare = new io.blis.latency.catalog.GpuSpec("X9", 500e12, 0, 3e12, 80L << 30, 200e9);
    assertThat(e.distances(llama8b, GpuCatalog.byName("MI300X"), 1)).singleElement().satisfies(x -> {
      assertThat(x.kind()).isEqualTo(Extrapolation.Kind.GPU_ASSUMED);
      assertThat(x.reason()).isEqualTo("gpu MI300X not in fit (H100), kernel efficiency assumed from H100 (none of"
          + " its kernels measured)");
    });
    assertThat(e.distances(llama8b, bare, 1)).singleElement().satisfies(x -> {
      assertThat(x.kind()).isEqualTo(Extrapolation.Kind.GPU_ASSUMED);
      assertThat(x.reason()).isEqualTo("gpu X9 not in fit (H100), no kernel-efficiency entry, taken to realize the"
          + " H100's shares of its datasheet");
    });
  }

  @Test
  void runsOutsideTheFittedEngineBatchesAndArrivalsSaySo() {
    io.blis.engine.cluster.VllmVersion v = io.blis.engine.cluster.VllmVersion.parse("0.11.0");
    assertThat(RunDistances.engine(io.blis.engine.cluster.VllmVersion.FITTED, true, true)).isEmpty();
    assertThat(RunDistances.engine(v, true, true)).isEmpty();
    assertThat(RunDistances.engine(v, true, false)).get().extracting(Extrapolation::kind)
        .isEqualTo(Extrapolation.Kind.ENGINE_V1_SYNC);
    assertThat(RunDistances.engine(io.blis.engine.cluster.VllmVersion.parse("0.6.3"), false, false)).get()
        .extracting(Extrapolation::reason).isEqualTo("vLLM 0.6.3 V0 engine not in fit (V1 with async scheduling, 0.15)");
    assertThat(RunDistances.engine(io.blis.engine.cluster.VllmVersion.parse("0.4.0"), false, false)).get()
        .extracting(Extrapolation::kind).isEqualTo(Extrapolation.Kind.ENGINE_V0_EARLY);
    assertThat(RunDistances.batch(1.0)).get().extracting(Extrapolation::reason)
        .isEqualTo("1.0 requests a step on average, at most 2: not in fit (3-128)");
    assertThat(RunDistances.batch(40)).isEmpty();
    assertThat(RunDistances.batch(300)).get().extracting(Extrapolation::kind).isEqualTo(Extrapolation.Kind.BATCH);
    assertThat(RunDistances.batch(Double.NaN)).isEmpty();
    assertThat(RunDistances.burst(31)).isEmpty();
    assertThat(RunDistances.burst(1000)).get().extracting(Extrapolation::reason)
        .isEqualTo("1000 requests arriving at once not in fit (Poisson arrivals)");
  }

  @Test
  void modelsOfOtherRoutingPrecisionOrAttentionAreOutsideTheDomain() throws Exception {
    Ensemble e = Ensemble.bundled();
    ModelSpec gptOss = ModelCatalog.fromFile(java.nio.file.Path.of("..", "docs", "public-measurements", "models",
        "openai--gpt-oss-20b", "config.json"));
    assertThat(e.distances(gptOss, GpuCatalog.byName("H100"), 1)).extracting(Extrapolation::reason)
        .containsExactly("experts of 0.53125 bytes/param not in fit (2)", "32 experts not in fit (dense, 8)",
            "top-4 routing not in fit (dense, top-2)", "family gpt_oss not in fit (llama, mistral, mixtral, qwen2)",
            "12 sliding-window layers (128 tokens) not in fit (full attention only)");
  }

  @Test
  void anEstimatedGpusIntervalIsNeverNarrowerThanAMeasuredOnes() {
    List<Extrapolation> measured = List.of(new Extrapolation(Extrapolation.Kind.GPU, "g"));
    List<Extrapolation> estimated = List.of(new Extrapolation(Extrapolation.Kind.GPU_ESTIMATE, "e"));
    Ensemble narrow = bundledWith(Map.of(Extrapolation.Kind.GPU, 0.2, Extrapolation.Kind.GPU_ESTIMATE, 0.05));
    assertThat(narrow.extrapolationLogSd(estimated, Metric.E2E_MEAN)).isEqualTo(0.2);
    Ensemble wide = bundledWith(Map.of(Extrapolation.Kind.GPU, 0.2, Extrapolation.Kind.GPU_ESTIMATE, 0.3));
    assertThat(wide.extrapolationLogSd(estimated, Metric.E2E_MEAN)).isEqualTo(0.3);
    assertThat(wide.extrapolationLogSd(measured, Metric.E2E_MEAN)).isEqualTo(0.2);
    IntervalScales.Scales s = new IntervalScales.Scales(0, Map.of(Extrapolation.Kind.GPU, 0.2,
        Extrapolation.Kind.GPU_ESTIMATE, 0.05));
    assertThat(s.logSd(java.util.Set.of(Extrapolation.Kind.GPU_ESTIMATE))).isCloseTo(0.2, within(1e-12));
    // an assumed GPU no run measured takes the largest scale, never less than an estimated one's
    List<Extrapolation> assumed = List.of(new Extrapolation(Extrapolation.Kind.GPU_ASSUMED, "a"));
    Ensemble both = bundledWith(Map.of(Extrapolation.Kind.GPU, 0.2, Extrapolation.Kind.GPU_ESTIMATE, 0.3,
        Extrapolation.Kind.TP, 0.25));
    assertThat(both.extrapolationLogSd(assumed, Metric.E2E_MEAN)).isEqualTo(0.3);
    Ensemble withAssumed = bundledWith(Map.of(Extrapolation.Kind.GPU, 0.2, Extrapolation.Kind.GPU_ASSUMED, 0.1));
    assertThat(withAssumed.extrapolationLogSd(assumed, Metric.E2E_MEAN)).isEqualTo(0.2);
  }

  @Test
  void anOverloadedPredictionIsAnExtrapolation() {
    assertThat(Extrapolation.saturated(4000, 0.01)).isFalse();
    assertThat(Extrapolation.saturated(6000, 0)).isTrue();
    assertThat(Extrapolation.saturated(100, 0.2)).isTrue();
    assertThat(Extrapolation.saturatedRun(6000, 0.2).reason()).contains("mean TTFT 6000 ms").contains("20.0% failed");
  }

  @Test
  void scalesAddInQuadratureAndAnUnmeasuredKindTakesTheLargest() {
    Ensemble e = bundledWith(Map.of(Extrapolation.Kind.GPU, 0.3, Extrapolation.Kind.TP, 0.4));
    List<Extrapolation> both = List.of(new Extrapolation(Extrapolation.Kind.GPU, "g"),
        new Extrapolation(Extrapolation.Kind.TP, "t"));
    assertThat(e.extrapolationLogSd(both, Metric.E2E_MEAN)).isCloseTo(0.5, within(1e-12));
    assertThat(e.extrapolationLogSd(List.of(new Extrapolation(Extrapolation.Kind.FAMILY, "f")), Metric.E2E_MEAN))
        .isEqualTo(0.4);
    assertThat(e.extrapolationLogSd(List.of(), Metric.E2E_MEAN)).isZero();
  }

  private static Ensemble bundledWith(Map<Extrapolation.Kind, Double> e2e) {
    Map<Extrapolation.Kind, Ensemble.Scale> scales = new java.util.EnumMap<>(Extrapolation.Kind.class);
    e2e.forEach((k, v) -> scales.put(k, new Ensemble.Scale(Map.of(Metric.E2E_MEAN, v, Metric.TTFT_MEAN, 2 * v), 3)));
    Ensemble b = Ensemble.bundled();
    return b.withScales(b.domain(), Map.of(Metric.E2E_MEAN, 0.02, Metric.TTFT_MEAN, 0.05), scales);
  }

  @Test
  void anEnsembleWithScalesReadsBackFromItsYaml() {
    Ensemble e = bundledWith(Map.of(Extrapolation.Kind.GPU, 0.3, Extrapolation.Kind.SATURATED, 0.25));
    Ensemble back = Ensemble.read(new ByteArrayInputStream(e.toYaml(List.of("test")).getBytes(StandardCharsets.UTF_8)), "t");
    assertThat(back.domain()).isEqualTo(e.domain());
    assertThat(back.extrapolation()).isEqualTo(e.extrapolation());
    assertThat(back.residual(Metric.TTFT_MEAN)).isEqualTo(0.05);
    assertThatThrownBy(() -> Ensemble.read(new ByteArrayInputStream(e.toYaml(List.of()).replace("gpu:", "gpuz:")
        .getBytes(StandardCharsets.UTF_8)), "f.yaml"))
        .hasMessageContaining("f.yaml: extrapolation_log_sd.gpuz: unknown extrapolation kind 'gpuz'");
  }

  private static IntervalScales.Run run(String id, Set<Extrapolation.Kind> kinds, double e2e) {
    return IntervalScales.run(id, kinds, METRICS, new double[] {e2e, 2 * e2e}, new double[] {0, 0});
  }

  @Test
  void leavingASourceOutLeavesOutAllItsPoints() {
    List<IntervalScales.Run> runs = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      runs.add(run("f" + i, Set.of(), i % 2 == 0 ? 0.03 : -0.03));
    }
    // one source's two points carry burst with errors of 0.4; another source's one point, 0.05
    runs.add(run("s/a", EnumSet.of(Extrapolation.Kind.BURST), 0.4));
    runs.add(run("s/b", EnumSet.of(Extrapolation.Kind.BURST), -0.4));
    runs.add(run("t/a", EnumSet.of(Extrapolation.Kind.BURST), 0.05));
    assertThat(IntervalScales.sourceOf(runs.get(10))).isEqualTo("s");
    assertThat(IntervalScales.sourceOf(runs.get(0))).isEqualTo("f0");
    // leaving one run out, each of s's points is covered by the scale its sibling sets
    IntervalScales.Result byRun = IntervalScales.estimate(runs, METRICS, 0.9);
    assertThat(byRun.leaveOneOut().get(Metric.E2E_MEAN).get("burst")).isEqualTo(new IntervalScales.Coverage(3, 3));
    // leaving the source out, only t's small error sets the scale: both of s's points are missed
    IntervalScales.Result bySource = IntervalScales.estimate(runs, METRICS, 0.9, IntervalScales::sourceOf);
    assertThat(bySource.leaveOneOut().get(Metric.E2E_MEAN).get("burst")).isEqualTo(new IntervalScales.Coverage(3, 1));
    assertThat(bySource.inSample()).isEqualTo(byRun.inSample());
  }

  @Test
  void theResidualComesFromTheFamilyAndEachKindFromTheRunsWhereItIsAlone() {
    List<IntervalScales.Run> runs = new ArrayList<>();
    // inside the family: errors +-0.03 -> residual 0.03
    for (int i = 0; i < 10; i++) {
      runs.add(run("f" + i, Set.of(), i % 2 == 0 ? 0.03 : -0.03));
    }
    // gpu alone: errors 0.05 -> v_gpu = 0.05^2 - 0.03^2 = 0.0016 -> 0.04
    runs.add(run("g1", EnumSet.of(Extrapolation.Kind.GPU), 0.05));
    runs.add(run("g2", EnumSet.of(Extrapolation.Kind.GPU), -0.05));
    // gpu and tp together: 0.03^2 + 0.04^2 + v_tp = 0.1^2 -> v_tp = 0.0075 (gpu is set by its
    // runs alone, not by this one)
    runs.add(run("gt", EnumSet.of(Extrapolation.Kind.GPU, Extrapolation.Kind.TP), 0.1));
    IntervalScales.Result r = IntervalScales.estimate(runs, METRICS, 0.9);
    IntervalScales.Scales s = r.scales().get(Metric.E2E_MEAN);
    assertThat(s.residualLogSd()).isCloseTo(0.03, within(1e-12));
    assertThat(s.kindLogSd().get(Extrapolation.Kind.GPU)).isCloseTo(0.04, within(1e-9));
    assertThat(s.kindLogSd().get(Extrapolation.Kind.TP)).isCloseTo(Math.sqrt(0.0075), within(1e-9));
    assertThat(r.scales().get(Metric.TTFT_MEAN).kindLogSd().get(Extrapolation.Kind.GPU)).isCloseTo(0.08, within(1e-9));
    assertThat(r.runsPerKind()).containsEntry(Extrapolation.Kind.GPU, 3).containsEntry(Extrapolation.Kind.TP, 1);
    // every run lies well inside 1.645 standard deviations: all covered in sample
    assertThat(r.inSample().get(Metric.E2E_MEAN).get("all")).isEqualTo(new IntervalScales.Coverage(13, 13));
    // left out, the lone gpu+tp run has no scale for tp: tp takes the largest there is (gpu's),
    // 1.645 x sqrt(0.03^2 + 0.04^2 + 0.04^2) = 0.105 >= 0.1
    assertThat(r.leaveOneOut().get(Metric.E2E_MEAN).get("gpu+tp")).isEqualTo(new IntervalScales.Coverage(1, 1));
    // a gpu run whose error the others cannot explain is missed when left out
    List<IntervalScales.Run> more = new ArrayList<>(runs);
    more.add(run("g3", EnumSet.of(Extrapolation.Kind.GPU), 0.3));
    IntervalScales.Result r2 = IntervalScales.estimate(more, METRICS, 0.9);
    assertThat(r2.leaveOneOut().get(Metric.E2E_MEAN).get("gpu")).isEqualTo(new IntervalScales.Coverage(3, 2));
  }

  @Test
  void nonNegativeLeastSquaresNeverGivesANegativeVariance() {
    boolean[][] a = {{true, false}, {true, true}, {false, true}};
    double[] x = IntervalScales.nonNegativeLeastSquares(a, new double[] {1, 0, 0}, 2);
    assertThat(x[0]).isPositive();
    assertThat(x[1]).isZero();
  }

  @Test
  void withoutARunInsideTheFamilyThereIsNoResidual() {
    assertThatThrownBy(() -> IntervalScales.estimate(List.of(run("g", EnumSet.of(Extrapolation.Kind.GPU), 0.1)),
        METRICS, 0.9)).hasMessageContaining("no run inside the fitted family");
  }
}
