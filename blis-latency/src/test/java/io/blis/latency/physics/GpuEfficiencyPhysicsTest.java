package io.blis.latency.physics;

import static io.blis.latency.Fixtures.decode;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.blis.latency.Fixtures.Batch;
import io.blis.latency.catalog.GpuCatalog;
import io.blis.latency.catalog.GpuSpec;
import io.blis.latency.catalog.KernelScales;
import io.blis.latency.catalog.ModelCatalog;
import io.blis.latency.catalog.ModelConfig;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The step basis on a GPU with a measured efficiency entry: each kind of work scaled by its own
 * measured ratio, the anchor GPU untouched.
 */
class GpuEfficiencyPhysicsTest {

  static final double EPS = 1e-9;

  /** The A100 with the H100's entry: the datasheet alone distinguishes it (the earlier model). */
  static GpuSpec a100LikeH100() {
    GpuSpec a100 = GpuCatalog.byName("A100-80GB");
    return a100.withEfficiency(GpuCatalog.byName("H100").efficiency());
  }

  @Test
  void eachTermOfTheA100IsItsDatasheetTimeTimesItsOwnScale() {
    ModelConfig m = ModelCatalog.byName("qwen3-14b");
    GpuSpec a100 = GpuCatalog.byName("A100-80GB");
    StepBasis measured = new StepBasis(m, a100, 1);
    StepBasis datasheet = new StepBasis(m, a100LikeH100(), 1);
    KernelScales s = KernelScales.of(a100, 1, m.hiddenSize());
    Batch batch = Batch.of(io.blis.latency.Fixtures.prefill(700, 600, 64), decode(600, 720), decode(550, 690));
    measured.compute(batch);
    datasheet.compute(batch);
    assertThat(measured.weightLoadUs).isCloseTo(datasheet.weightLoadUs * s.weights(), within(EPS));
    assertThat(measured.decodeMemoryUs).isCloseTo(datasheet.decodeMemoryUs * s.kv(), within(EPS));
    assertThat(measured.prefillMemoryUs).isCloseTo(datasheet.prefillMemoryUs * s.kv(), within(EPS));
    assertThat(measured.prefillComputeUs).isCloseTo(datasheet.prefillComputeUs * s.prefillFlops(), within(EPS));
    assertThat(measured.decodeComputeUs).isCloseTo(datasheet.decodeComputeUs * s.decodeFlops(), within(EPS));
    assertThat(measured.layerUnits).isCloseTo(m.numLayers() * s.layer(), within(EPS));
    assertThat(measured.kiloVocabUnits).isCloseTo(datasheet.kiloVocabSampled * s.smallKernels(), within(EPS));
    assertThat(measured.logitsPassUs).isCloseTo(datasheet.logitsPassUs * s.weights(), within(EPS));
    assertThat(datasheet.layerUnits).isEqualTo(m.numLayers());
  }

  @Test
  void theAnchorGpusTermsAreThoseOfItsDatasheetExactly() {
    ModelConfig m = ModelCatalog.byName("llama-2-70b");
    GpuSpec h100 = GpuCatalog.byName("H100");
    GpuSpec bare = new GpuSpec("H100", h100.peakFlopsBf16(), h100.peakFlopsFp8(), h100.memoryBandwidthBytesPerS(),
        h100.memoryBytes(), h100.interconnectBandwidthBytesPerS(), h100.gpusPerNode(),
        h100.interNodeBandwidthBytesPerS(), h100.interconnectLatencyS(), h100.interNodeLatencyS());
    StepBasis a = new StepBasis(m, h100, 4);
    StepBasis b = new StepBasis(m, bare, 4);
    Batch batch = Batch.of(io.blis.latency.Fixtures.prefill(900, 512, 256), decode(700, 800), decode(600, 603));
    a.compute(batch);
    b.compute(batch);
    assertThat(a.weightLoadUs).isEqualTo(b.weightLoadUs);
    assertThat(a.decodeComputeUs).isEqualTo(b.decodeComputeUs);
    assertThat(a.decodeMemoryUs).isEqualTo(b.decodeMemoryUs);
    assertThat(a.tpCommUs).isEqualTo(b.tpCommUs);
    assertThat(a.layerUnits).isEqualTo(80.0);
    assertThat(a.allReduceUnits).isEqualTo(160.0);
  }

  @Test
  void rooflineCarriesItsAnchorVectorByTheTableAndTakesAGpusOwnVectorAsIs() {
    ModelConfig m = ModelCatalog.byName("llama-3.1-8b");
    GpuSpec a100 = GpuCatalog.byName("A100-80GB");
    Batch batch = decodes(8); // memory-bound: the HBM share sets the step
    long scaled = PhysicsModelsTest.build("roofline", m, a100, 1).stepTime(batch);
    long datasheet = PhysicsModelsTest.build("roofline", m, a100LikeH100(), 1).stepTime(batch);
    double weights = KernelScales.of(a100, 1, m.hiddenSize()).weights();
    assertThat((double) scaled).isCloseTo(datasheet * weights, within(0.01 * scaled));
    // a vector named for the A100 is its own: no scaling on top
    io.blis.api.Coefficients own = io.blis.latency.coeff.CoefficientFiles.parseInline(
        "efficiency_A100-80GB=0.45,0.30,0.85,0.75");
    assertThat(PhysicsModelsTest.build("roofline", m, a100, 1, own).stepTime(batch)).isEqualTo(datasheet);
  }

  private static Batch decodes(int n) {
    List<io.blis.latency.Fixtures.Req> r = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      r.add(decode(480, 500));
    }
    return Batch.of(r.toArray(new io.blis.latency.Fixtures.Req[0]));
  }
}
