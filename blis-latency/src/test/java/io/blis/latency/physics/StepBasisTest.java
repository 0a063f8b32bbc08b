package io.blis.latency.physics;

import static io.blis.latency.Fixtures.decode;
import static io.blis.latency.Fixtures.prefill;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.blis.latency.Fixtures.Batch;
import io.blis.latency.catalog.GpuSpec;
import io.blis.latency.catalog.ModelCatalog;
import io.blis.latency.catalog.ModelConfig;
import org.junit.jupiter.api.Test;

/** Basis terms hand-computed for a tiny model on a GPU with round numbers. */
class StepBasisTest {

  /** 2 layers, d 64, 4 heads, 2 KV heads, head_dim 16, FFN 128 (gated), vocab 1000, 16-bit. */
  static final ModelConfig TINY =
      new ModelConfig("tiny", 2, 64, 4, 2, 16, 128, 1000, 2048, 2, 2.0, false, 0, 0, 128, 0, 0, true);

  /** 1e6 FLOP/us, 1e3 bytes/us HBM, 100 bytes/us link. */
  static final GpuSpec ROUND = new GpuSpec("round", 1e12, 0, 1e9, 1L << 34, 1e8);

  static final double EPS = 1e-9;

  @Test
  void tinyModelTpOneMatchesHandComputedTerms() {
    StepBasis b = new StepBasis(TINY, ROUND, 1);
    // prefill chunk of 10 fresh tokens + one decode at context 20
    b.compute(Batch.of(prefill(10, 0, 10), decode(5, 20)));
    // linear FLOPs per token: 2 * (2 layers * (attn 64*(2*64+2*32)=12288 + FFN 3*64*128=24576))
    //   = 147456; attention 4 * 2 layers * 4 heads * 16 = 512 per pair; LM head 2*64*1000 = 128000
    // prefill: 10*147456 + (0 + 10*11/2 = 55 pairs)*512 + 128000 = 1630720 FLOP -> 1.63072 us
    assertThat(b.prefillComputeUs).isCloseTo(1.63072, within(EPS));
    // decode: 147456 + (20 + 1 = 21 pairs)*512 + 128000 = 286208 FLOP
    assertThat(b.decodeComputeUs).isCloseTo(0.286208, within(EPS));
    // KV bytes per token: 2 * 2 layers * 2 heads * 16 * 2 bytes = 256
    assertThat(b.prefillMemoryUs).isCloseTo(10 * 256 / 1e3, within(EPS));
    assertThat(b.decodeMemoryUs).isCloseTo(21 * 256 / 1e3, within(EPS));
    // weights: 2 bytes * (2*(12288+24576) + LM head 64000 + norms 2*2*64 + 64) = 276096 bytes
    assertThat(b.weightLoadUs).isCloseTo(276.096, within(EPS));
    assertThat(b.expertWeightLoadUs).isZero();
    assertThat(b.tpCommUs).isZero();
    assertThat(b.moeRoutingUs).isZero();
    assertThat(b.requests).isEqualTo(2);
    assertThat(b.tokens).isEqualTo(11);
  }

  @Test
  void tinyModelTpTwoSplitsWorkAndAddsAllReduces() {
    StepBasis b = new StepBasis(TINY, ROUND, 2);
    b.compute(Batch.of(prefill(10, 0, 10), decode(5, 20)));
    assertThat(b.prefillComputeUs).isCloseTo(1.63072 / 2, within(EPS));
    assertThat(b.decodeMemoryUs).isCloseTo(21 * 128 / 1e3, within(EPS));
    // weights split, norms replicated: 2 * ((73728 + 64000) / 2 + 320)
    assertThat(b.weightLoadUs).isCloseTo(2 * (137728 / 2.0 + 320) / 1e3, within(EPS));
    // 2 all-reduces x 2 layers x 11 tokens x 64 x 2 bytes x 2(2-1)/2, over 100 bytes/us
    assertThat(b.tpCommUs).isCloseTo(4 * 11 * 128 / 100.0, within(EPS));
    assertThat(b.allReducesPerStep).isEqualTo(4);
  }

  @Test
  void attentionUsesTheProgressIndexOfEachChunk() {
    StepBasis b = new StepBasis(TINY, ROUND, 1);
    b.compute(Batch.of(prefill(100, 0, 10)));
    double first = b.prefillComputeUs;
    b.compute(Batch.of(prefill(100, 90, 10)));
    // same 10 tokens, 90 more keys each: 900 more pairs of 512 FLOP
    assertThat(b.prefillComputeUs - first).isCloseTo(900 * 512 / 1e6, within(EPS));
    assertThat(b.prefillMemoryUs).isCloseTo(100 * 256 / 1e3, within(EPS));
  }

  @Test
  void moeLoadsTheExpectedNumberOfDistinctExperts() {
    ModelConfig moe =
        new ModelConfig("tiny-moe", 2, 64, 4, 2, 16, 128, 1000, 0, 2, 2.0, false, 8, 2, 32, 0, 2,
            true);
    StepBasis b = new StepBasis(moe, ROUND, 1);
    double expertUs = 2.0 * 3 * 64 * 32 / 1e3; // bytes of one expert / (1e3 bytes/us)
    b.compute(Batch.of(decode(5, 5)));
    // one token hits exactly k = 2 experts in each of the 2 MoE layers
    assertThat(b.expertWeightLoadUs).isCloseTo(2 * 2 * expertUs, within(1e-9));
    Batch three = Batch.of(decode(5, 5), decode(5, 5), decode(5, 5));
    b.compute(three);
    double distinct = 8 * (1 - Math.pow(6.0 / 8, 3));
    assertThat(b.expertWeightLoadUs).isCloseTo(2 * distinct * expertUs, within(1e-9));
    b.compute(Batch.of(prefill(500, 0, 500)));
    assertThat(b.expertWeightLoadUs).isCloseTo(2 * 8 * expertUs, within(1e-6));
    // routing: 2 MoE layers x 500 tokens x 4 x k=2 x 64 x 2 bytes
    assertThat(b.moeRoutingUs).isCloseTo(2 * 500 * 4 * 2 * 64 * 2 / 1e3, within(1e-9));
  }

  @Test
  void fp8WeightsUseTheFp8PeakWhenTheGpuHasIt() {
    ModelConfig fp8 =
        new ModelConfig("tiny-fp8", 2, 64, 4, 2, 16, 128, 1000, 0, 2, 1.0, false, 0, 0, 128, 0, 0,
            true);
    GpuSpec withFp8 = new GpuSpec("fp8", 1e12, 2e12, 1e9, 1L << 34, 1e8);
    StepBasis b = new StepBasis(fp8, withFp8, 1);
    b.compute(Batch.of(prefill(10, 0, 10)));
    assertThat(b.prefillComputeUs).isCloseTo(1.63072 / 2, within(EPS));
  }

  @Test
  void headsMustSplitOverTp() {
    assertThatThrownBy(() -> new StepBasis(TINY, ROUND, 3))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("tiny: num_attention_heads (4) is not divisible by tensor parallelism 3");
    ModelConfig kv3 =
        new ModelConfig("kv3", 2, 96, 6, 3, 16, 128, 1000, 0, 2, 2.0, false, 0, 0, 128, 0, 0, true);
    assertThatThrownBy(() -> new StepBasis(kv3, ROUND, 2))
        .hasMessageContaining("num_key_value_heads (3) and tensor parallelism 2");
    // 8 KV heads on TP 16 is allowed (replicated KV heads), heads 64 split fine
    new StepBasis(ModelCatalog.byName("llama-2-70b"), ROUND, 16);
  }

  @Test
  void aWindowedLayerSeesAtMostItsWindow() {
    // all inside the window: the causal pairs of full attention
    org.assertj.core.api.Assertions.assertThat(StepBasis.windowPairs(3, 4, 128)).isEqualTo(4 * 3 + 4 * 5 / 2);
    // a decode token deep in a long context sees the window
    org.assertj.core.api.Assertions.assertThat(StepBasis.windowPairs(32_000, 1, 128)).isEqualTo(128);
    // a prefill chunk crossing the window's edge: positions 6..9 see 6, 7, 8, 8
    org.assertj.core.api.Assertions.assertThat(StepBasis.windowPairs(5, 4, 8)).isEqualTo(6 + 7 + 8 + 8);
    // brute force over a range
    for (long s = 0; s < 40; s++) {
      for (long t = 1; t < 40; t++) {
        long sum = 0;
        for (long x = s + 1; x <= s + t; x++) {
          sum += Math.min(16, x);
        }
        org.assertj.core.api.Assertions.assertThat(StepBasis.windowPairs(s, t, 16)).as("s=%d t=%d", s, t).isEqualTo(sum);
      }
    }
  }
}
