package io.blis.latency;

import static io.blis.latency.Fixtures.decode;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.blis.api.Coefficients;
import io.blis.api.UnknownProviderException;
import io.blis.latency.Fixtures.Batch;
import io.blis.latency.catalog.GpuCatalog;
import io.blis.latency.catalog.ModelCatalog;
import org.junit.jupiter.api.Test;

class LatencyModelsTest {

  @Test
  void listsAndBuildsEveryModelWithTheDefaultFirstClass() {
    assertThat(LatencyModels.names()).containsExactly("blackbox", "roofline", "trained-physics");
    assertThat(LatencyModels.names()).contains(LatencyModels.DEFAULT);
    for (String name : LatencyModels.names()) {
      var m = LatencyModels.create(name, ModelCatalog.byName("llama-2-7b"),
          GpuCatalog.byName("H100"), 1, Coefficients.empty());
      assertThat(m.stepTime(Batch.of(decode(100, 200)))).isGreaterThan(1);
    }
  }

  @Test
  void unknownModelNamesTheAvailableOnes() {
    assertThatThrownBy(() -> LatencyModels.create("vidur", ModelCatalog.byName("llama-2-7b"),
            GpuCatalog.byName("H100"), 1, Coefficients.empty()))
        .isInstanceOf(UnknownProviderException.class)
        .hasMessageContaining("unknown latency model 'vidur'")
        .hasMessageContaining("blackbox, roofline, trained-physics");
  }

  @Test
  void aConstantStepModelChargesItsStepAndNothingElse() {
    io.blis.api.LatencyModel m = LatencyModels.constantStep(7);
    assertThat(m.stepTime(null)).isEqualTo(7);
    assertThat(m.queueingTime(null)).isZero();
    assertThat(m.outputTokenProcessingTime()).isZero();
    assertThat(m.schedulingProcessingTime()).isZero();
    assertThat(m.preemptionProcessingTime()).isZero();
    assertThatThrownBy(() -> LatencyModels.constantStep(0))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("a step must take at least 1 us, got 0");
  }
}
