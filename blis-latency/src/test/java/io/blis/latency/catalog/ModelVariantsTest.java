package io.blis.latency.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.blis.latency.kv.KvCapacity;
import io.blis.latency.layout.Layout;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Configs whose architectures need more than the common keys: DBRX's nesting, gpt-oss's MXFP4 and windows. */
class ModelVariantsTest {

  @TempDir Path dir;

  private Path config(String name, String json) throws IOException {
    Path d = Files.createDirectories(dir.resolve(name));
    return Files.writeString(d.resolve("config.json"), json);
  }

  @Test
  void dbrxIsReadFromItsNestedAttentionAndFfnSettings() throws IOException {
    ModelConfig m = ModelCatalog.fromFile(config("databricks--dbrx-instruct", """
        {"model_type": "dbrx", "d_model": 6144, "n_heads": 48, "n_layers": 40, "max_seq_len": 32768,
         "vocab_size": 100352, "tie_word_embeddings": false, "torch_dtype": "bfloat16",
         "attn_config": {"kv_n_heads": 8, "model_type": "", "rope_theta": 500000},
         "ffn_config": {"ffn_hidden_size": 10752, "moe_num_experts": 16, "moe_top_k": 4, "model_type": ""}}
        """));
    assertThat(m.name()).isEqualTo("databricks/dbrx-instruct");
    assertThat(m.family()).isEqualTo("dbrx"); // the nested empty model_type does not override it
    assertThat(m.numLayers()).isEqualTo(40);
    assertThat(m.numKeyValueHeads()).isEqualTo(8);
    assertThat(m.headDim()).isEqualTo(128);
    assertThat(m.numExperts()).isEqualTo(16);
    assertThat(m.expertsPerToken()).isEqualTo(4);
    assertThat(m.moeIntermediateSize()).isEqualTo(10752);
    assertThat(m.maxPositionEmbeddings()).isEqualTo(32768);
    // 132B parameters, as Databricks states
    assertThat(m.parameterCount() / 1e9).isCloseTo(131.6, within(0.1));
  }

  @Test
  void gptOssKeepsItsExpertsInMxfp4AndHalfItsLayersInAWindow() throws IOException {
    StringBuilder types = new StringBuilder();
    for (int i = 0; i < 24; i++) {
      types.append(i == 0 ? "" : ",").append(i % 2 == 0 ? "\"sliding_attention\"" : "\"full_attention\"");
    }
    ModelConfig m = ModelCatalog.fromFile(config("openai--gpt-oss-20b", """
        {"model_type": "gpt_oss", "hidden_size": 2880, "intermediate_size": 2880, "head_dim": 64,
         "num_attention_heads": 64, "num_key_value_heads": 8, "num_hidden_layers": 24, "vocab_size": 201088,
         "num_local_experts": 32, "num_experts_per_tok": 4, "sliding_window": 128, "max_position_embeddings": 131072,
         "layer_types": [%s], "quantization_config": {"quant_method": "mxfp4"}}
        """.formatted(types)));
    assertThat(m.weightBytesPerParam()).isEqualTo(2.0); // attention, router, embeddings: bf16
    assertThat(m.expertWeightBytesPerParam()).isEqualTo(4.25 / 8);
    assertThat(m.slidingWindowLayers()).isEqualTo(12);
    assertThat(m.slidingWindow()).isEqualTo(128);
    // 21B parameters in about 13.8 GB, as the checkpoint is
    assertThat(m.parameterCount() / 1e9).isCloseTo(20.9, within(0.1));
    assertThat(m.weightBytes() / 1e9).isCloseTo(13.75, within(0.05));
    assertThat(ModelSizes.fullAttentionShare(m)).isEqualTo(0.5);
    // the KV pool holds the full-attention layers: a block costs half of all layers' bytes
    double block = KvCapacity.blockBytesPerGpu(m, Layout.tensorParallel(1), 16);
    assertThat(block).isEqualTo(ModelSizes.kvBytesPerTokenPerGpu(m, 1) * 16 / 2.0);
  }

  @Test
  void layerTypesMustMatchTheLayersAndNameAWindow() throws IOException {
    String base = """
        {"model_type": "gpt_oss", "hidden_size": 64, "intermediate_size": 64, "num_attention_heads": 4,
         "num_hidden_layers": 2, "vocab_size": 100, %s}
        """;
    Path three = config("a--three", base.formatted("\"sliding_window\": 8, \"layer_types\": [\"sliding_attention\","
        + " \"full_attention\", \"full_attention\"]"));
    assertThatThrownBy(() -> ModelCatalog.fromFile(three)).hasMessageContaining("layer_types lists 3 layers");
    Path noWindow = config("a--nowindow", base.formatted("\"layer_types\": [\"sliding_attention\", \"full_attention\"]"));
    assertThatThrownBy(() -> ModelCatalog.fromFile(noWindow)).hasMessageContaining("sliding_window is missing");
    // a sliding_window with no layer_types (Qwen2 and others) is not a sliding model
    Path qwen = config("a--qwen", base.formatted("\"sliding_window\": 4096"));
    assertThat(ModelCatalog.fromFile(qwen).slidingWindowLayers()).isZero();
  }
}
