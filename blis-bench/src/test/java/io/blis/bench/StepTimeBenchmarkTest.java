package io.blis.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.blis.api.Phase;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

class StepTimeBenchmarkTest {

  @Test
  void batchIsMixedAsDocumented() {
    BenchBatch b = BenchBatch.mixed(128, 4, 20260217L);
    assertThat(b.size()).isEqualTo(128);
    int prefills = 0;
    for (int i = 0; i < b.size(); i++) {
      var r = b.get(i);
      if (r.phase() == Phase.PREFILL) {
        prefills++;
        assertThat(r.newTokens()).isBetween(1, 512);
        assertThat(r.progressIndex() + r.newTokens()).isLessThanOrEqualTo(r.inputTokens());
      } else {
        assertThat(r.newTokens()).isEqualTo(1);
        assertThat(r.progressIndex()).isBetween(100, 4000);
      }
    }
    assertThat(prefills).isEqualTo(4);
  }

  @ParameterizedTest(name = "{0} {1}")
  @CsvSource({
    "meta-llama/Llama-2-7b-hf:1, trained-physics",
    "meta-llama/Llama-2-70b-hf:4, roofline",
    "mistralai/Mixtral-8x7B-v0.1:2, blackbox"
  })
  void setUpBuildsAWorkingModel(String deployment, String latencyModel) {
    StepTimeBenchmark bench = new StepTimeBenchmark();
    bench.deployment = deployment;
    bench.latencyModel = latencyModel;
    bench.setUp();
    assertThat(bench.stepTime()).isGreaterThan(1000L);
  }
}
