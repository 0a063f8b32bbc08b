package io.blis.latency.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class ModelCatalogTest {

  @TempDir Path dir;

  static Iterable<String> bundled() {
    return ModelCatalog.names();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("bundled")
  void everyBundledConfigParsesIntoAConsistentModel(String name) {
    ModelConfig m = ModelCatalog.byName(name);
    assertThat(m.name()).isEqualTo(name);
    assertThat(m.numAttentionHeads() % m.numKeyValueHeads()).isZero();
    assertThat(m.parameterCount()).isBetween(1_000_000_000L, 500_000_000_000L);
    assertThat(m.isMoe()).isEqualTo(m.numMoeLayers() > 0);
    assertThat(ModelSizes.kvBytesPerToken(m)).isPositive();
  }

  @Test
  void bundlesAllThirteenGroundTruthModels() {
    assertThat(ModelCatalog.names())
        .hasSize(13)
        .contains("meta-llama/Llama-2-7b-hf", "meta-llama/Llama-2-70b-hf",
            "mistralai/Mixtral-8x7B-v0.1", "codellama/CodeLlama-34b-Instruct-hf");
  }

  @Test
  void parameterCountsMatchThePublishedModelSizes() {
    // Published parameter counts of the HF checkpoints.
    assertThat(ModelCatalog.byName("meta-llama/Llama-2-7b-hf").parameterCount())
        .isEqualTo(6_738_415_616L);
    assertThat(ModelCatalog.byName("meta-llama/Llama-2-70b-hf").parameterCount())
        .isEqualTo(68_976_648_192L);
    assertThat(ModelCatalog.byName("mistralai/Mixtral-8x7B-v0.1").parameterCount())
        .isEqualTo(46_702_792_704L);
    assertThat(ModelCatalog.byName("meta-llama/Llama-3.1-8B-Instruct").parameterCount())
        .isEqualTo(8_030_261_248L);
  }

  @Test
  void llama2SevenBFields() {
    ModelConfig m = ModelCatalog.byName("meta-llama/Llama-2-7b-hf");
    assertThat(m.numLayers()).isEqualTo(32);
    assertThat(m.hiddenSize()).isEqualTo(4096);
    assertThat(m.numKeyValueHeads()).isEqualTo(32);
    assertThat(m.headDim()).isEqualTo(128);
    assertThat(m.intermediateSize()).isEqualTo(11008);
    assertThat(m.activationBytes()).isEqualTo(2);
    assertThat(m.weightBytesPerParam()).isEqualTo(2.0);
    assertThat(m.maxPositionEmbeddings()).isEqualTo(4096);
    assertThat(m.isMoe()).isFalse();
    assertThat(ModelSizes.kvBytesPerToken(m)).isEqualTo(512 * 1024);
  }

  @Test
  void mixtralIsAnMoeWithEveryLayerSparse() {
    ModelConfig m = ModelCatalog.byName("mixtral-8x7b");
    assertThat(m.numExperts()).isEqualTo(8);
    assertThat(m.expertsPerToken()).isEqualTo(2);
    assertThat(m.moeIntermediateSize()).isEqualTo(14336);
    assertThat(m.numMoeLayers()).isEqualTo(32);
    assertThat(m.sharedExpertIntermediateSize()).isZero();
  }

  @Test
  void llama4ScoutFlattensTextConfigAndReadsFp8Quantization() {
    ModelConfig m = ModelCatalog.byName("llama-4-scout");
    assertThat(m.numLayers()).isEqualTo(48);
    assertThat(m.hiddenSize()).isEqualTo(5120);
    assertThat(m.numExperts()).isEqualTo(16);
    assertThat(m.expertsPerToken()).isEqualTo(1);
    assertThat(m.numMoeLayers()).isEqualTo(48);
    assertThat(m.moeIntermediateSize()).isEqualTo(8192);
    assertThat(m.intermediateSize()).isEqualTo(16384);
    assertThat(m.sharedExpertIntermediateSize()).isEqualTo(8192);
    assertThat(m.weightBytesPerParam()).isEqualTo(1.0);
    assertThat(m.activationBytes()).isEqualTo(2);
    // ~109B total parameters for Scout (17B active)
    assertThat(m.parameterCount()).isBetween(105_000_000_000L, 110_000_000_000L);
  }

  @Test
  void qwen3ReadsExplicitHeadDim() {
    ModelConfig m = ModelCatalog.byName("Qwen/Qwen3-14B");
    assertThat(m.headDim()).isEqualTo(128);
    assertThat(m.hiddenSize() / m.numAttentionHeads()).isEqualTo(128);
    ModelConfig nemo = ModelCatalog.byName("mistral-nemo");
    assertThat(nemo.headDim()).isEqualTo(128); // 5120 / 32 would be 160
  }

  @Test
  void lookupIsCaseInsensitiveAndAcceptsShortNames() {
    assertThat(ModelCatalog.byName("META-LLAMA/llama-2-7b-HF").name())
        .isEqualTo("meta-llama/Llama-2-7b-hf");
    assertThat(ModelCatalog.byName("llama-2-7b-hf").name()).isEqualTo("meta-llama/Llama-2-7b-hf");
    assertThat(ModelCatalog.byName("llama-2-70b").name()).isEqualTo("meta-llama/Llama-2-70b-hf");
    assertThat(ModelCatalog.byName("meta-llama--Llama-2-7b-hf").name())
        .isEqualTo("meta-llama/Llama-2-7b-hf");
  }

  @Test
  void unknownNameListsTheBundledModels() {
    assertThatThrownBy(() -> ModelCatalog.byName("gpt-5"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unknown model 'gpt-5'")
        .hasMessageContaining("meta-llama/Llama-2-7b-hf")
        .hasMessageContaining("mistralai/Mixtral-8x7B-v0.1");
  }

  @Test
  void fromFileNamesTheModelAfterItsDirectory() throws IOException {
    Path file = write("acme--tiny", """
        {"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
         "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 1000,
         "torch_dtype": "bfloat16", "max_position_embeddings": 2048,
         "rope_scaling": {"type": "linear", "factor": 2.0}}
        """);
    ModelConfig m = ModelCatalog.fromFile(file);
    assertThat(m.name()).isEqualTo("acme/tiny");
    assertThat(m.headDim()).isEqualTo(16);
    assertThat(m.maxPositionEmbeddings()).isEqualTo(4096);
    // embeddings 2*1000*64 + final norm 64 + 2 layers * (attn 64*(2*64+2*32) + norms 128 + mlp 3*64*128)
    assertThat(m.parameterCount()).isEqualTo(128_000 + 64 + 2 * (12_288 + 128 + 24_576));
  }

  @Test
  void resolveAcceptsAFileADirectoryOrAName() throws IOException {
    Path file = write("acme--small", """
        {"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
         "intermediate_size": 128, "vocab_size": 1000}
        """);
    assertThat(ModelCatalog.resolve(file.toString()).name()).isEqualTo("acme/small");
    assertThat(ModelCatalog.resolve(file.getParent().toString()).name()).isEqualTo("acme/small");
    assertThat(ModelCatalog.resolve("llama-2-7b").name()).isEqualTo("meta-llama/Llama-2-7b-hf");
    assertThatThrownBy(() -> ModelCatalog.resolve(dir.resolve("missing").toString()))
        .hasMessageContaining("unknown model");
  }

  @Test
  void missingRequiredFieldNamesFileAndField() throws IOException {
    Path file = write("bad", """
        {"num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 128,
         "vocab_size": 1000}
        """);
    assertThatThrownBy(() -> ModelCatalog.fromFile(file))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(file.toString())
        .hasMessageContaining("hidden_size");
  }

  @Test
  void nonPositiveAndNegativeSizesAreRejected() throws IOException {
    Path zero = write("zero", """
        {"num_hidden_layers": 0, "hidden_size": 64, "num_attention_heads": 4,
         "intermediate_size": 128, "vocab_size": 1000}
        """);
    assertThatThrownBy(() -> ModelCatalog.fromFile(zero))
        .hasMessageContaining(zero.toString())
        .hasMessageContaining("num_hidden_layers must be > 0");
    Path negative = write("neg", """
        {"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
         "intermediate_size": -128, "vocab_size": 1000}
        """);
    assertThatThrownBy(() -> ModelCatalog.fromFile(negative))
        .hasMessageContaining(negative.toString())
        .hasMessageContaining("intermediate_size")
        .hasMessageContaining("negative");
  }

  @Test
  void headsNotDivisibleByKvHeadsAreRejected() throws IOException {
    Path file = write("gqa", """
        {"num_hidden_layers": 2, "hidden_size": 96, "num_attention_heads": 6,
         "num_key_value_heads": 4, "intermediate_size": 128, "vocab_size": 1000}
        """);
    assertThatThrownBy(() -> ModelCatalog.fromFile(file))
        .hasMessageContaining(file.toString())
        .hasMessageContaining("num_attention_heads (6) must be a multiple of num_key_value_heads (4)");
  }

  @Test
  void moeKeysUnderTheirVariousNames() throws IOException {
    Path file = write("moe", """
        {"num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 4,
         "intermediate_size": 256, "moe_intermediate_size": 32, "vocab_size": 1000,
         "n_routed_experts": 16, "num_experts_per_tok": 4, "n_shared_experts": 2,
         "first_k_dense_replace": 1}
        """);
    ModelConfig m = ModelCatalog.fromFile(file);
    assertThat(m.numExperts()).isEqualTo(16);
    assertThat(m.expertsPerToken()).isEqualTo(4);
    assertThat(m.moeIntermediateSize()).isEqualTo(32);
    assertThat(m.sharedExpertIntermediateSize()).isEqualTo(64);
    assertThat(m.numMoeLayers()).isEqualTo(3);
    assertThat(m.numDenseLayers()).isEqualTo(1);
  }

  @Test
  void multiHeadLatentAttentionIsRefusedNotSizedAsGqa() throws IOException {
    Path file = write("mla", """
        {"num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 4,
         "intermediate_size": 256, "vocab_size": 1000, "kv_lora_rank": 16, "qk_rope_head_dim": 8}
        """);
    assertThatThrownBy(() -> ModelCatalog.fromFile(file))
        .hasMessageContaining(file.toString())
        .hasMessageContaining("multi-head latent attention");
    Path nullRank = write("not-mla", """
        {"num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 4,
         "intermediate_size": 256, "vocab_size": 1000, "kv_lora_rank": null}
        """);
    assertThat(ModelCatalog.fromFile(nullRank).numKeyValueHeads()).isEqualTo(4);
  }

  @Test
  void notJsonIsAClearError() throws IOException {
    Path file = write("junk", "{ not json");
    assertThatThrownBy(() -> ModelCatalog.fromFile(file))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(file.toString());
  }

  private Path write(String model, String json) throws IOException {
    Path d = Files.createDirectories(dir.resolve(model));
    Path f = d.resolve("config.json");
    Files.writeString(f, json);
    return f;
  }

  @Test
  void defaultSamplingComesFromTheGenerationConfigBesideTheModelOrTheBundledDefaults()
      throws IOException {
    // bundled: models whose published generation_config.json sets top-p / top-k
    assertThat(ModelCatalog.byName("llama-3.1-8b").truncatedSampling()).isTrue();
    assertThat(ModelCatalog.byName("qwen2.5-7b").truncatedSampling()).isTrue();
    assertThat(ModelCatalog.byName("mistral-nemo").truncatedSampling()).isFalse();
    assertThat(ModelCatalog.byName("mixtral-8x7b").truncatedSampling()).isFalse();
    // every bundled model has its published defaults listed (none falls back to "none" unnoticed)
    try (var in = ModelCatalog.class.getResourceAsStream("/io/blis/latency/models/generation-defaults.json")) {
      var listed = new com.fasterxml.jackson.databind.ObjectMapper().readTree(in);
      for (String name : ModelCatalog.names()) {
        assertThat(listed.has(name)).as(name).isTrue();
      }
    }

    Path model = Files.createDirectories(dir.resolve("acme--tiny"));
    Files.writeString(model.resolve("config.json"), """
        {"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
         "intermediate_size": 128, "vocab_size": 1000}""");
    ModelConfig plain = ModelCatalog.fromFile(model.resolve("config.json"));
    assertThat(plain.truncatedSampling()).as("no generation config: vLLM samples plainly").isFalse();

    Files.writeString(model.resolve("generation_config.json"), "{\"top_p\": 0.9}");
    assertThat(ModelCatalog.fromFile(model.resolve("config.json")).truncatedSampling()).isTrue();
    Files.writeString(model.resolve("generation_config.json"), "{\"top_k\": 20, \"temperature\": 0}");
    assertThat(ModelCatalog.fromFile(model.resolve("config.json")).truncatedSampling())
        .as("temperature 0 is greedy: nothing is sorted").isFalse();
    Files.writeString(model.resolve("generation_config.json"), "{\"top_k\": -1, \"top_p\": 1.0}");
    assertThat(ModelCatalog.fromFile(model.resolve("config.json")).truncatedSampling()).isFalse();
    Files.writeString(model.resolve("generation_config.json"), "{\"top_p\": \"high\"}");
    assertThatThrownBy(() -> ModelCatalog.fromFile(model.resolve("config.json")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("generation_config.json")
        .hasMessageContaining("top_p must be a number");

    // a config.json without a generation config, named as a bundled model, takes its defaults
    Path copy = Files.createDirectories(dir.resolve("meta-llama--Llama-3.1-8B-Instruct"));
    Files.writeString(copy.resolve("config.json"), """
        {"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
         "intermediate_size": 128, "vocab_size": 1000}""");
    assertThat(ModelCatalog.fromFile(copy.resolve("config.json")).truncatedSampling()).isTrue();
    assertThat(ModelCatalog.fromFile(copy.resolve("config.json"), "acme/other").truncatedSampling())
        .isFalse();
  }
}
