package io.blis.bench;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class KvCacheBenchmarkTest {

  private static KvCacheBenchmark fresh() {
    KvCacheBenchmark b = new KvCacheBenchmark();
    b.setUp();
    return b;
  }

  @Test
  void poolIsRealisticAndPartlyHeldByRunningRequests() {
    KvCacheBenchmark b = fresh();
    assertThat(b.pool.totalBlocks()).isEqualTo(7462);
    assertThat(b.pool.blockSizeTokens()).isEqualTo(16);
    // 96 requests holding between 37 (592 tokens) and 64 (1024 tokens) blocks each
    assertThat(b.pool.usedBlocks()).isBetween(96 * 37 + 1, 96 * 64 - 1);
    assertThat(b.pool.freeBlocks()).isGreaterThan(2 * 37);
  }

  @Test
  void admissionsHitExactlyTheSharedPrefixAndReturnEveryBlock() {
    KvCacheBenchmark b = fresh();
    int used = b.pool.usedBlocks();
    // more rounds than distinct prompts: a returning prompt's own blocks were evicted meanwhile
    for (int i = 0; i < 3 * KvCacheBenchmark.DISTINCT_PROMPTS; i++) {
      assertThat(b.admitAndFree()).as("call %d", i).isEqualTo(100 / 16);
      assertThat(b.pool.usedBlocks()).isEqualTo(used);
    }
    assertThat(b.pool.hitTokens()).isGreaterThan(0);
  }

  @Test
  void decodeGrowthAddsABlockEverySixteenTokensPerRequestAndWrapsAround() {
    KvCacheBenchmark b = fresh();
    int[] max = new int[1];
    // 96 requests x 600 calls each: every request passes 1024 tokens and is readmitted once
    for (int i = 0; i < KvCacheBenchmark.RUNNING * 600; i++) {
      int blocks = b.growByOneDecodeToken();
      assertThat(blocks).isBetween(37, 64);
      max[0] = Math.max(max[0], blocks);
      assertThat(b.pool.usedBlocks() + b.pool.freeBlocks()).isEqualTo(7462);
    }
    assertThat(max[0]).isEqualTo(1024 / 16);
    assertThat(b.pool.peakUsedBlocks()).isLessThanOrEqualTo(KvCacheBenchmark.RUNNING * 64);
  }

  @Test
  void prefixLookupSeesTheSharedSystemPrompt() {
    KvCacheBenchmark b = fresh();
    for (int i = 0; i < 10; i++) {
      assertThat(b.cachedPrefixLookup()).isEqualTo(6);
    }
  }
}
