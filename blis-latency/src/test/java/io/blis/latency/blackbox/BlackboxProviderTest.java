package io.blis.latency.blackbox;

import static io.blis.latency.Fixtures.decode;
import static io.blis.latency.Fixtures.prefill;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.blis.api.Coefficients;
import io.blis.api.LatencyModel;
import io.blis.api.LatencyModelProvider;
import io.blis.api.Providers;
import io.blis.latency.Fixtures.Batch;
import io.blis.latency.LatencyModels;
import io.blis.latency.catalog.GpuCatalog;
import io.blis.latency.catalog.ModelCatalog;
import io.blis.latency.coeff.CoefficientFiles;
import org.junit.jupiter.api.Test;

class BlackboxProviderTest {

  private static LatencyModel model(Coefficients c) {
    return LatencyModels.create(
        "blackbox", ModelCatalog.byName("llama-2-7b"), GpuCatalog.byName("H100"), 1, c);
  }

  @Test
  void resolvesByNameThroughServiceLoader() {
    assertThat(Providers.names(LatencyModelProvider.class)).contains("blackbox");
    assertThat(Providers.select(LatencyModelProvider.class, "blackbox"))
        .isInstanceOf(BlackboxProvider.class);
  }

  @Test
  void stepTimeIsLinearInPrefillTokensAndDecodeRequests() {
    LatencyModel m =
        model(CoefficientFiles.parseInline("alpha=100,2,30;beta=1000,10,50.5"));
    // prefill chunk of 200 new tokens + a prefill chunk of 56 + 3 decodes
    Batch b =
        Batch.of(prefill(600, 0, 200), prefill(100, 44, 56), decode(50, 60), decode(10, 300),
            decode(7, 7));
    assertThat(m.stepTime(b)).isEqualTo((long) (1000 + 10 * 256 + 50.5 * 3));
    assertThat(m.queueingTime(prefill(600, 0, 0))).isEqualTo(100 + 2 * 600);
    assertThat(m.outputTokenProcessingTime()).isEqualTo(30);
    assertThat(m.schedulingProcessingTime()).isZero();
    assertThat(m.preemptionProcessingTime()).isZero();
  }

  @Test
  void stepTimeIsAtLeastOne() {
    LatencyModel m = model(CoefficientFiles.parseInline("alpha=0,0,0;beta=0,0,0"));
    assertThat(m.stepTime(Batch.of(decode(10, 10)))).isEqualTo(1);
  }

  @Test
  void processingTimesComeFromOptionalScalars() {
    LatencyModel m =
        model(CoefficientFiles.parseInline("scheduling_us=250;preemption_us=90.9"));
    assertThat(m.schedulingProcessingTime()).isEqualTo(250);
    assertThat(m.preemptionProcessingTime()).isEqualTo(90);
  }

  @Test
  void bundledDefaultsApplyWhenNoCoefficientsAreGiven() {
    LatencyModel m = model(Coefficients.empty());
    Coefficients d = CoefficientFiles.bundled("blackbox");
    double[] beta = d.vector("beta");
    assertThat(m.stepTime(Batch.of(decode(10, 100), prefill(300, 0, 300))))
        .isEqualTo((long) (beta[0] + beta[1] * 300 + beta[2]));
    assertThat(m.queueingTime(decode(10, 10))).isEqualTo((long) d.vector("alpha")[0]);
  }

  @Test
  void badCoefficientsAreRejectedWithClearMessages() {
    assertThatThrownBy(() -> model(CoefficientFiles.parseInline("beta=1,2")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("needs 3 values in 'beta', got 2");
    assertThatThrownBy(() -> model(CoefficientFiles.parseInline("beta=1,-2,3")))
        .hasMessageContaining("coefficient beta[1]")
        .hasMessageContaining(">= 0");
  }
}
