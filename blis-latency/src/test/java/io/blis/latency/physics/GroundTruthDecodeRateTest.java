package io.blis.latency.physics;

import static io.blis.latency.Fixtures.decode;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.withinPercentage;

import io.blis.api.Coefficients;
import io.blis.api.LatencyModel;
import io.blis.latency.Fixtures.Batch;
import io.blis.latency.LatencyModels;
import io.blis.latency.Fixtures.Req;
import io.blis.latency.catalog.GpuCatalog;
import io.blis.latency.catalog.ModelCatalog;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The bundled trained-physics defaults against the decode rates measured on H100 (ground truth
 * experiments.json, non-saturated load stages): per-token decode time (E2E - TTFT) / (output_len -
 * 1) versus the step time of a batch of decodes whose size is the stage's mean concurrency
 * (Little's law: achieved rate x mean E2E) at the mean decode context (prompt + output / 2).
 */
class GroundTruthDecodeRateTest {

  @ParameterizedTest(name = "{0} TP{1}: {2} running, context {3}: measured {4} ms/token")
  @CsvSource({
    "meta-llama/Llama-2-7b-hf, 1, 9, 715, 7.257",
    "meta-llama/Llama-2-7b-hf, 1, 22, 715, 8.888",
    "meta-llama/Llama-2-7b-hf, 1, 12, 911, 8.176",
    "meta-llama/Llama-2-7b-hf, 1, 16, 699, 8.221",
    "meta-llama/Llama-2-7b-hf, 1, 83, 699, 16.625",
    "meta-llama/Llama-2-70b-hf, 4, 37, 699, 18.709",
    "meta-llama/Llama-2-70b-hf, 4, 111, 699, 22.09",
    "meta-llama/Llama-2-70b-hf, 4, 22, 717, 17.396",
    "meta-llama/Llama-2-70b-hf, 4, 47, 717, 19.045",
    "meta-llama/Llama-2-70b-hf, 4, 27, 913, 18.027",
    "mistralai/Mixtral-8x7B-v0.1, 2, 23, 713, 18.112",
    "mistralai/Mixtral-8x7B-v0.1, 2, 48, 713, 19.093",
    "mistralai/Mixtral-8x7B-v0.1, 2, 38, 695, 19.158",
    "mistralai/Mixtral-8x7B-v0.1, 2, 103, 695, 20.505",
    "mistralai/Mixtral-8x7B-v0.1, 2, 28, 908, 18.497"
  })
  void defaultsPredictMeasuredDecodeRatesWithinTenPercent(
      String model, int tp, int running, int context, double measuredMsPerToken) {
    LatencyModel m =
        LatencyModels.create("trained-physics", ModelCatalog.byName(model),
            GpuCatalog.byName("H100"), tp, Coefficients.empty());
    List<Req> reqs = new ArrayList<>();
    for (int i = 0; i < running; i++) {
      reqs.add(decode(context / 2, context));
    }
    double predictedMs = (m.stepTime(new Batch(reqs)) + m.outputTokenProcessingTime()) / 1000.0;
    assertThat(predictedMs).isCloseTo(measuredMsPerToken, withinPercentage(10));
  }
}
