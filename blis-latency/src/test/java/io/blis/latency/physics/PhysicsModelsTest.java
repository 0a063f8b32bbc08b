package io.blis.latency.physics;

import static io.blis.latency.Fixtures.decode;
import static io.blis.latency.Fixtures.prefill;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.blis.api.Coefficients;
import io.blis.api.HardwareSpec;
import io.blis.api.LatencyModel;
import io.blis.api.LatencyModelProvider;
import io.blis.api.ModelSpec;
import io.blis.api.Providers;
import io.blis.latency.Fixtures.Batch;
import io.blis.latency.LatencyModels;
import io.blis.latency.Fixtures.Req;
import io.blis.latency.catalog.GpuCatalog;
import io.blis.latency.catalog.ModelCatalog;
import io.blis.latency.catalog.ModelConfig;
import io.blis.latency.coeff.CoefficientFiles;
import io.blis.latency.kv.KvCapacity;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class PhysicsModelsTest {

  static final List<String> MODELS = List.of("blackbox", "roofline", "trained-physics");
  static final HardwareSpec H100 = GpuCatalog.byName("H100");

  static LatencyModel build(String latencyModel, ModelSpec m, HardwareSpec g, int tp) {
    return build(latencyModel, m, g, tp, Coefficients.empty());
  }

  static LatencyModel build(
      String latencyModel, ModelSpec m, HardwareSpec g, int tp, Coefficients c) {
    return LatencyModels.create(latencyModel, m, g, tp, c);
  }

  @Test
  void allProvidersResolveByName() {
    assertThat(Providers.names(LatencyModelProvider.class)).containsAll(MODELS);
    assertThat(Providers.select(LatencyModelProvider.class, "roofline"))
        .isInstanceOf(RooflineProvider.class);
    assertThat(Providers.select(LatencyModelProvider.class, "trained-physics"))
        .isInstanceOf(TrainedPhysicsProvider.class);
  }

  /** A random mixed batch: a few prefill chunks and decodes at varied contexts. */
  static List<Req> randomBatch(SplittableRandom rnd) {
    List<Req> reqs = new ArrayList<>();
    int prefills = rnd.nextInt(0, 4);
    for (int i = 0; i < prefills; i++) {
      int input = rnd.nextInt(2, 3000);
      int s = rnd.nextInt(0, input - 1);
      reqs.add(prefill(input, s, rnd.nextInt(1, Math.min(512, input - s) + 1)));
    }
    int decodes = rnd.nextInt(prefills == 0 ? 1 : 0, 100);
    for (int i = 0; i < decodes; i++) {
      int input = rnd.nextInt(1, 2000);
      reqs.add(decode(input, input + rnd.nextInt(0, 1500)));
    }
    return reqs;
  }

  static Stream<Arguments> monotonicityCases() {
    List<Arguments> out = new ArrayList<>();
    String[] models = {"meta-llama/Llama-2-7b-hf", "meta-llama/Llama-2-70b-hf",
        "mistralai/Mixtral-8x7B-v0.1"};
    int[] tps = {1, 4, 2};
    for (String lm : MODELS) {
      for (int m = 0; m < models.length; m++) {
        for (long seed = 1; seed <= 8; seed++) {
          out.add(Arguments.of(lm, models[m], tps[m], seed));
        }
      }
    }
    return out.stream();
  }

  @ParameterizedTest(name = "{0} {1} TP{2} seed {3}")
  @MethodSource("monotonicityCases")
  void moreTokensOrLongerContextNeverMakesAStepFaster(String lm, String name, int tp, long seed) {
    LatencyModel model = build(lm, ModelCatalog.byName(name), H100, tp);
    SplittableRandom rnd = new SplittableRandom(seed);
    for (int trial = 0; trial < 20; trial++) {
      List<Req> reqs = randomBatch(rnd);
      long base = model.stepTime(new Batch(reqs));
      assertThat(base).isPositive();
      int i = rnd.nextInt(reqs.size());
      Req r = reqs.get(i);
      int more = rnd.nextInt(1, 300);
      // longer context, same phase
      List<Req> longer = new ArrayList<>(reqs);
      longer.set(i, new Req(r.inputTokens() + more, r.progressIndex() + more, r.newTokens()));
      assertThat(model.stepTime(new Batch(longer))).as("longer context").isGreaterThanOrEqualTo(base);
      // more new tokens, same phase
      List<Req> wider = new ArrayList<>(reqs);
      wider.set(i, new Req(r.inputTokens() + more, r.progressIndex(), r.newTokens() + more));
      if (r.phase() == io.blis.api.Phase.PREFILL) {
        assertThat(model.stepTime(new Batch(wider))).as("more tokens").isGreaterThanOrEqualTo(base);
      }
      // one more request
      List<Req> bigger = new ArrayList<>(reqs);
      bigger.add(decode(100, 100 + rnd.nextInt(0, 2000)));
      assertThat(model.stepTime(new Batch(bigger))).as("more requests").isGreaterThanOrEqualTo(base);
    }
  }

  static Batch decodeBatch(int requests, int context) {
    List<Req> reqs = new ArrayList<>();
    for (int i = 0; i < requests; i++) {
      reqs.add(decode(context / 2, context));
    }
    return new Batch(reqs);
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"roofline", "trained-physics"})
  void moreTensorParallelismIsFasterPerStep(String lm) {
    ModelConfig m = ModelCatalog.byName("meta-llama/Llama-2-70b-hf");
    Batch decodes = decodeBatch(32, 1000);
    Batch mixed = decodes.with(prefill(2000, 0, 1024));
    for (Batch b : List.of(decodes, mixed)) {
      long tp2 = build(lm, m, H100, 2).stepTime(b);
      long tp4 = build(lm, m, H100, 4).stepTime(b);
      long tp8 = build(lm, m, H100, 8).stepTime(b);
      assertThat(tp4).isLessThan(tp2);
      assertThat(tp8).isLessThan(tp4);
    }
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"roofline", "trained-physics"})
  void fasterGpusGiveFasterSteps(String lm) {
    ModelConfig m = ModelCatalog.byName("meta-llama/Llama-3.1-8B-Instruct");
    HardwareSpec a100 = GpuCatalog.byName("A100-80GB");
    HardwareSpec l40s = GpuCatalog.byName("L40S");
    // memory bound: ordered by HBM bandwidth (3.35 > 2.039 > 0.864 TB/s)
    Batch decodes = decodeBatch(16, 800);
    assertThat(build(lm, m, H100, 1).stepTime(decodes))
        .isLessThan(build(lm, m, a100, 1).stepTime(decodes));
    assertThat(build(lm, m, a100, 1).stepTime(decodes))
        .isLessThan(build(lm, m, l40s, 1).stepTime(decodes));
    // compute bound: H100 (989 TFLOP/s) beats both (312 and 362)
    Batch prefill = decodeBatch(4, 100).with(prefill(2048, 0, 2048));
    long h100Prefill = build(lm, m, H100, 1).stepTime(prefill);
    assertThat(h100Prefill).isLessThan(build(lm, m, a100, 1).stepTime(prefill));
    assertThat(h100Prefill).isLessThan(build(lm, m, l40s, 1).stepTime(prefill));
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"roofline", "trained-physics"})
  void moeReadsOnlyTheExpertsItsTokensHit(String lm) {
    ModelConfig moe = ModelCatalog.byName("mistralai/Mixtral-8x7B-v0.1");
    // dense twin with the same total FFN parameters per layer (8 experts of 14336)
    ModelConfig dense =
        new ModelConfig("dense-twin", moe.numLayers(), moe.hiddenSize(), moe.numAttentionHeads(),
            moe.numKeyValueHeads(), moe.headDim(), 8 * 14336, moe.vocabSize(), 0, 2, 2.0, false, 0,
            0, 8 * 14336, 0, 0, true);
    assertThat((double) dense.parameterCount()).isCloseTo(moe.parameterCount(),
        org.assertj.core.data.Percentage.withPercentage(0.1));
    Batch one = Batch.of(decode(100, 100));
    long moeOne = build(lm, moe, H100, 2).stepTime(one);
    long denseOne = build(lm, dense, H100, 2).stepTime(one);
    assertThat(moeOne).isLessThan(denseOne);
    // many tokens hit (almost) every expert: the MoE step grows much more than the dense one
    Batch many = decodeBatch(64, 200);
    long moeMany = build(lm, moe, H100, 2).stepTime(many);
    long denseMany = build(lm, dense, H100, 2).stepTime(many);
    assertThat((double) moeMany / moeOne).isGreaterThan((double) denseMany / denseOne);
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"roofline", "trained-physics"})
  void gqaReadsFewerKvBytesThanItsMhaTwin(String lm) {
    ModelConfig gqa = ModelCatalog.byName("meta-llama/Llama-2-70b-hf");
    ModelConfig mha =
        new ModelConfig("mha-twin", gqa.numLayers(), gqa.hiddenSize(), 64, 64, 128,
            gqa.intermediateSize(), gqa.vocabSize(), 4096, 2, 2.0, false, 0, 0,
            gqa.intermediateSize(), 0, 0, true);
    StepBasis g = new StepBasis(gqa, H100, 4);
    StepBasis h = new StepBasis(mha, H100, 4);
    Batch b = decodeBatch(64, 3000);
    g.compute(b);
    h.compute(b);
    assertThat(h.decodeMemoryUs).isEqualTo(8 * g.decodeMemoryUs);
    assertThat(build(lm, gqa, H100, 4).stepTime(b)).isLessThan(build(lm, mha, H100, 4).stepTime(b));
  }

  static Stream<Arguments> everyCombination() {
    List<Arguments> out = new ArrayList<>();
    for (String model : ModelCatalog.names()) {
      for (String gpu : GpuCatalog.names()) {
        for (int tp : new int[] {1, 2, 4, 8}) {
          out.add(Arguments.of(model, gpu, tp));
        }
      }
    }
    return out.stream();
  }

  @ParameterizedTest(name = "{0} on {2} x {1}")
  @MethodSource("everyCombination")
  void everyBundledModelGpuAndSensibleTpBuildsEveryLatencyModel(String name, String gpu, int tp) {
    ModelConfig m = ModelCatalog.byName(name);
    HardwareSpec g = GpuCatalog.byName(gpu);
    long blocks;
    try {
      blocks = KvCapacity.totalBlocks(m, g, tp, 0.9, 16);
    } catch (IllegalArgumentException notSensible) {
      // does not fit, or heads do not split: not a sensible deployment, and every model says so
      assertThat(notSensible.getMessage()).containsAnyOf("does not fit", "not divisible");
      return;
    }
    assertThat(blocks).isPositive();
    Batch b = decodeBatch(32, 700).with(prefill(600, 16, 584));
    for (String lm : MODELS) {
      LatencyModel model = build(lm, m, g, tp);
      long us = model.stepTime(b);
      assertThat(us).as(lm).isBetween(1L, 10_000_000L);
      assertThat(model.queueingTime(b.get(0))).isNotNegative();
    }
  }

  @Test
  void badCoefficientsGiveClearErrors() {
    ModelConfig m = ModelCatalog.byName("llama-2-7b");
    assertThatThrownBy(() -> build("trained-physics", m, H100, 1,
            CoefficientFiles.parseInline("beta=1,2,3")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("needs 13 to 15 values in 'beta', got 3");
    assertThatThrownBy(() -> build("trained-physics", m, H100, 1,
            CoefficientFiles.parseInline("alpha=1,2,-3")))
        .hasMessageContaining("alpha[2]")
        .hasMessageContaining(">= 0");
    assertThatThrownBy(() -> build("roofline", m, H100, 1,
            CoefficientFiles.parseInline("efficiency=0.5,0.5,1.5,0.5")))
        .hasMessageContaining("efficiency[2] must be in (0, 1]");
    assertThatThrownBy(() -> Coefficients.of("x", Map.of("beta", new double[] {Double.NaN})))
        .hasMessageContaining("finite");
    assertThatThrownBy(() -> build("roofline", m, H100, 3))
        .hasMessageContaining("not divisible by tensor parallelism 3");
  }

  @Test
  void rooflineUsesPerGpuEfficienciesAndOverrides() {
    ModelConfig m = ModelCatalog.byName("llama-2-7b");
    Batch b = decodeBatch(8, 500);
    long defaults = build("roofline", m, H100, 1).stepTime(b);
    long slowerMemory =
        build("roofline", m, H100, 1, CoefficientFiles.parseInline("efficiency=0.45,0.3,0.425,0.75"))
            .stepTime(b);
    // memory bound: halving the HBM fraction doubles the step
    assertThat(slowerMemory).isBetween(2 * defaults - 2, 2 * defaults + 2);
  }

  @Test
  void trainedPhysicsAlphaMapsToTheProcessingTimes() {
    LatencyModel m = build("trained-physics", ModelCatalog.byName("llama-2-7b"), H100, 1,
        CoefficientFiles.parseInline("alpha=1000,200,30,40"));
    assertThat(m.queueingTime(prefill(500, 0, 0))).isEqualTo(1000);
    assertThat(m.schedulingProcessingTime()).isEqualTo(200);
    assertThat(m.outputTokenProcessingTime()).isEqualTo(30);
    assertThat(m.preemptionProcessingTime()).isEqualTo(40);
    LatencyModel three = build("trained-physics", ModelCatalog.byName("llama-2-7b"), H100, 1,
        CoefficientFiles.parseInline("alpha=1000,200,30"));
    assertThat(three.preemptionProcessingTime()).isZero();
  }

  @Test
  void trainedPhysicsStepIsTheDocumentedFormula() {
    ModelConfig m = ModelCatalog.byName("mixtral-8x7b");
    double[] beta = {1.5, 1.1, 2.5, 1.2, 1.3, 1.7, 2.0, 3.0, 10, 5, 7, 100, 20};
    Coefficients c = CoefficientFiles.parseInline("beta=" + join(beta));
    Batch b = decodeBatch(20, 900).with(prefill(700, 100, 300));
    StepBasis s = new StepBasis(m, H100, 2);
    s.compute(b);
    double compute = beta[0] * s.prefillComputeUs;
    double memory = beta[4] * s.weightLoadUs + beta[5] * s.expertWeightLoadUs
        + beta[1] * s.prefillMemoryUs + beta[3] * s.decodeMemoryUs;
    double expected = Math.max(compute, memory) + beta[2] * s.decodeComputeUs + beta[6] * s.tpCommUs + beta[7] * s.moeRoutingUs
        + beta[8] * 32 + beta[9] * 64 + beta[10] * 21 + beta[11] + beta[12] * 32
        + s.moeExpertFixedUs;
    assertThat(build("trained-physics", m, H100, 2, c).stepTime(b)).isEqualTo((long) expected);
    // 720 tokens hit all 8 experts: 0.35 us of fixed time each in every one of the 32 MoE layers
    assertThat(s.moeExpertFixedUs).isCloseTo(8 * (1 - Math.pow(0.75, 720)) * 0.35 * 32, within(1e-9));
  }

  @Test
  void truncatedSamplingAddsAPerStepCostThatScalesWithTheVocabulary() {
    ModelConfig topP = ModelCatalog.byName("llama-3.1-8b");
    assertThat(topP.truncatedSampling()).isTrue();
    ModelConfig plain = topP.withTruncatedSampling(false);
    double[] beta = {1.5, 1.1, 0.8, 1.2, 1.3, 1.0, 2.0, 2.0, 10, 5, 7, 100, 0, 3.0};
    Coefficients c = CoefficientFiles.parseInline("beta=" + join(beta));
    LatencyModel sampled = build("trained-physics", topP, H100, 1, c);
    LatencyModel unsampled = build("trained-physics", plain, H100, 1, c);
    // 3 us per 1000 of the 128256 vocabulary entries: 384.8 us per step, at any batch size
    for (Batch b : List.of(decodeBatch(1, 900), decodeBatch(20, 900).with(prefill(700, 100, 300)),
        decodeBatch(120, 2000))) {
      assertThat((double) (sampled.stepTime(b) - unsampled.stepTime(b)))
          .isCloseTo(3.0 * 128.256, within(1.0));
    }
    // a 13-value beta (written before the term existed) leaves it out
    double[] old = Arrays.copyOf(beta, 13);
    Batch b = decodeBatch(20, 900);
    assertThat(build("trained-physics", topP, H100, 1,
            CoefficientFiles.parseInline("beta=" + join(old))).stepTime(b))
        .isEqualTo(unsampled.stepTime(b));
  }

  @Test
  void truncatedSamplingAddsPassesOverEachRequestsLogitsAtTheGpusBandwidth() {
    ModelConfig topP = ModelCatalog.byName("llama-3.1-8b");
    ModelConfig plain = topP.withTruncatedSampling(false);
    double[] beta = {1.5, 1.1, 0.8, 1.2, 1.3, 1.0, 2.0, 2.0, 10, 5, 7, 100, 0, 0, 50.0};
    Coefficients c = CoefficientFiles.parseInline("beta=" + join(beta));
    HardwareSpec a100 = GpuCatalog.byName("A100-80GB");
    for (HardwareSpec gpu : List.of(H100, a100)) {
      LatencyModel sampled = build("trained-physics", topP, gpu, 1, c);
      LatencyModel unsampled = build("trained-physics", plain, gpu, 1, c);
      // 50 reads of 128256 fp32 logits per request in the step, at the GPU's HBM bandwidth, times
      // its measured streaming scale (1 on the H100)
      double perRequest = 50 * 128256 * 4.0 / (gpu.memoryBandwidthBytesPerS() / 1e6)
          * io.blis.latency.catalog.KernelScales.of(gpu, 1, topP.hiddenSize()).weights();
      for (Batch b : List.of(decodeBatch(1, 900), decodeBatch(20, 900).with(prefill(700, 100, 300)),
          decodeBatch(120, 2000))) {
        assertThat((double) (sampled.stepTime(b) - unsampled.stepTime(b)))
            .isCloseTo(perRequest * b.requests().size(), within(1.0));
      }
    }
    // 7.66 us per request on H100 (128256 x 4 bytes at 3.35 TB/s, 50 times): 153 us for 20 decodes
    assertThat((double) (build("trained-physics", topP, H100, 1, c).stepTime(decodeBatch(20, 900))
            - build("trained-physics", plain, H100, 1, c).stepTime(decodeBatch(20, 900))))
        .isCloseTo(153.1, within(1.0));
    // a 14-value beta (written before the term existed) leaves it out
    Batch b = decodeBatch(20, 900);
    assertThat(build("trained-physics", topP, H100, 1,
            CoefficientFiles.parseInline("beta=" + join(Arrays.copyOf(beta, 14)))).stepTime(b))
        .isEqualTo(build("trained-physics", plain, H100, 1, c).stepTime(b));
  }

  private static LatencyModel withOptions(ModelSpec m, Coefficients c, Map<String, String> options) {
    return LatencyModels.create("trained-physics", m, H100, 1, c, options);
  }

  @Test
  void theSamplingOptionOverridesTheModelsGenerationDefaults() {
    ModelConfig topP = ModelCatalog.byName("llama-3.1-8b");
    ModelConfig plain = topP.withTruncatedSampling(false);
    Coefficients c = CoefficientFiles.parseInline(
        "beta=1.5,1.1,0.8,1.2,1.3,1.0,2.0,2.0,10,5,7,100,0,3.0,50.0");
    Batch b = decodeBatch(20, 900);
    long truncated = withOptions(topP, c, Map.of()).stepTime(b);
    long untruncated = withOptions(plain, c, Map.of()).stepTime(b);
    assertThat(truncated).isGreaterThan(untruncated + 300);
    assertThat(withOptions(topP, c, Map.of("sampling", "auto")).stepTime(b)).isEqualTo(truncated);
    assertThat(withOptions(topP, c, Map.of("sampling", "plain")).stepTime(b)).isEqualTo(untruncated);
    assertThat(withOptions(plain, c, Map.of("sampling", "truncated")).stepTime(b)).isEqualTo(truncated);
    assertThatThrownBy(() -> withOptions(topP, c, Map.of("sampling", "greedy")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("option sampling must be auto, truncated or plain, got 'greedy'");
  }

  @Test
  void rooflineStepIsTheDocumentedFormula() {
    ModelConfig m = ModelCatalog.byName("llama-2-70b");
    Coefficients c = CoefficientFiles.parseInline("efficiency=0.5,0.25,0.8,0.6");
    for (Batch b : List.of(decodeBatch(20, 900).with(prefill(700, 100, 300)),
        decodeBatch(2, 100).with(prefill(4000, 0, 2048)))) {
      StepBasis s = new StepBasis(m, H100, 4);
      s.compute(b);
      double compute = s.prefillComputeUs / 0.5 + s.decodeComputeUs / 0.25;
      double memory = (s.weightLoadUs + s.expertWeightLoadUs + s.prefillMemoryUs
          + s.decodeMemoryUs + s.moeRoutingUs) / 0.8;
      double expected = Math.max(compute, memory) + s.tpCommUs / 0.6;
      assertThat(build("roofline", m, H100, 4, c).stepTime(b)).isEqualTo((long) expected);
    }
  }

  private static String join(double[] v) {
    StringBuilder sb = new StringBuilder();
    for (double x : v) {
      sb.append(sb.length() == 0 ? "" : ",").append(x);
    }
    return sb.toString();
  }
}
