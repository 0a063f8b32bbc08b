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
    assertThat(m.parameterCount()).isBetween(1_000_000_000L, 1_000_000_000_000L);
    assertThat(m.isMoe()).isEqualTo(m.numMoeLayers() > 0);
    assertThat(ModelSizes.kvBytesPerToken(m)).isPositive();
  }

  @Test
  void bundlesTheThirteenGroundTruthModelsAndThreeDeepSeekModels() {
    assertThat(ModelCatalog.names())
        .hasSize(16)
        .contains("meta-llama/Llama-2-7b-hf", "meta-llama/Llama-2-70b-hf",
            "mistralai/Mixtral-8x7B-v0.1", "codellama/CodeLlama-34b-Instruct-hf",
            "deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-R1", "deepseek-ai/DeepSeek-V2-Lite");
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
  void aMoeLayerStepOfZeroIsOneClearMessage() throws IOException {
    Path file = write("acme--moe0", """
        {"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
         "intermediate_size": 128, "vocab_size": 1000, "num_local_experts": 8,
         "num_experts_per_tok": 2, "moe_layer_freq": 0}
        """);
    assertThatThrownBy(() -> ModelCatalog.fromFile(file))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(file.toString())
        .hasMessageContaining("must be at least 1 (every layer), got 0");
  }

  /** The fields of a tiny dense config, without braces, for configs built on it. */
  private static final String TINY = "\"num_hidden_layers\": 2, \"hidden_size\": 64, \"num_attention_heads\": 4,"
      + " \"intermediate_size\": 128, \"vocab_size\": 1000";

  /**
   * A model type whose experts have their own width refuses a config without it (DeepSeek-V3 took
   * its dense 18,432 and reported a memory shortfall); Mixtral's convention, intermediate_size as
   * the experts' width, still holds where it applies.
   */
  @Test
  void aMissingExpertWidthIsRefusedWhereTheModelTypeHasOne() throws IOException {
    String moe = TINY + ", \"num_experts\": 8, \"num_experts_per_tok\": 2";
    Path qwen = write("acme--qwen-moe", "{" + moe + ", \"model_type\": \"qwen3_moe\"}");
    assertThatThrownBy(() -> ModelCatalog.fromFile(qwen)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(qwen.toString())
        .hasMessageContaining("moe_intermediate_size is missing: a qwen3_moe model's experts have a width of their own"
            + " (intermediate_size, 128, is its dense layers')");
    Path given = write("acme--qwen-moe-ok", "{" + moe + ", \"model_type\": \"qwen3_moe\", \"moe_intermediate_size\": 32}");
    assertThat(ModelCatalog.fromFile(given).moeIntermediateSize()).isEqualTo(32);
    Path mixtral = write("acme--mixtral", "{" + moe + ", \"model_type\": \"mixtral\"}");
    assertThat(ModelCatalog.fromFile(mixtral).moeIntermediateSize()).isEqualTo(128);
  }

  /** A dtype, quantization method or context length that cannot be is refused, not guessed. */
  @Test
  void impossibleDtypeQuantizationAndContextAreRefused() throws IOException {
    String base = TINY;
    Path dtype = write("acme--dtype", "{" + base + ", \"torch_dtype\": \"float7\"}");
    assertThatThrownBy(() -> ModelCatalog.fromFile(dtype)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(dtype.toString()).hasMessageContaining("torch_dtype 'float7' is not a dtype");
    Path quant = write("acme--quant", "{" + base + ", \"quantization_config\": {\"quant_method\": \"magic\"}}");
    assertThatThrownBy(() -> ModelCatalog.fromFile(quant)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(quant.toString()).hasMessageContaining("quant_method 'magic' is not a quantization method");
    Path latent = write("acme--mla0", "{" + base + ", \"kv_lora_rank\": 0}");
    assertThatThrownBy(() -> ModelCatalog.fromFile(latent)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(latent.toString()).hasMessageContaining("kv_lora_rank must be at least 1");
    Path context = write("acme--ctx", "{" + base + ", \"max_position_embeddings\": 0}");
    assertThatThrownBy(() -> ModelCatalog.fromFile(context)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(context.toString()).hasMessageContaining("max_position_embeddings must be at least 1");
    // what real checkpoints say is taken
    for (String ok : new String[] {", \"torch_dtype\": \"bfloat16\"", ", \"torch_dtype\": \"float32\"",
        ", \"dtype\": \"float8_e4m3fn\"", ", \"quantization_config\": {\"quant_method\": \"awq\", \"bits\": 4}",
        ", \"quantization_config\": {\"quant_method\": \"compressed-tensors\"}", ", \"max_position_embeddings\": 4096",
        ", \"kv_lora_rank\": null"}) {
      assertThat(ModelCatalog.fromFile(write("acme--ok" + Math.abs(ok.hashCode()), "{" + base + ok + "}"))).isNotNull();
    }
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
  void deepSeekV3ReadsLatentAttentionMoeLayoutAndFp8Weights() {
    ModelConfig m = ModelCatalog.byName("deepseek-v3");
    assertThat(m.name()).isEqualTo("deepseek-ai/DeepSeek-V3");
    assertThat(m.family()).isEqualTo("deepseek_v3");
    assertThat(m.usesLatentAttention()).isTrue();
    assertThat(m.mla()).isEqualTo(new ModelConfig.Mla(512, 1536, 128, 64, 128));
    assertThat(m.kvLoraRank()).isEqualTo(512);
    assertThat(m.qLoraRank()).isEqualTo(1536);
    assertThat(m.qkNopeHeadDim()).isEqualTo(128);
    assertThat(m.qkRopeHeadDim()).isEqualTo(64);
    assertThat(m.vHeadDim()).isEqualTo(128);
    assertThat(m.numAttentionHeads()).isEqualTo(128);
    assertThat(m.numKeyValueHeads()).isEqualTo(128);
    assertThat(m.headDim()).isEqualTo(128 + 64);
    // 61 layers, the first 3 (first_k_dense_replace) dense, every later one (moe_layer_freq 1) MoE
    assertThat(m.numLayers()).isEqualTo(61);
    assertThat(m.numMoeLayers()).isEqualTo(58);
    assertThat(m.numDenseLayers()).isEqualTo(3);
    assertThat(m.intermediateSize()).isEqualTo(18432);
    assertThat(m.numExperts()).isEqualTo(256);
    assertThat(m.expertsPerToken()).isEqualTo(8);
    assertThat(m.moeIntermediateSize()).isEqualTo(2048);
    assertThat(m.sharedExpertIntermediateSize()).isEqualTo(2048); // n_shared_experts 1 x 2048
    assertThat(m.vocabSize()).isEqualTo(129280);
    assertThat(m.tieWordEmbeddings()).isFalse();
    // quantization_config quant_method fp8: 1-byte weights; torch_dtype bfloat16: 2-byte KV
    assertThat(m.weightBytesPerParam()).isEqualTo(1.0);
    assertThat(m.activationBytes()).isEqualTo(2);
    // yarn: original_max_position_embeddings 4096 x factor 40
    assertThat(m.maxPositionEmbeddings()).isEqualTo(163_840);
    assertThat(m.truncatedSampling()).isFalse();
    // R1 has V3's architecture; the sampling flag keeps the latent-attention shape
    ModelConfig r1 = ModelCatalog.byName("deepseek-r1");
    assertThat(r1.name()).isEqualTo("deepseek-ai/DeepSeek-R1");
    assertThat(r1.mla()).isEqualTo(m.mla());
    assertThat(r1.parameterCount()).isEqualTo(m.parameterCount());
    assertThat(m.withTruncatedSampling(true).mla()).isEqualTo(m.mla());
  }

  @Test
  void deepSeekV2LiteHasNoQueryLoraAndOneDenseLayer() {
    ModelConfig m = ModelCatalog.byName("deepseek-v2-lite");
    assertThat(m.name()).isEqualTo("deepseek-ai/DeepSeek-V2-Lite");
    assertThat(m.family()).isEqualTo("deepseek_v2");
    assertThat(m.mla()).isEqualTo(new ModelConfig.Mla(512, 0, 128, 64, 128)); // q_lora_rank null
    assertThat(m.numKeyValueHeads()).isEqualTo(16);
    assertThat(m.headDim()).isEqualTo(192);
    // 27 layers, first_k_dense_replace 1
    assertThat(m.numMoeLayers()).isEqualTo(26);
    assertThat(m.numDenseLayers()).isEqualTo(1);
    assertThat(m.numExperts()).isEqualTo(64);
    assertThat(m.expertsPerToken()).isEqualTo(6);
    assertThat(m.sharedExpertIntermediateSize()).isEqualTo(2 * 1408);
    assertThat(m.weightBytesPerParam()).isEqualTo(2.0);
    assertThat(m.maxPositionEmbeddings()).isEqualTo(163_840);
  }

  @Test
  void latentAttentionConfigsAreReadFromFiles() throws IOException {
    Path file = write("acme--mla", """
        {"num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 1,
         "head_dim": 8, "intermediate_size": 256, "vocab_size": 1000, "kv_lora_rank": 16,
         "qk_nope_head_dim": 16, "qk_rope_head_dim": 8, "v_head_dim": 16}
        """);
    ModelConfig m = ModelCatalog.fromFile(file);
    assertThat(m.mla()).isEqualTo(new ModelConfig.Mla(16, 0, 16, 8, 16));
    // no KV heads under MLA, and head_dim in such a config is the rope width, not a head's width
    assertThat(m.numKeyValueHeads()).isEqualTo(4);
    assertThat(m.headDim()).isEqualTo(16 + 8);

    Path nullRank = write("not-mla", """
        {"num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 4,
         "intermediate_size": 256, "vocab_size": 1000, "kv_lora_rank": null, "q_lora_rank": null}
        """);
    ModelConfig plain = ModelCatalog.fromFile(nullRank);
    assertThat(plain.usesLatentAttention()).isFalse();
    assertThat(plain.mla()).isEqualTo(ModelConfig.Mla.NONE);
    assertThat(plain.numKeyValueHeads()).isEqualTo(4);
    assertThat(plain.headDim()).isEqualTo(16);
  }

  @Test
  void latentAttentionWithoutItsRopeWidthNamesTheFileAndTheKey() throws IOException {
    Path file = write("mla", """
        {"num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 4,
         "intermediate_size": 256, "vocab_size": 1000, "kv_lora_rank": 16, "qk_nope_head_dim": 16,
         "v_head_dim": 16}
        """);
    assertThatThrownBy(() -> ModelCatalog.fromFile(file))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(file.toString())
        .hasMessageContaining("qk_rope_head_dim is missing or 0")
        .hasMessageContaining("multi-head latent attention (kv_lora_rank 16)");
    Path negative = write("mla-neg", """
        {"num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 4,
         "intermediate_size": 256, "vocab_size": 1000, "kv_lora_rank": 16, "qk_nope_head_dim": 16,
         "qk_rope_head_dim": -8, "v_head_dim": 16}
        """);
    assertThatThrownBy(() -> ModelCatalog.fromFile(negative))
        .hasMessageContaining(negative.toString())
        .hasMessageContaining("qk_rope_head_dim")
        .hasMessageContaining("negative");
  }

  @Test
  void theConstructorValidatesTheLatentAttentionShapeNamingModelAndKey() {
    assertThatThrownBy(() -> new ModelConfig("acme/mla", 2, 64, 4, 4, 24, 128, 1000, 0, 2, 2.0,
            false, 0, 0, 128, 0, 0, true, false, "", new ModelConfig.Mla(16, 0, 16, 8, 0)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("acme/mla")
        .hasMessageContaining("v_head_dim is missing or 0");
    assertThatThrownBy(() -> new ModelConfig("acme/mla", 2, 64, 4, 4, 24, 128, 1000, 0, 2, 2.0,
            false, 0, 0, 128, 0, 0, true, false, "", new ModelConfig.Mla(16, -1, 16, 8, 16)))
        .hasMessageContaining("acme/mla: q_lora_rank must be >= 0, got -1");
    // the shorter constructors mean ordinary attention
    ModelConfig plain = new ModelConfig("acme/plain", 2, 64, 4, 4, 16, 128, 1000, 0, 2, 2.0,
        false, 0, 0, 128, 0, 0, true);
    assertThat(plain.mla()).isEqualTo(ModelConfig.Mla.NONE);
    assertThat(plain.usesLatentAttention()).isFalse();
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
    // null in generation-defaults.json: the published defaults are not verified, none assumed
    assertThat(ModelCatalog.byName("deepseek-v2-lite").truncatedSampling()).isFalse();
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
