package io.blis.latency.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.blis.latency.kv.HybridKv;
import io.blis.latency.kv.KvCapacity;
import io.blis.latency.layout.Layout;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hybrid architectures read from their HF configs (the keys as docs/hybrid/models/ has them): which
 * layers attend, slide or keep a recurrent state, the state's bytes (vLLM's shapes), and how vLLM's
 * hybrid KV-cache manager groups them.
 */
class HybridModelsTest {

  @TempDir Path dir;

  private ModelConfig read(String name, String json) throws IOException {
    Path d = Files.createDirectories(dir.resolve(name));
    return ModelCatalog.fromFile(Files.writeString(d.resolve("config.json"), json));
  }

  private static final String QWEN3_NEXT = """
      {"model_type": "qwen3_next", "num_hidden_layers": 48, "hidden_size": 2048, "intermediate_size": 5120,
       "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 256, "full_attention_interval": 4,
       "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_num_key_heads": 16,
       "linear_num_value_heads": 32, "linear_value_head_dim": 128, "num_experts": 512, "num_experts_per_tok": 10,
       "moe_intermediate_size": 512, "shared_expert_intermediate_size": 512, "decoder_sparse_step": 1,
       "vocab_size": 151936, "max_position_embeddings": 262144, "tie_word_embeddings": false,
       "torch_dtype": "bfloat16"}
      """;

  @Test
  void qwen3NextKeepsAGatedDeltaNetStateInThreeLayersOfFour() throws IOException {
    ModelConfig m = read("Qwen--Qwen3-Next-80B-A3B-Instruct", QWEN3_NEXT);
    assertThat(m.recurrentLayers()).isEqualTo(36);
    assertThat(ModelSizes.attentionLayers(m)).isEqualTo(12);
    // conv 3 x (2 x 16 x 128 + 32 x 128) + recurrent 32 x 128 x 128 elements, bf16
    assertThat(m.recurrentStateBytesPerLayer()).isEqualTo((3L * 8192 + 32L * 128 * 128) * 2);
    assertThat(ModelSizes.kvBytesPerToken(m)).as("KV only in the 12 attending layers").isEqualTo(2L * 12 * 2 * 256 * 2);
    assertThat(m.parameterCount() / 1e9).isBetween(79.0, 81.0); // "80B"
    // vLLM enlarges the attention block so that a page holds a layer's state: 16 x ceil(1097728 / (16 x 2048))
    assertThat(HybridKv.blockSizeFor(m, 1, 16)).isEqualTo(544);
    assertThat(HybridKv.blockSizeFor(m, 4, 16)).as("per GPU: state / 4, one KV head").isEqualTo(272);
    HybridKv h = HybridKv.of(m, 544);
    assertThat(h.groupSize()).isEqualTo(12);
    assertThat(h.recurrentGroups()).isEqualTo(3);
    assertThat(h.groups()).isEqualTo(4);
  }

  @Test
  void nemotronHsPatternGivesItsMambaAttentionAndMlpBlocks() throws IOException {
    ModelConfig m = read("nvidia--NVIDIA-Nemotron-Nano-9B-v2", """
        {"model_type": "nemotron_h", "num_hidden_layers": 56, "hidden_size": 4480, "intermediate_size": 15680,
         "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 131072,
         "hybrid_override_pattern": "M-M-M-MM-M-M-M*-M-M-M*-M-M-M-M*-M-M-M-M*-M-MM-M-M-M-M-M-",
         "ssm_state_size": 128, "conv_kernel": 4, "n_groups": 8, "mamba_num_heads": 128, "mamba_head_dim": 80,
         "torch_dtype": "bfloat16"}
        """);
    assertThat(m.numLayers()).as("mixer blocks: 27 Mamba + 4 attention").isEqualTo(31);
    assertThat(m.recurrentLayers()).isEqualTo(27);
    // conv 3 x (10240 + 2 x 8 x 128) in bf16, SSM 128 x 80 x 128 in float16
    assertThat(m.recurrentStateBytesPerLayer()).isEqualTo(3L * 12288 * 2 + 128L * 80 * 128 * 2);
    assertThat(m.parameterCount() / 1e9).isBetween(8.7, 9.1); // "9B"
    assertThat(HybridKv.blockSizeFor(m, 1, 16)).isEqualTo(672);
    HybridKv h = HybridKv.of(m, 672);
    assertThat(h.groupSize()).isEqualTo(4);
    assertThat(h.recurrentGroups()).as("27 Mamba layers in groups of 4").isEqualTo(7);
  }

  @Test
  void gemma3SlidesFiveLayersOfSixAndTiesItsEmbeddings() throws IOException {
    ModelConfig m = read("google--gemma-3-27b-it", """
        {"model_type": "gemma3", "text_config": {"model_type": "gemma3_text", "head_dim": 128, "hidden_size": 5376,
         "intermediate_size": 21504, "num_attention_heads": 32, "num_hidden_layers": 62, "num_key_value_heads": 16,
         "sliding_window": 1024, "sliding_window_pattern": 6, "max_position_embeddings": 131072,
         "rope_scaling": {"factor": 8.0, "rope_type": "linear"}, "vocab_size": 262208}, "torch_dtype": "bfloat16"}
        """);
    assertThat(m.slidingWindowLayers()).isEqualTo(52);
    assertThat(m.slidingWindow()).isEqualTo(1024);
    assertThat(m.tieWordEmbeddings()).isTrue();
    assertThat(m.maxPositionEmbeddings()).as("vLLM does not scale Gemma 3's context again").isEqualTo(131072);
    assertThat(m.parameterCount() / 1e9).isBetween(26.5, 27.5);
    HybridKv h = HybridKv.of(m, 16);
    assertThat(h.groupSize()).isEqualTo(10);
    assertThat(h.slidingGroups()).as("52 sliding layers in groups of 10, as vLLM pads them").isEqualTo(6);
    assertThat(h.windowBlocks()).isEqualTo(1023 / 16 + 1 + 1);
    assertThat(HybridKv.blockSizeFor(m, 1, 16)).as("no recurrent layer: the block stays").isEqualTo(16);
  }

  @Test
  void aPoolBlockIsTheFullAttentionLayersPages() throws IOException {
    ModelConfig m = read("Qwen--Qwen3-Next-80B-A3B-Instruct", QWEN3_NEXT);
    // 12 attending layers x 2 KV heads... per GPU at TP 4: one head (replicated), 256 dims, K and V, bf16
    assertThat(KvCapacity.blockBytesPerGpu(m, Layout.tensorParallel(4), 272)).isEqualTo(12.0 * 1024 * 272);
  }

  @Test
  void aLinearAttentionConfigWithoutItsLayoutIsRefused() {
    assertThatThrownBy(() -> read("x", QWEN3_NEXT.replace("\"full_attention_interval\": 4,", "")))
        .hasMessageContaining("full_attention_interval");
    assertThatThrownBy(() -> read("y", """
        {"model_type": "nemotron_h", "num_hidden_layers": 3, "hidden_size": 64, "intermediate_size": 128,
         "num_attention_heads": 4, "vocab_size": 100, "hybrid_override_pattern": "M*x", "ssm_state_size": 8,
         "n_groups": 1, "mamba_num_heads": 4, "mamba_head_dim": 16}
        """)).hasMessageContaining("'x' is not a block kind");
  }
}
