package io.blis.kvcache;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Blocks a hybrid model's request holds besides its tokens': states and sliding windows. */
class ResidentBlocksTest {

  private static BlockTable table(KvBlockPool pool, int promptTokens, int id) {
    int[] prompt = new int[promptTokens];
    for (int i = 0; i < promptTokens; i++) {
      prompt[i] = id * 100_000 + i;
    }
    return pool.newTable(prompt, promptTokens + 16);
  }

  @Test
  void aRecurrentStateTakesItsBlocksAtAdmissionAndGivesThemBackWhenFreed() {
    KvBlockPool pool = new KvBlockPool(20, 4, 0, OffloadTiers.NONE, new ResidentBlocks(3, 0, 0));
    BlockTable t = table(pool, 8, 1);
    assertThat(pool.admit(t, 0, 8)).isTrue();
    assertThat(t.numBlocks()).isEqualTo(2);
    assertThat(t.residentBlocks()).isEqualTo(3);
    assertThat(pool.usedBlocks()).isEqualTo(5);
    assertThat(pool.grow(t, 12)).isTrue();
    assertThat(t.residentBlocks()).as("a state does not grow with the tokens").isEqualTo(3);
    pool.free(t);
    assertThat(pool.usedBlocks()).isZero();
  }

  @Test
  void admissionFailsWhenTheStateDoesNotFit() {
    KvBlockPool pool = new KvBlockPool(4, 4, 0, OffloadTiers.NONE, new ResidentBlocks(3, 0, 0));
    assertThat(pool.admit(table(pool, 8, 1), 0, 8)).as("2 token blocks + 3 state blocks > 4").isFalse();
    assertThat(pool.usedBlocks()).isZero();
  }

  @Test
  void slidingGroupsHoldAtMostTheWindowsBlocks() {
    // two sliding groups, a window of 3 blocks: they follow the tokens' blocks up to 3 each
    KvBlockPool pool = new KvBlockPool(100, 4, 0, OffloadTiers.NONE, new ResidentBlocks(0, 2, 3));
    BlockTable t = table(pool, 8, 1);
    assertThat(pool.admit(t, 0, 8)).isTrue();
    assertThat(t.residentBlocks()).isEqualTo(4);
    assertThat(pool.grow(t, 16)).isTrue();
    assertThat(t.residentBlocks()).isEqualTo(6);
    assertThat(pool.grow(t, 40)).isTrue();
    assertThat(t.residentBlocks()).as("capped at the window").isEqualTo(6);
    assertThat(pool.usedBlocks()).isEqualTo(10 + 6);
  }

  @Test
  void aCachedPromptIsReusedWhileTheStateTakesBlocksOfItsOwn() {
    KvBlockPool pool = new KvBlockPool(30, 4, 0, OffloadTiers.NONE, new ResidentBlocks(2, 0, 0));
    BlockTable a = table(pool, 8, 7);
    assertThat(pool.admit(a, 0, 8)).isTrue();
    int firstPromptBlock = a.blockId(0);
    pool.free(a);
    BlockTable b = table(pool, 8, 7);
    assertThat(pool.cachedPrefixBlocks(b)).as("the two prompt blocks are cached, not the state").isEqualTo(2);
    assertThat(pool.admit(b, 1, 8)).isTrue(); // the last prompt token is recomputed, as the engine admits
    assertThat(b.blockId(0)).as("the cached prompt block is claimed again").isEqualTo(firstPromptBlock);
    assertThat(b.numBlocks()).isEqualTo(2);
    assertThat(b.residentBlocks()).isEqualTo(2);
    for (int k = 0; k < b.numResident; k++) {
      assertThat(b.residentIds[k]).as("a state block is never a prompt block").isNotEqualTo(b.blockId(0))
          .isNotEqualTo(b.blockId(1));
    }
    assertThat(pool.usedBlocks()).isEqualTo(4);
  }
}
