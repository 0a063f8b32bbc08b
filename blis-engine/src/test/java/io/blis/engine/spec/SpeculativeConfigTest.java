package io.blis.engine.spec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class SpeculativeConfigTest {

  @Test
  void vllmsSpeculativeConfigIsRead() {
    SpeculativeConfig.Parsed p = SpeculativeConfig.parseVllm(
        "{\"method\": \"eagle3\", \"model\": \"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\", \"num_speculative_tokens\": 3,"
            + " \"draft_tensor_parallel_size\": 1}", "--speculative-config");
    assertThat(p.method()).isEqualTo(SpeculativeMethod.EAGLE3);
    assertThat(p.tokens()).isEqualTo(3);
    assertThat(p.model()).isEqualTo("yuhuili/EAGLE3-LLaMA3.1-Instruct-8B");
    assertThat(SpeculativeConfig.parseVllm("{\"method\": \"deepseek_mtp\", \"num_speculative_tokens\": 1}", "f")
        .method()).isEqualTo(SpeculativeMethod.MTP);
    assertThat(SpeculativeConfig.parseVllm("{\"model\": \"[ngram]\", \"num_speculative_tokens\": 5}", "f").method())
        .as("vLLM infers the method from the model when none is given").isEqualTo(SpeculativeMethod.NGRAM);
    assertThat(SpeculativeConfig.parseVllm("{\"method\": \"mtp\", \"num_speculative_tokens\": 2,"
        + " \"draft_sample_method\": \"greedy\", \"use_local_argmax_reduction\": true}", "f").tokens())
        .as("vLLM's other keys are accepted").isEqualTo(2);
    assertThat(SpeculativeConfig.parseVllm("{\"model\": \"meta-llama/Llama-3.2-1B-Instruct\","
        + " \"num_speculative_tokens\": 4}", "f").method()).isEqualTo(SpeculativeMethod.DRAFT_MODEL);
  }

  @Test
  void badConfigsAreRefusedNamingTheFlagAndKey() {
    assertThatThrownBy(() -> SpeculativeConfig.parseVllm("{\"method\": \"eagle3\"}", "--speculative-config"))
        .hasMessageContaining("--speculative-config").hasMessageContaining("num_speculative_tokens");
    assertThatThrownBy(() -> SpeculativeConfig.parseVllm("{\"method\": \"eagle9\", \"num_speculative_tokens\": 2}",
        "f")).hasMessageContaining("eagle9");
    assertThatThrownBy(() -> SpeculativeConfig.parseVllm("{\"num_speculative_tokens\": 2, \"typo\": 1}", "f"))
        .hasMessageContaining("unknown key 'typo'");
    assertThatThrownBy(() -> SpeculativeConfig.parseVllm("{not json", "--speculative-config"))
        .hasMessageContaining("--speculative-config");
  }

  @Test
  void lookaheadSlotsFollowTheMethodAsInVllm() {
    AcceptanceProfile p = AcceptanceProfile.ofMeanRate(0.5, 3);
    assertThat(new SpeculativeConfig(SpeculativeMethod.EAGLE3, 3, p, "", "", 1).lookaheadSlots()).isEqualTo(3);
    assertThat(new SpeculativeConfig(SpeculativeMethod.MTP, 2, p, "", "", 1).lookaheadSlots()).isEqualTo(2);
    assertThat(new SpeculativeConfig(SpeculativeMethod.DRAFT_MODEL, 4, p, "", "m", 1).lookaheadSlots()).isEqualTo(4);
    assertThat(new SpeculativeConfig(SpeculativeMethod.NGRAM, 3, p, "", "", 1).lookaheadSlots()).isZero();
    assertThatThrownBy(() -> new SpeculativeConfig(SpeculativeMethod.DRAFT_MODEL, 4, p, "", "", 1))
        .hasMessageContaining("draft model");
  }

  @Test
  void aSpeculatorTrimsDraftsToTheBudgetAndTheModelLength() {
    Speculator s = new Speculator(new SpeculativeConfig(SpeculativeMethod.EAGLE3, 3,
        AcceptanceProfile.ofMeanRate(0.5, 3), "", "", 1), 42, 0);
    assertThat(s.decodeTokens(100, 0)).isEqualTo(4);
    assertThat(s.decodeTokens(2, 0)).isEqualTo(2);
    assertThat(s.decodeTokens(100, 3)).isEqualTo(3);
    assertThat(s.decodeTokens(1, 1)).isEqualTo(1);
  }
}
