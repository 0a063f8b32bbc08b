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
  void slidingGroupsHoldTheWindowPlusTheStepsTokensAndDropWhatFellBehind() {
    // two sliding groups, a window of 3 blocks of 4 tokens (up to 9 tokens)
    KvBlockPool pool = new KvBlockPool(100, 4, 0, OffloadTiers.NONE, new ResidentBlocks(0, 2, 3));
    BlockTable t = table(pool, 8, 1);
    assertThat(pool.admit(t, 0, 8)).isTrue();
    assertThat(t.residentBlocks()).as("the chunk's 2 blocks in each group").isEqualTo(4);
    assertThat(pool.grow(t, 16)).isTrue();
    assertThat(t.residentBlocks()).as("positions 0-15: 4 blocks each").isEqualTo(8);
    assertThat(pool.grow(t, 40)).isTrue();
    assertThat(t.residentBlocks()).as("the window before the chunk (8-15) and the chunk (16-39): 8 each")
        .isEqualTo(16);
    assertThat(pool.usedBlocks()).isEqualTo(10 + 16);
    assertThat(pool.grow(t, 41)).isTrue();
    assertThat(t.residentBlocks()).as("a decode step: the window's 3 blocks each, the rest freed").isEqualTo(6);
    assertThat(pool.usedBlocks()).isEqualTo(11 + 6);
    assertThat(pool.grow(t, 42)).isTrue();
    assertThat(t.residentBlocks()).isEqualTo(6);
  }

  @Test
  void blocksThatFellBehindTheWindowPayForTheNextStepAndARefusedStepChangesNothing() {
    // one sliding group, a window of 3 blocks of 4 tokens, a pool of 8 blocks
    KvBlockPool pool = new KvBlockPool(8, 4, 0, OffloadTiers.NONE, new ResidentBlocks(0, 1, 3));
    BlockTable t = table(pool, 16, 8);
    assertThat(pool.admit(t, 0, 16)).isTrue(); // 4 token blocks and the chunk's 4 window blocks
    assertThat(pool.freeBlocks()).isZero();
    // the next token needs a fifth token block; the window's first block fell behind and pays for it
    assertThat(pool.grow(t, 17)).isTrue();
    assertThat(t.numBlocks()).isEqualTo(5);
    assertThat(t.residentBlocks()).isEqualTo(3);
    assertThat(pool.freeBlocks()).isZero();
    // a chunk of 8 more needs 2 token blocks and 1 more window block: refused, nothing changes
    assertThat(pool.grow(t, 25)).isFalse();
    assertThat(t.numBlocks()).isEqualTo(5);
    assertThat(t.residentBlocks()).isEqualTo(3);
    assertThat(pool.usedBlocks()).isEqualTo(8);
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
