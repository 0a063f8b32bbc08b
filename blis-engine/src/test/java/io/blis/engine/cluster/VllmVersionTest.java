package io.blis.engine.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.blis.engine.result.Fitness;
import org.junit.jupiter.api.Test;

class VllmVersionTest {

  @Test
  void imageTagsAndBareVersionsParseAndAsyncSchedulingIsOnFromV014() {
    VllmVersion old = VllmVersion.parse("vllm/vllm-openai:v0.8.4");
    assertThat(old.number()).isEqualTo("0.8.4");
    assertThat(old.asyncSchedulingByDefault()).isFalse();
    assertThat(VllmVersion.parse("v0.15.1").asyncSchedulingByDefault()).isTrue();
    assertThat(VllmVersion.parse("0.14.0").asyncSchedulingByDefault()).isTrue();
    assertThat(VllmVersion.parse("0.13.9").asyncSchedulingByDefault()).isFalse();
    assertThat(VllmVersion.parse("v0.23.0").freesFreshBlocksFirst()).isTrue();
    assertThat(VllmVersion.parse("0.22.9").freesFreshBlocksFirst()).isFalse();
    assertThat(VllmVersion.FITTED.freesFreshBlocksFirst()).isFalse();
    assertThat(VllmVersion.parse("0.11.0.post1").number()).isEqualTo("0.11.0");
    assertThat(VllmVersion.parse("v0.10").number()).isEqualTo("0.10.0");
    assertThat(VllmVersion.parse("0.9.2rc1").compareTo(VllmVersion.parse("0.9.2"))).isZero();
    assertThatThrownBy(() -> VllmVersion.parse("latest")).hasMessageContaining("'latest' is not a vLLM version");
    assertThatThrownBy(() -> VllmVersion.parse("vllm/vllm-openai:nightly")).hasMessageContaining("not a vLLM version");
  }

  @Test
  void goBlisFitnessKeysNameTheSameMetrics() {
    Fitness go = Fitness.parse("throughput:0.5,p99_ttft:0.3,mean_e2e:0.2,tokens_per_sec:1");
    Fitness ours = Fitness.parse("throughput:0.5,ttft_p99:0.3,e2e_mean:0.2,tokens_per_s:1");
    assertThat(go.weights()).isEqualTo(ours.weights());
    assertThatThrownBy(() -> Fitness.parse("p98_ttft:1")).hasMessageContaining("unknown metric 'p98_ttft'");
  }
}
