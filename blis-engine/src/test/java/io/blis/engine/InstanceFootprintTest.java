package io.blis.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.blis.kvcache.KvFootprint;
import org.junit.jupiter.api.Test;

/** The heap a builder's instances take, computed from their sizes before any is built. */
class InstanceFootprintTest {

  private static final LinearTestModel MODEL = new LinearTestModel(100, 1, 1, 1, 1, 1);

  @Test
  void aBuilderOfInstancesCountsEachOnesPoolAndItsState() {
    InstanceFootprint f = Simulation.builder().latencyModel(MODEL).instances(4096).totalKvBlocks(7462)
        .instanceFootprint();
    long each = KvFootprint.poolBytes(7462, 0) + InstanceFootprint.PER_INSTANCE_BYTES;
    assertThat(each).isEqualTo(479_184 + 49_152);
    assertThat(f).isEqualTo(new InstanceFootprint(4096, 4096 * each, 7462, 7462));
    // about 2.0 GiB: what a 2 GiB heap could not hold (serve --num-instances 4096 ran out of it)
    assertThat(f.bytes()).isBetween(2_100_000_000L, 2_200_000_000L);
  }

  /**
   * Pools: every data-parallel rank and pipeline stage is a scheduler with a pool of its own, the
   * stages sharing the instance's blocks (and CPU tier) equally.
   */
  @Test
  void poolsCountEveryRankAndStage() {
    EngineLimits limits = EngineLimits.defaults();
    InstanceFootprint f = Simulation.builder()
        .addPool(new InstancePool("a", 3, i -> MODEL, limits, 1000, 16, 0, 0))
        .addPool(new InstancePool("b", 2, i -> MODEL, limits, 9000, 16, 300, 1, 2, 3, false))
        .instanceFootprint();
    long a = InstanceFootprint.of(1000, 0);
    long b = InstanceFootprint.of(3000, 100); // 9,000 blocks and 300 CPU blocks over 3 stages
    assertThat(f).isEqualTo(new InstanceFootprint(3 + 2 * 2 * 3, 3 * a + 12 * b, 1000, 3000));
  }
}
