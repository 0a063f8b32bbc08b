package io.blis.kvcache;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class KvFootprintTest {

  /** Llama-2-7B on an H100: 7,462 blocks, the arrays KvBlockPool allocates, added up by hand. */
  @Test
  void aPoolOfTheDefaultDeploymentTakesItsArraysBytes() {
    long n = 7462;
    long ints = 16 + n * 4; // 29,864 (8-aligned)
    long longs = 16 + n * 8;
    long booleans = 16 + 7464; // 7,462 rounded up to 8
    long index = 16 + 16_384L * 2 * 8; // 2 x 7,462 - 1 rounded up to a power of two, then doubled: 16,384 slots
    assertThat(KvFootprint.poolBytes(n, 0)).isEqualTo(512 + ints + longs + booleans + 2 * ints + 2 * ints + index)
        .isEqualTo(479_184);
    // a CPU tier adds its own arrays and index
    assertThat(KvFootprint.poolBytes(n, 1000) - KvFootprint.poolBytes(n, 0))
        .isEqualTo(512 + (16 + 2048L * 2 * 8) + (16 + 8000) + (16 + 4000) + (16 + 1000) + 2 * (16 + 4000));
  }

  /** The index's size is the one the map allocates (a few small maps are built to check it). */
  @Test
  void theIndexSizeIsTheMapsOwn() {
    for (int n : new int[] {1, 3, 4, 5, 16, 17, 1000, 7462}) {
      assertThat(LongIntMap.capacityFor(n)).as("%d entries", n).isEqualTo(new LongIntMap(n).capacity());
    }
    assertThat(LongIntMap.capacityFor(1 << 29)).isEqualTo(1 << 29);
  }

  @Test
  void itGrowsWithTheBlocks() {
    assertThat(KvFootprint.poolBytes(200_000, 0)).isGreaterThan(KvFootprint.poolBytes(100_000, 0) * 3 / 2)
        .isBetween(200_000L * 61, 200_000L * 94);
  }
}
