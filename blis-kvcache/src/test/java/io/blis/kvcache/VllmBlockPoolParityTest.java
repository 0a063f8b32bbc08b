package io.blis.kvcache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * The scenarios of vLLM's {@code tests/v1/core/test_block_pool.py} (commit 2cb4ff11e1ee) that the
 * block pool can express. vLLM's tests there are about its null block (block 0, taken lazily on
 * first use and never counted as usage); this pool has no null block, so a vLLM pool of {@code N}
 * blocks whose null block is taken is a pool of {@code N - 1} blocks here.
 */
class VllmBlockPoolParityTest {

  /** The fraction of usable blocks in use, as vLLM's {@code get_usage} computes it. */
  private static double usage(KvBlockPool pool) {
    return pool.usedBlocks() / (double) pool.totalBlocks();
  }

  /**
   * vLLM {@code
   * tests/v1/core/test_block_pool.py::TestBlockPoolLazyNullBlock::test_null_block_not_allocated_initially}
   * (the free count; the null block is not modelled): a new pool of four blocks has all four free.
   */
  @Test
  void newPoolHasEveryBlockFree() {
    KvBlockPool pool = new KvBlockPool(4, 16);
    assertThat(pool.freeBlocks()).isEqualTo(4);
    assertThat(pool.usedBlocks()).isZero();
    assertThat(pool.freeListOrder()).containsExactly(0, 1, 2, 3);
  }

  /**
   * vLLM {@code
   * tests/v1/core/test_block_pool.py::TestBlockPoolLazyNullBlock::test_get_usage_with_lazy_null_block}:
   * usage is 0 with nothing allocated and, with the null block taken out of a pool of four (three
   * usable blocks here), two allocated blocks are a usage of 2/3.
   */
  @Test
  void usageCountsOnlyUsableBlocks() {
    KvBlockPool pool = new KvBlockPool(3, 16);
    assertThat(usage(pool)).isZero();
    BlockTable t = pool.newTable(IntStream.range(0, 32).toArray(), 32);
    assertThat(pool.admit(t, 0, 32)).isTrue();
    assertThat(t.numBlocks()).isEqualTo(2);
    assertThat(pool.freeBlocks()).isEqualTo(1);
    assertThat(usage(pool)).isCloseTo(2.0 / 3.0, within(1e-12));
  }
}
