package io.blis.latency.kv;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.withinPercentage;

import io.blis.latency.catalog.GpuCatalog;
import io.blis.latency.catalog.ModelCatalog;
import io.blis.latency.catalog.ModelSizes;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

class KvCapacityTest {

  /** GPU KV-block counts vLLM logged for the ground-truth runs (experiments.json kv_blocks_gpu). */
  @ParameterizedTest(name = "{0} TP{1}: vLLM {2} blocks")
  @CsvSource({
    "meta-llama/Llama-2-7b-hf, 1, 7462",
    "meta-llama/Llama-2-70b-hf, 4, 31356",
    "mistralai/Mixtral-8x7B-v0.1, 2, 27510"
  })
  void matchesTheBlockCountsVllmRecordedWithinThreePercent(String model, int tp, long vllm) {
    long blocks =
        KvCapacity.totalBlocks(ModelCatalog.byName(model), GpuCatalog.byName("H100"), tp, 0.9, 16);
    assertThat((double) blocks).isCloseTo(vllm, withinPercentage(3));
  }

  @Test
  void moreMemoryTpOrUtilizationGivesMoreBlocks() {
    var m = ModelCatalog.byName("meta-llama/Llama-3.1-8B-Instruct");
    var h100 = GpuCatalog.byName("H100");
    long base = KvCapacity.totalBlocks(m, h100, 1, 0.9, 16);
    assertThat(KvCapacity.totalBlocks(m, h100, 1, 0.95, 16)).isGreaterThan(base);
    assertThat(KvCapacity.totalBlocks(m, h100, 2, 0.9, 16)).isGreaterThan(base);
    assertThat(KvCapacity.totalBlocks(m, GpuCatalog.byName("L40S"), 1, 0.9, 16)).isLessThan(base);
    // doubling the block size halves the count (within rounding)
    assertThat(KvCapacity.totalBlocks(m, h100, 1, 0.9, 32)).isBetween(base / 2 - 1, base / 2);
  }

  @Test
  void aModelThatDoesNotFitNamesTheMinimumTp() {
    var m = ModelCatalog.byName("meta-llama/Llama-2-70b-hf");
    assertThatThrownBy(() -> KvCapacity.totalBlocks(m, GpuCatalog.byName("H100"), 1, 0.9, 16))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("does not fit on 1 x H100")
        .hasMessageContaining("minimum tensor parallelism that fits is 2");
    assertThatThrownBy(() -> KvCapacity.totalBlocks(m, GpuCatalog.byName("L40S"), 2, 0.9, 16))
        .hasMessageContaining("minimum tensor parallelism that fits is 4");
  }

  @Test
  void deepSeekV2LiteOnOneH100ByHand() {
    var m = ModelCatalog.byName("deepseek-ai/DeepSeek-V2-Lite");
    var h100 = GpuCatalog.byName("H100");
    // budget   = 79.19 GiB = 85,029,615,042 bytes x 0.9            = 76,526,653,537.8
    // weights  = 15,706,484,224 params x 2 bytes (bf16) / TP 1     = 31,412,968,448
    // overhead = 0.60 GiB (MoE activation) + 0.15 GiB x 1 (runtime) =    805,306,368
    // block    = 27 layers x (512 + 64) latent x 2 bytes x 16 tokens =        497,664
    // blocks   = floor(44,308,378,721.8 / 497,664) = floor(89,032.7)
    assertThat(h100.memoryBytes()).isEqualTo(85_029_615_042L);
    assertThat(KvCapacity.totalBlocks(m, h100, 1, 0.9, 16)).isEqualTo(89_032);
    // at TP 2 the weights halve but the latent does not: every GPU keeps all of it, so a block is
    // still 497,664 bytes per GPU; and the latent down-projection (2048 x 576 + norm 512 per layer,
    // 27 layers = 31,864,320 params) is whole on both GPUs: half of it, 31,864,320 bytes, more per GPU:
    // floor((76,526,653,537.8 - 15,706,484,224 - 31,864,320 - 0.60 GiB - 2 x 0.15 GiB) / 497,664)
    // = floor(120,205.5)
    assertThat(ModelSizes.kvBytesPerTokenPerGpu(m, 2))
        .isEqualTo(ModelSizes.kvBytesPerTokenPerGpu(m, 1))
        .isEqualTo(27 * 576 * 2);
    assertThat(KvCapacity.totalBlocks(m, h100, 2, 0.9, 16)).isEqualTo(120_205);
  }

  @Test
  void rejectsBadArguments() {
    var m = ModelCatalog.byName("meta-llama/Llama-2-7b-hf");
    var h = GpuCatalog.byName("H100");
    assertThatThrownBy(() -> KvCapacity.totalBlocks(m, h, 3, 0.9, 16))
        .hasMessageContaining("num_attention_heads (32) is not divisible by tensor parallelism 3");
    assertThatThrownBy(() -> KvCapacity.totalBlocks(m, h, 0, 0.9, 16)).hasMessageContaining(">= 1");
    assertThatThrownBy(() -> KvCapacity.totalBlocks(m, h, 1, 1.5, 16))
        .hasMessageContaining("gpu-memory-utilization");
    assertThatThrownBy(() -> KvCapacity.totalBlocks(m, h, 1, 0.9, 0)).hasMessageContaining("block size");
  }
}
