package io.blis.latency.physics;

import static io.blis.latency.Fixtures.decode;
import static io.blis.latency.Fixtures.prefill;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.blis.latency.Fixtures.Batch;
import io.blis.latency.catalog.GpuSpec;
import io.blis.latency.catalog.ModelConfig;
import io.blis.latency.layout.Collectives;
import io.blis.latency.layout.Layout;
import org.junit.jupiter.api.Test;

/**
 * Expert, data and pipeline parallelism in the step basis, hand-computed for a tiny MoE model on
 * a GPU with round numbers: 4 GPUs per node, 100 bytes/us within a node and 10 between nodes, 1 us
 * and 5 us per transfer.
 */
class LayoutPhysicsTest {

  /** 4 layers (all MoE), d 64, 4 heads, 4 KV heads, head_dim 16, 16 experts of width 32, top-2. */
  static final ModelConfig MOE =
      new ModelConfig("tiny-moe", 4, 64, 4, 4, 16, 128, 1000, 0, 2, 2.0, false, 16, 2, 32, 0, 4, true);

  static final GpuSpec ROUND =
      new GpuSpec("round", 1e12, 0, 1e9, 1L << 34, 1e8, 4, 1e7, 1e-6, 5e-6);

  static final double EPS = 1e-9;

  @Test
  void allToAllBytesOfOneMoeLayerMatchTheHandComputedVolume() {
    // DeepSeek-V3-like: 256 tokens on one GPU, top-8, hidden 7168, bf16, EP 16:
    // 256 x 8 x 7168 x 2 x 15/16 = 27,525,120 bytes leave the GPU to dispatch, as many to combine
    assertThat(Collectives.allToAllBytes(256, 8, 7168, 2, 16)).isEqualTo(27_525_120.0);
    assertThat(Collectives.allToAllBytes(256, 8, 7168, 2, 1)).isZero();
    // ring all-reduce of 1 MB over 8 GPUs: 2 x 7/8 MB
    assertThat(Collectives.ringAllReduceBytes(1e6, 8)).isEqualTo(1.75e6);
  }

  @Test
  void pipelineBubbleShrinksWithBatchesInFlight() {
    assertThat(Collectives.pipelineBubble(4, 1)).isEqualTo(0.75);
    assertThat(Collectives.pipelineBubble(4, 4)).isCloseTo(3.0 / 7, within(EPS));
    assertThat(Collectives.pipelineBubble(2, 2)).isCloseTo(1.0 / 3, within(EPS));
    assertThat(Collectives.pipelineBubble(1, 1)).isZero();
    double last = 1;
    for (int m = 1; m <= 16; m++) {
      double b = Collectives.pipelineBubble(4, m);
      assertThat(b).isLessThan(last);
      last = b;
    }
    assertThatThrownBy(() -> Collectives.pipelineBubble(0, 1)).hasMessageContaining("at least 1");
  }

  @Test
  void expertParallelDispatchAndCombineCostTheirBytesAndLatency() {
    // tp 1, dp 4, ep 4: one node of 4 GPUs
    StepBasis b = new StepBasis(MOE, ROUND, new Layout(1, 1, 4, 4), false);
    b.compute(Batch.of(decode(5, 10), decode(5, 10)));
    // per MoE layer: dispatch + combine of 2 tokens x k 2 x 64 x 2 bytes x 3/4 = 384 bytes each way;
    // 4 MoE layers -> 3072 bytes at 100 bytes/us
    assertThat(b.moeCommUs).isCloseTo(4 * 2 * 384 / 100.0, within(EPS));
    // two transfers per MoE layer, 1 us each
    assertThat(b.commLatencyUs).isCloseTo(8.0, within(EPS));
    assertThat(b.tpCommUs).isZero();
    assertThat(b.ppCommUs).isZero();
  }

  @Test
  void expertParallelismBeyondANodeCrossesTheSlowerNetwork() {
    StepBasis inNode = new StepBasis(MOE, ROUND, new Layout(1, 1, 4, 4), false);
    StepBasis twoNodes = new StepBasis(MOE, ROUND, new Layout(1, 1, 8, 8), false);
    Batch same = Batch.of(decode(5, 10), decode(5, 10));
    inNode.compute(same);
    twoNodes.compute(same);
    // ep 8 over 2 nodes of 4: of the 7 peers 4 are remote -> 4/7 of the bytes at 10 bytes/us
    double bytes = 4 * 2 * (2 * 2 * 64 * 2 * 7 / 8.0);
    assertThat(twoNodes.moeCommUs).isCloseTo(Math.max(bytes * 3 / 7 / 100, bytes * 4 / 7 / 10), within(EPS));
    assertThat(twoNodes.moeCommUs).isGreaterThan(inNode.moeCommUs);
    assertThat(twoNodes.commLatencyUs).isCloseTo(8 * 5.0, within(EPS));
  }

  @Test
  void moreExpertParallelismLowersExpertWorkPerGpuAtTheSameLoad() {
    // the same 64 tokens over the group: 32 per rank at dp 2, 16 per rank at dp 4
    StepBasis ep2 = new StepBasis(MOE, ROUND, new Layout(1, 1, 2, 2), false);
    StepBasis ep4 = new StepBasis(MOE, ROUND, new Layout(1, 1, 4, 4), false);
    ep2.compute(Batch.of(prefill(32, 0, 32)));
    ep4.compute(Batch.of(prefill(16, 0, 16)));
    // every expert is hit by 64 tokens either way; each GPU holds 16/2 or 16/4 of them
    assertThat(ep4.expertWeightLoadUs).isCloseTo(ep2.expertWeightLoadUs / 2, within(1e-6));
    assertThat(ep4.prefillComputeUs).isLessThan(ep2.prefillComputeUs);
    // one expert = 3 x 64 x 32 params x 2 bytes; 4 layers x 16 experts x (1 - (14/16)^64) / ep
    double expert = 3 * 64 * 32 * 2.0;
    double hit = 16 * (1 - Math.pow(14.0 / 16, 64));
    assertThat(ep2.expertWeightLoadUs).isCloseTo(4 * hit * expert / 2 / 1e3, within(1e-9));
  }

  @Test
  void dataParallelWithoutExpertParallelismGathersTheOtherRanksTokens() {
    StepBasis b = new StepBasis(MOE, ROUND, new Layout(1, 1, 2, 1), false);
    b.compute(Batch.of(decode(5, 10)));
    // all-gather + reduce-scatter of the other rank's 1 token: 2 x 1 x 64 x 2 bytes per MoE layer
    assertThat(b.moeCommUs).isCloseTo(4 * 2 * 64 * 2 / 100.0, within(EPS));
  }

  @Test
  void pipelineStagesHandOverHiddenStatesAndPayForNodeBoundaries() {
    ModelConfig dense =
        new ModelConfig("tiny", 4, 64, 4, 4, 16, 128, 1000, 0, 2, 2.0, false, 0, 0, 128, 0, 0, true);
    StepBasis one = new StepBasis(dense, ROUND, new Layout(2, 1, 1, 1), false);
    StepBasis pp2 = new StepBasis(dense, ROUND, new Layout(2, 2, 1, 1), false);
    StepBasis pp4 = new StepBasis(dense, ROUND, new Layout(2, 4, 1, 1), false);
    Batch batch = Batch.of(decode(5, 10), decode(5, 10), decode(5, 10));
    one.compute(batch);
    pp2.compute(batch);
    pp4.compute(batch);
    // the stages together do the model's work: compute and weights as without pipelining
    assertThat(pp2.decodeComputeUs).isCloseTo(one.decodeComputeUs, within(EPS));
    assertThat(pp2.weightLoadUs).isCloseTo(one.weightLoadUs, within(EPS));
    // one boundary inside the node: 2 x 3 tokens x 64 x 2 bytes / tp 2 = 384 bytes at 100 bytes/us
    assertThat(pp2.ppCommUs).isCloseTo(3.84, within(EPS));
    assertThat(pp2.commLatencyUs).isCloseTo(1.0, within(EPS));
    // tp 2 x pp 4 on nodes of 4: the boundary after stage 2 starts a node -> 2 local, 1 remote
    assertThat(new Layout(2, 4, 1, 1).stageBoundariesCrossingNodes(ROUND)).isEqualTo(1);
    assertThat(pp4.ppCommUs).isCloseTo(2 * 3.84 + 384 / 10.0, within(EPS));
    assertThat(pp4.commLatencyUs).isCloseTo(2 * 1.0 + 5.0, within(EPS));
  }

  @Test
  void tensorParallelismWiderThanANodeAllReducesOverTheNetwork() {
    ModelConfig wide =
        new ModelConfig("wide", 2, 64, 8, 8, 8, 128, 1000, 0, 2, 2.0, false, 0, 0, 128, 0, 0, true);
    StepBasis tp4 = new StepBasis(wide, ROUND, Layout.tensorParallel(4), false);
    StepBasis tp8 = new StepBasis(wide, ROUND, Layout.tensorParallel(8), false);
    Batch one = Batch.of(decode(5, 10));
    tp4.compute(one);
    tp8.compute(one);
    // 2 all-reduces x 2 layers x 64 x 2 bytes x 2 (n-1)/n
    assertThat(tp4.tpCommUs).isCloseTo(4 * 128 * 1.5 / 100, within(EPS));
    assertThat(tp8.tpCommUs).isCloseTo(4 * 128 * 1.75 / 10, within(EPS));
  }

  /** 2 layers, d 64, 4 heads; MLA with kv_lora_rank 16, nope 8, rope 4, v 8, no q_lora; dense FFN 128. */
  static final ModelConfig MLA = new ModelConfig("tiny-mla", 2, 64, 4, 4, 12, 128, 1000, 0, 2, 2.0, false,
      0, 0, 128, 0, 0, true, false, "deepseek_v2", new ModelConfig.Mla(16, 0, 8, 4, 8));

  @Test
  void latentAttentionPrefillsUnabsorbedAndDecodesInTheLatent() {
    StepBasis b = new StepBasis(MLA, ROUND, Layout.tensorParallel(1), false);
    b.compute(Batch.of(prefill(100, 20, 10), decode(5, 30)));
    // attention params per layer: query 64*4*12 = 3072, latent down 64*(16+4) = 1280, its norm 16,
    // latent up 16*4*(8+8) = 1024, output 4*8*64 = 2048 -> 7440; FFN 3*64*128 = 24576
    // linear per token 2 * 2 * (7440 + 24576) = 128064; LM head 2 * 64 * 1000 = 128000
    // prefill pair 2 * 2 layers * 4 heads * (8 + 4 + 8) = 320; 10 tokens at 20: 200 + 55 pairs;
    // context up-projection 2 * 2 * 1024 = 4096 per context token
    assertThat(b.prefillComputeUs)
        .isCloseTo((10 * 128064 + 255 * 320 + 128000 + 20 * 4096) / 1e6, within(EPS));
    // decode pair (absorbed) 2 * 2 * 4 * (2 * 16 + 4) = 576; 31 pairs
    assertThat(b.decodeComputeUs).isCloseTo((128064 + 31 * 576 + 128000) / 1e6, within(EPS));
    // KV: one latent of 16 + 4 elements per layer: 2 * 20 * 2 = 80 bytes per token
    assertThat(b.prefillMemoryUs).isCloseTo(30 * 80 / 1e3, within(EPS));
    assertThat(b.decodeMemoryUs).isCloseTo(31 * 80 / 1e3, within(EPS));
    // TP 2: heads and the up-projections split, the latent read whole on every GPU
    StepBasis tp2 = new StepBasis(MLA, ROUND, Layout.tensorParallel(2), false);
    tp2.compute(Batch.of(prefill(100, 20, 10), decode(5, 30)));
    assertThat(tp2.decodeMemoryUs).isCloseTo(b.decodeMemoryUs, within(EPS));
    // replicated 64*20 + 16 = 1296 per layer counts on each GPU: 2 * 2 * (1296 + 6144 / 2 + 24576 / 2)
    double linear2 = 2 * 2 * (1296 + 6144 / 2.0 + 24576 / 2.0);
    assertThat(tp2.decodeComputeUs).isCloseTo((linear2 + 31 * 576 / 2.0 + 64000) / 1e6, within(EPS));
  }

  @Test
  void layoutsVllmCannotServeAreRefused() {
    assertThatThrownBy(() -> new Layout(2, 1, 2, 2)).hasMessageContaining("ep must be 1 or 4");
    assertThatThrownBy(() -> new Layout(1, 5, 1, 1).check(MOE)).hasMessageContaining("exceeds the 4 layers");
    ModelConfig dense =
        new ModelConfig("tiny", 4, 64, 4, 4, 16, 128, 1000, 0, 2, 2.0, false, 0, 0, 128, 0, 0, true);
    assertThatThrownBy(() -> new Layout(1, 1, 2, 2).check(dense)).hasMessageContaining("dense");
    assertThatThrownBy(() -> new Layout(3, 1, 1, 3).check(MOE)).hasMessageContaining("divisible");
    assertThatThrownBy(() -> new Layout(1, 1, 0, 1)).hasMessageContaining("data parallelism must be >= 1");
    assertThat(new Layout(8, 2, 2, 16)).hasToString("tp8 pp2 dp2 ep16");
    assertThat(new Layout(8, 2, 2, 16).gpus()).isEqualTo(32);
  }
}
