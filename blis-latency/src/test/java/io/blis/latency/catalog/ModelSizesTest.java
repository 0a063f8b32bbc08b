package io.blis.latency.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.withinPercentage;

import org.junit.jupiter.api.Test;

/** Sizes of multi-head latent attention models, computed by hand from their published configs. */
class ModelSizesTest {

  private static final ModelConfig V3 = ModelCatalog.byName("deepseek-ai/DeepSeek-V3");
  private static final ModelConfig V2_LITE = ModelCatalog.byName("deepseek-ai/DeepSeek-V2-Lite");

  @Test
  void latentKvCacheIsOneLatentPerTokenAndLayerOnEveryGpu() {
    // layers x (kv_lora_rank 512 + qk_rope_head_dim 64) x 2 bytes (bf16), no factor 2 for K and V
    assertThat(ModelSizes.kvBytesPerToken(V3)).isEqualTo(61 * 576 * 2).isEqualTo(70_272);
    assertThat(ModelSizes.kvBytesPerToken(V2_LITE)).isEqualTo(27 * 576 * 2).isEqualTo(31_104);
    // vLLM keeps the whole latent on every tensor-parallel rank: it is not split by heads
    for (int tp : new int[] {1, 2, 4, 8, 16}) {
      assertThat(ModelSizes.kvBytesPerTokenPerGpu(V3, tp)).as("TP %d", tp).isEqualTo(70_272);
      assertThat(ModelSizes.kvBytesPerTokenPerGpu(V2_LITE, tp)).as("TP %d", tp).isEqualTo(31_104);
    }
  }

  @Test
  void deepSeekV3AttentionParametersPerLayer() {
    // d 7168, H 128, r_q 1536, r_kv 512, nope 128, rope 64, v 128
    long query = 7168L * 1536 + 1536L * 128 * 192; // q_a_proj + q_b_proj
    long kvDown = 7168L * 576; // kv_a_proj_with_mqa: latent 512 + shared rope key 64
    long kvUp = 512L * 128 * 256; // kv_b_proj: nope key 128 + value 128 per head
    long output = 128L * 128 * 7168; // o_proj
    assertThat(ModelSizes.mlaQueryParamsPerLayer(V3)).isEqualTo(query);
    assertThat(ModelSizes.mlaKvDownParamsPerLayer(V3)).isEqualTo(kvDown);
    assertThat(ModelSizes.mlaKvUpParamsPerLayer(V3)).isEqualTo(kvUp);
    assertThat(ModelSizes.mlaOutputParamsPerLayer(V3)).isEqualTo(output);
    // 7168*1536 + 1536 (q_a_layernorm) + 1536*128*192 + 7168*576 + 512 (kv_a_layernorm)
    //   + 512*128*256 + 128*128*7168
    //   = 11,010,048 + 1,536 + 37,748,736 + 4,128,768 + 512 + 16,777,216 + 117,440,512
    assertThat(ModelSizes.attentionParamsPerLayer(V3))
        .isEqualTo(7168L * 1536 + 1536 + 1536L * 128 * 192 + 7168L * 576 + 512 + 512L * 128 * 256
            + 128L * 128 * 7168)
        .isEqualTo(187_107_328L);
  }

  @Test
  void deepSeekV2LiteProjectsQueriesDirectly() {
    // q_lora_rank null: q_proj d x H(nope + rope) = 2048 x 16 x 192, no q_a_layernorm
    assertThat(ModelSizes.mlaQueryParamsPerLayer(V2_LITE)).isEqualTo(2048L * 16 * 192);
    // 6,291,456 + 2048*576 + 512 + 512*16*256 + 16*128*2048
    assertThat(ModelSizes.attentionParamsPerLayer(V2_LITE))
        .isEqualTo(2048L * 16 * 192 + 2048L * 576 + 512 + 512L * 16 * 256 + 16L * 128 * 2048)
        .isEqualTo(13_763_072L);
  }

  @Test
  void totalParametersMatchThePublishedSizesWithoutTheMultiTokenPredictionLayer() {
    // V3: embeddings 2 x 129280 x 7168 (untied) + final norm 7168
    //   + 61 x (attention 187,107,328 + 2 norms x 7168)
    //   + 3 dense FFNs x 3 x 7168 x 18432
    //   + 58 MoE layers x (256 experts x 3 x 7168 x 2048 + router 7168 x 256 + 1 shared 3 x 7168 x 2048)
    //   = 671,026,404,352: the paper's 671B main model (HF's 685B adds the 14B MTP module, which
    //   vLLM loads only for speculative decoding)
    assertThat(V3.parameterCount()).isEqualTo(671_026_404_352L);
    assertThat((double) V3.parameterCount()).isCloseTo(671e9, withinPercentage(1));
    // V2-Lite: 2 x 102400 x 2048 + 2048 + 27 x (13,763,072 + 4096) + 3 x 2048 x 10944
    //   + 26 x (64 x 3 x 2048 x 1408 + 2048 x 64 + 3 x 2048 x 2816) = 15,706,484,224 (published 15.7B)
    assertThat(V2_LITE.parameterCount()).isEqualTo(15_706_484_224L);
    assertThat((double) V2_LITE.parameterCount()).isCloseTo(15.7e9, withinPercentage(2));
    // fp8 weights: one byte each
    assertThat(ModelSizes.weightBytes(V3)).isEqualTo(671_026_404_352.0);
  }

  @Test
  void latentAttentionNeedsOnlyTheAttentionHeadsToSplit() {
    // 12 heads over 6 GPUs: 4 KV heads and 6 do not divide one another, which only GQA minds
    ModelConfig gqa = new ModelConfig("acme/gqa", 2, 96, 12, 4, 8, 128, 1000, 0, 2, 2.0, false,
        0, 0, 128, 0, 0, true);
    ModelConfig mla = new ModelConfig("acme/mla", 2, 96, 12, 4, 24, 128, 1000, 0, 2, 2.0, false,
        0, 0, 128, 0, 0, true, false, "", new ModelConfig.Mla(32, 0, 16, 8, 16));
    assertThat(ModelSizes.splitsOver(gqa, 6)).isFalse();
    assertThatThrownBy(() -> ModelSizes.checkTensorParallel(gqa, 6))
        .hasMessageContaining("num_key_value_heads (4) and tensor parallelism 6");
    assertThat(ModelSizes.splitsOver(mla, 6)).isTrue();
    ModelSizes.checkTensorParallel(mla, 6);
    assertThat(ModelSizes.splitsOver(mla, 5)).isFalse();
    assertThatThrownBy(() -> ModelSizes.checkTensorParallel(mla, 5))
        .hasMessageContaining("num_attention_heads (12) is not divisible by tensor parallelism 5");
    assertThat(ModelSizes.splitsOver(V3, 8)).isTrue();
    assertThat(ModelSizes.splitsOver(V2_LITE, 16)).isTrue();
  }

  @Test
  void ordinaryAttentionHasNoLatentParts() {
    ModelConfig llama = ModelCatalog.byName("llama-2-7b");
    assertThat(llama.usesLatentAttention()).isFalse();
    assertThat(ModelSizes.mlaQueryParamsPerLayer(llama)).isZero();
    assertThat(ModelSizes.mlaKvDownParamsPerLayer(llama)).isZero();
    assertThat(ModelSizes.mlaKvUpParamsPerLayer(llama)).isZero();
    assertThat(ModelSizes.mlaOutputParamsPerLayer(llama)).isZero();
    // 4096 x (2 x 4096 + 2 x 4096) and 2 x 32 layers x 32 KV heads x 128 x 2 bytes, as before
    assertThat(ModelSizes.attentionParamsPerLayer(llama)).isEqualTo(4096L * 4 * 4096);
    assertThat(ModelSizes.kvBytesPerTokenPerGpu(llama, 2)).isEqualTo(256 * 1024);
  }
}
