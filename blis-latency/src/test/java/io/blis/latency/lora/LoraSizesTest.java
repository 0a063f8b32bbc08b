package io.blis.latency.lora;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.blis.api.HardwareSpec;
import io.blis.api.ModelSpec;
import io.blis.latency.catalog.GpuCatalog;
import io.blis.latency.catalog.ModelCatalog;
import io.blis.latency.kv.KvCapacity;
import io.blis.latency.layout.Layout;
import java.util.EnumSet;
import org.junit.jupiter.api.Test;

class LoraSizesTest {

  private static final ModelSpec LLAMA_8B = ModelCatalog.resolve("meta-llama/llama-3.1-8b-instruct");
  private static final HardwareSpec H100 = GpuCatalog.resolve("H100");

  @Test
  void slotOfLlama8bByHand() {
    // hidden 4096, 32 query heads and 8 KV heads of 128, FFN 14336, 32 layers; rank 16, bf16.
    // TP 1, per layer: QKV A 3 x 16 x 4096 = 196,608 and B 16 x (4096 + 2 x 1024) = 98,304;
    // O A and B 16 x 4096 = 65,536 each; gate/up A 2 x 16 x 4096 = 131,072 and B 16 x 2 x 14336 =
    // 458,752; down A 16 x 14336 = 229,376 and B 65,536: 1,310,720 a layer, x 32 layers x 2 bytes
    assertThat(LoraSizes.slotBytesPerGpu(LLAMA_8B, 1, 16, 2)).isEqualTo(83_886_080L);
    // TP 2: column-parallel B and row-parallel A halve: 884,736 a layer
    assertThat(LoraSizes.slotBytesPerGpu(LLAMA_8B, 2, 16, 2)).isEqualTo(884_736L * 32 * 2);
    // a checkpoint of rank 8 on q_proj and v_proj: 8 x (4096 + 4096) + 8 x (4096 + 1024) a layer
    assertThat(LoraSizes.adapterBytes(LLAMA_8B, 8,
        EnumSet.of(LoraSizes.Target.Q_PROJ, LoraSizes.Target.V_PROJ), 2)).isEqualTo(106_496L * 32 * 2);
    // a slot holds every module, whatever the adapter targets: 7 modules x A and B x 32 layers
    assertThat(LoraSizes.slotTensors(LLAMA_8B)).isEqualTo(448);
  }

  @Test
  void reservationComesOutOfTheKvCache() {
    Layout tp1 = Layout.tensorParallel(1);
    long without = KvCapacity.totalBlocks(LLAMA_8B, H100, tp1, 0.9, 16);
    long reserved = 4 * LoraSizes.slotBytesPerGpu(LLAMA_8B, 1, 16, 2);
    long with = KvCapacity.totalBlocks(LLAMA_8B, H100, tp1, 0.9, 16, reserved);
    double blockBytes = KvCapacity.blockBytesPerGpu(LLAMA_8B, tp1, 16);
    // 4 slots of 80 MiB are 160 blocks of 2 MiB (16 tokens x 128 KiB)
    assertThat(without - with).isBetween((long) Math.floor(reserved / blockBytes),
        (long) Math.ceil(reserved / blockBytes));
    assertThat(without - with).isEqualTo(160);
    assertThatThrownBy(() -> KvCapacity.totalBlocks(LLAMA_8B, H100, tp1, 0.9, 16, -1))
        .hasMessageContaining("reserved memory must be >= 0");
  }

  @Test
  void stepOverheadIsLaunchBoundAtDecodeAndGrowsWithAdaptersAndTokens() {
    // 32 layers x 4 module groups x 2 launches at the 4 us floor: 1,024 us for small decode batches
    double one = LoraSizes.stepOverheadUs(LLAMA_8B, H100, 1, 32, new int[] {16}, new int[] {8}, 2);
    assertThat(one).isEqualTo(32 * 4 * 2 * LoraSizes.KERNEL_FLOOR_US);
    double many = LoraSizes.stepOverheadUs(LLAMA_8B, H100, 1, 32, new int[] {64, 64, 64, 64, 64, 64, 64, 64},
        new int[] {32, 32, 32, 32, 32, 32, 32, 32}, 2);
    assertThat(many).isGreaterThan(one);
    double prefill = LoraSizes.stepOverheadUs(LLAMA_8B, H100, 1, 32, new int[] {16}, new int[] {8192}, 2);
    assertThat(prefill).isGreaterThan(2 * one);
    assertThat(LoraSizes.stepOverheadUs(LLAMA_8B, H100, 1, 32, new int[0], new int[0], 2)).isZero();
    // half the layers (a pipeline stage): half the time
    assertThat(LoraSizes.stepOverheadUs(LLAMA_8B, H100, 1, 16, new int[] {16}, new int[] {8}, 2)).isEqualTo(one / 2);
  }

  @Test
  void targetsByPeftName() {
    assertThat(LoraSizes.Target.parse("gate_proj")).isEqualTo(LoraSizes.Target.GATE_PROJ);
    assertThatThrownBy(() -> LoraSizes.Target.parse("lm_head")).hasMessageContaining("unknown LoRA target module 'lm_head'");
    assertThatThrownBy(() -> LoraSizes.slotBytesPerGpu(LLAMA_8B, 1, 0, 2)).hasMessageContaining("rank must be >= 1");
  }
}
