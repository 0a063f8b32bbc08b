package io.blis.kvcache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class KvBlockPoolTest {

  private static int[] tokens(int from, int count) {
    return IntStream.range(from, from + count).toArray();
  }

  private static int[] concat(int[] a, int[] b) {
    int[] out = new int[a.length + b.length];
    System.arraycopy(a, 0, out, 0, a.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  @Test
  void admitAllocatesCeilBlocksAndFreeReturnsThem() {
    KvBlockPool pool = new KvBlockPool(10, 4);
    BlockTable t = pool.newTable(tokens(0, 9), 9);
    assertThat(pool.admit(t, 0, 9)).isTrue();
    assertThat(t.numBlocks()).isEqualTo(3);
    assertThat(pool.usedBlocks()).isEqualTo(3);
    assertThat(pool.freeBlocks()).isEqualTo(7);
    for (int i = 0; i < 3; i++) {
      assertThat(pool.refCount(t.blockId(i))).isEqualTo(1);
    }
    pool.free(t);
    assertThat(pool.usedBlocks()).isZero();
    assertThat(t.numBlocks()).isZero();
  }

  @Test
  void sharedPrefixIsHitAndRefCounted() {
    KvBlockPool pool = new KvBlockPool(20, 4);
    int[] prefix = tokens(100, 8);
    BlockTable a = pool.newTable(concat(prefix, tokens(0, 3)), 11);
    BlockTable b = pool.newTable(concat(prefix, tokens(50, 5)), 13);
    assertThat(pool.admit(a, 0, 11)).isTrue();
    assertThat(pool.cachedPrefixBlocks(b)).isEqualTo(2);
    assertThat(pool.admit(b, 2, 13)).isTrue();
    assertThat(b.blockId(0)).isEqualTo(a.blockId(0));
    assertThat(b.blockId(1)).isEqualTo(a.blockId(1));
    assertThat(b.blockId(2)).isNotEqualTo(a.blockId(2));
    assertThat(pool.refCount(a.blockId(0))).isEqualTo(2);
    assertThat(pool.usedBlocks()).isEqualTo(3 + 2);
    assertThat(pool.hitTokens()).isEqualTo(8);
    assertThat(pool.queriedTokens()).isEqualTo(11 + 13);
    assertThat(pool.hitBlocks()).isEqualTo(2);
    assertThat(pool.queriedBlocks()).isEqualTo(2 + 3);
    pool.free(a);
    assertThat(pool.refCount(b.blockId(0))).isEqualTo(1);
    pool.free(b);
    assertThat(pool.usedBlocks()).isZero();
  }

  @Test
  void freedBlocksStayCachedAndAreClaimedBack() {
    KvBlockPool pool = new KvBlockPool(6, 4);
    int[] prompt = tokens(7, 8);
    BlockTable a = pool.newTable(prompt, 8);
    assertThat(pool.admit(a, 0, 8)).isTrue();
    int first = a.blockId(0);
    pool.free(a);
    BlockTable again = pool.newTable(prompt, 8);
    assertThat(pool.cachedPrefixBlocks(again)).isEqualTo(2);
    assertThat(pool.admit(again, 1, 8)).isTrue();
    assertThat(again.blockId(0)).isEqualTo(first);
    assertThat(pool.freeBlocks()).isEqualTo(4);
  }

  @Test
  void freedBlocksAreReusedLeastRecentlyFreedFirstAndTailFirst() {
    KvBlockPool pool = new KvBlockPool(6, 2);
    BlockTable a = pool.newTable(tokens(0, 4), 4); // blocks 0,1
    BlockTable b = pool.newTable(tokens(10, 4), 4); // blocks 2,3
    assertThat(pool.admit(a, 0, 4)).isTrue();
    assertThat(pool.admit(b, 0, 4)).isTrue();
    assertThat(pool.freeListOrder()).containsExactly(4, 5);
    pool.free(b);
    pool.free(a);
    // b freed first (its last block first), then a (last block first)
    assertThat(pool.freeListOrder()).containsExactly(4, 5, 3, 2, 1, 0);
    BlockTable c = pool.newTable(tokens(20, 8), 8);
    assertThat(pool.admit(c, 0, 8)).isTrue();
    assertThat(new int[] {c.blockId(0), c.blockId(1), c.blockId(2), c.blockId(3)})
        .containsExactly(4, 5, 3, 2);
  }

  @Test
  void reusingAnEvictedBlockDropsItsOldHash() {
    KvBlockPool pool = new KvBlockPool(2, 2);
    int[] oldPrompt = tokens(0, 4);
    BlockTable a = pool.newTable(oldPrompt, 4);
    assertThat(pool.admit(a, 0, 4)).isTrue();
    int tail = a.blockId(1);
    pool.free(a);
    assertThat(pool.cachedPrefixBlocks(pool.newTable(oldPrompt, 4))).isEqualTo(2);
    BlockTable b = pool.newTable(tokens(50, 2), 2);
    assertThat(pool.admit(b, 0, 2)).isTrue(); // takes the least recently freed block: a's tail
    assertThat(b.blockId(0)).isEqualTo(tail);
    // the tail block's hash is gone, the head block is still cached
    assertThat(pool.cachedPrefixBlocks(pool.newTable(oldPrompt, 4))).isEqualTo(1);
    pool.free(b);
    BlockTable c = pool.newTable(tokens(90, 4), 4);
    assertThat(pool.admit(c, 0, 4)).isTrue();
    assertThat(pool.cachedPrefixBlocks(pool.newTable(oldPrompt, 4))).isZero();
  }

  @Test
  void failedAllocationChangesNothing() {
    KvBlockPool pool = new KvBlockPool(4, 4);
    int[] prefix = tokens(0, 8);
    BlockTable a = pool.newTable(prefix, 8);
    assertThat(pool.admit(a, 0, 8)).isTrue();
    pool.free(a);
    BlockTable filler = pool.newTable(tokens(500, 4), 4);
    assertThat(pool.admit(filler, 0, 4)).isTrue();
    int[] freeBefore = pool.freeListOrder();
    long hitsBefore = pool.hitTokens();
    // needs 2 cached (both free) + 2 new = 4 free blocks, only 3 are free
    BlockTable big = pool.newTable(concat(prefix, tokens(9, 8)), 16);
    assertThat(pool.cachedPrefixBlocks(big)).isEqualTo(2);
    assertThat(pool.admit(big, 2, 16)).isFalse();
    assertThat(big.numBlocks()).isZero();
    assertThat(pool.freeListOrder()).containsExactly(freeBefore);
    assertThat(pool.hitTokens()).isEqualTo(hitsBefore);
    assertThat(pool.cachedPrefixBlocks(big)).isEqualTo(2);
    // growing a running table beyond the pool also fails without change
    int blocks = filler.numBlocks();
    assertThat(pool.grow(filler, 4 * 5)).isFalse();
    assertThat(filler.numBlocks()).isEqualTo(blocks);
    assertThat(pool.freeListOrder()).containsExactly(freeBefore);
  }

  @Test
  void growAddsBlocksOnlyAtBlockBoundaries() {
    KvBlockPool pool = new KvBlockPool(8, 4);
    BlockTable t = pool.newTable(tokens(0, 5), 10);
    assertThat(pool.admit(t, 0, 5)).isTrue();
    assertThat(t.numBlocks()).isEqualTo(2);
    assertThat(pool.grow(t, 8)).isTrue();
    assertThat(t.numBlocks()).isEqualTo(2);
    assertThat(pool.grow(t, 9)).isTrue();
    assertThat(t.numBlocks()).isEqualTo(3);
  }

  @Test
  void chunkedPrefillRegistersBlocksAsTheyFill() {
    KvBlockPool pool = new KvBlockPool(8, 4);
    int[] prompt = tokens(0, 12);
    BlockTable t = pool.newTable(prompt, 12);
    assertThat(pool.admit(t, 0, 6)).isTrue(); // first chunk: one full block
    assertThat(pool.cachedPrefixBlocks(pool.newTable(prompt, 12))).isEqualTo(1);
    assertThat(pool.grow(t, 12)).isTrue();
    assertThat(pool.cachedPrefixBlocks(pool.newTable(prompt, 12))).isEqualTo(3);
  }

  @Test
  void badArgumentsAreRejectedWithClearMessages() {
    assertThatThrownBy(() -> new KvBlockPool(0, 16)).hasMessageContaining("total KV blocks");
    assertThatThrownBy(() -> new KvBlockPool(10, 0)).hasMessageContaining("block size");
    KvBlockPool pool = new KvBlockPool(4, 4);
    BlockTable t = pool.newTable(tokens(0, 8), 8);
    assertThatThrownBy(() -> pool.admit(t, 1, 8)).hasMessageContaining("not cached");
  }

  static Stream<Arguments> seeds() {
    return LongStream.rangeClosed(1, 20).mapToObj(Arguments::of);
  }

  /** Random admit/grow/free sequences keep used + free = total and ref counts consistent. */
  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  void randomOperationsConserveBlocks(long seed) {
    SplittableRandom rnd = new SplittableRandom(seed);
    int bs = 1 + rnd.nextInt(8);
    KvBlockPool pool = new KvBlockPool(20 + rnd.nextInt(50), bs);
    int[][] prefixes = {tokens(1000, 3 * bs), tokens(2000, 5 * bs)};
    List<BlockTable> live = new ArrayList<>();
    List<int[]> liveTokens = new ArrayList<>();
    for (int op = 0; op < 500; op++) {
      int kind = rnd.nextInt(3);
      if (kind == 0) {
        int[] prompt = concat(prefixes[rnd.nextInt(2)], tokens(rnd.nextInt(10_000), 1 + rnd.nextInt(4 * bs)));
        BlockTable t = pool.newTable(prompt, prompt.length);
        int cached = Math.min(pool.cachedPrefixBlocks(t), (prompt.length - 1) / bs);
        int total = Math.min(prompt.length, cached * bs + 1 + rnd.nextInt(prompt.length));
        if (pool.admit(t, cached, total)) {
          live.add(t);
          liveTokens.add(new int[] {total});
        }
      } else if (kind == 1 && !live.isEmpty()) {
        int i = rnd.nextInt(live.size());
        int want = liveTokens.get(i)[0] + 1 + rnd.nextInt(2 * bs);
        if (pool.grow(live.get(i), want)) {
          liveTokens.get(i)[0] = want;
        }
      } else if (!live.isEmpty()) {
        int i = rnd.nextInt(live.size());
        pool.free(live.remove(i));
        liveTokens.remove(i);
      }
      int referenced = 0;
      for (int id = 0; id < pool.totalBlocks(); id++) {
        if (pool.refCount(id) > 0) {
          referenced++;
        }
      }
      assertThat(referenced).as("seed %d op %d", seed, op).isEqualTo(pool.usedBlocks());
      assertThat(pool.usedBlocks() + pool.freeBlocks()).isEqualTo(pool.totalBlocks());
      assertThat(pool.freeListOrder()).hasSize(pool.freeBlocks());
      long refs = 0;
      for (BlockTable t : live) {
        refs += t.numBlocks();
      }
      long refSum = 0;
      for (int id = 0; id < pool.totalBlocks(); id++) {
        refSum += pool.refCount(id);
      }
      assertThat(refSum).isEqualTo(refs);
    }
    live.forEach(pool::free);
    assertThat(pool.usedBlocks()).isZero();
  }

  @Test
  void hashesDependOnEveryTokenAndOnTheChain() {
    int[] a = tokens(0, 8);
    int[] b = tokens(0, 8);
    b[5] = 99;
    long[] ha = BlockHashes.ofFullBlocks(a, 4);
    long[] hb = BlockHashes.ofFullBlocks(b, 4);
    assertThat(ha).hasSize(2);
    assertThat(ha[0]).isEqualTo(hb[0]);
    assertThat(ha[1]).isNotEqualTo(hb[1]);
    int[] c = concat(tokens(50, 4), tokens(4, 4)); // same second block, different first
    assertThat(BlockHashes.ofFullBlocks(c, 4)[1]).isNotEqualTo(ha[1]);
    assertThat(BlockHashes.ofFullBlocks(tokens(0, 7), 4)).hasSize(1);
  }

  @Test
  void freshBlocksFirstPutsAFreedBlockWithoutAHashAtTheHead() {
    for (boolean fresh : new boolean[] {false, true}) {
      KvBlockPool pool = new KvBlockPool(4, 4).freshBlocksFirst(fresh);
      BlockTable t = pool.newTable(tokens(0, 6), 6); // one full (hashed) block and a partial one
      assertThat(pool.admit(t, 0, 6)).isTrue();
      pool.free(t); // last block first: 1 (no hash), then 0
      assertThat(pool.freeListOrder()).containsExactly(fresh ? new int[] {1, 2, 3, 0} : new int[] {2, 3, 1, 0});
    }
  }

  @Test
  void anExtraKeySetsEveryBlocksHashApartAndNoKeyChangesNothing() {
    int[] a = tokens(0, 8);
    long[] plain = BlockHashes.ofFullBlocks(a, 4);
    assertThat(BlockHashes.ofFullBlocks(a, 4, "")).containsExactly(plain);
    long[] x = BlockHashes.ofFullBlocks(a, 4, "sql-lora");
    long[] y = BlockHashes.ofFullBlocks(a, 4, "sql-lorb");
    for (int b = 0; b < 2; b++) {
      assertThat(x[b]).isNotEqualTo(plain[b]).isNotEqualTo(y[b]);
    }
    assertThat(BlockHashes.ofFullBlocks(a, 4, "sql-lora")).containsExactly(x);
    // a table keyed by an adapter finds only that adapter's blocks
    KvBlockPool pool = new KvBlockPool(8, 4);
    BlockTable t = pool.newTable(a, 8, "sql-lora");
    assertThat(pool.admit(t, 0, 8)).isTrue();
    assertThat(pool.cachedPrefixBlocks(pool.newTable(a, 8, "sql-lora"))).isEqualTo(2);
    assertThat(pool.cachedPrefixBlocks(pool.newTable(a, 8))).isZero();
  }

  @Test
  void cpuTierReloadsBlocksEvictedFromTheGpu() {
    KvBlockPool pool = new KvBlockPool(2, 2, 4);
    int[] a = tokens(0, 4);
    BlockTable ta = pool.newTable(a, 4);
    assertThat(pool.admit(ta, 0, 4)).isTrue();
    pool.free(ta);
    BlockTable tb = pool.newTable(tokens(100, 4), 4);
    assertThat(pool.admit(tb, 0, 4)).isTrue(); // evicts a's blocks from the GPU
    pool.free(tb);
    BlockTable again = pool.newTable(a, 4);
    assertThat(pool.cachedPrefixBlocks(again)).isZero();
    assertThat(pool.cpuPrefixBlocks(again, 0, 2)).isEqualTo(2);
    assertThat(pool.cpuPrefixBlocks(again, 0, 1)).isEqualTo(1);
    assertThat(pool.admitLoading(again, 0, 2)).isTrue();
    assertThat(again.numBlocks()).isEqualTo(2);
    assertThat(pool.cpuLoadedBlocks()).isEqualTo(2);
    assertThat(pool.cachedPrefixBlocks(pool.newTable(a, 4))).isEqualTo(2);
    assertThat(pool.hitTokens()).isZero(); // a CPU load is not a GPU hit
  }

  @Test
  void cpuTierEvictsLeastRecentlyStoredFirst() {
    KvBlockPool pool = new KvBlockPool(8, 2, 3);
    int[] a = tokens(0, 4);
    BlockTable ta = pool.newTable(a, 4);
    assertThat(pool.admit(ta, 0, 4)).isTrue(); // stores a0, a1
    BlockTable tb = pool.newTable(tokens(100, 4), 4);
    assertThat(pool.admit(tb, 0, 4)).isTrue(); // stores b0 and b1, evicting a0
    BlockTable probe = pool.newTable(a, 4);
    assertThat(pool.cpuPrefixBlocks(probe, 0, 2)).isZero();
    assertThat(pool.cpuPrefixBlocks(probe, 1, 1)).isEqualTo(1);
    assertThat(new KvBlockPool(4, 2).cpuPrefixBlocks(probe, 0, 2)).isZero();
  }

  @Test
  void failedLoadingAdmissionChangesNothing() {
    KvBlockPool pool = new KvBlockPool(2, 2, 8);
    int[] a = tokens(0, 4);
    BlockTable ta = pool.newTable(a, 4);
    assertThat(pool.admit(ta, 0, 4)).isTrue();
    pool.free(ta);
    BlockTable tb = pool.newTable(tokens(100, 4), 4);
    assertThat(pool.admit(tb, 0, 4)).isTrue(); // holds both GPU blocks
    BlockTable again = pool.newTable(a, 4);
    assertThat(pool.admitLoading(again, 0, 2)).isFalse();
    assertThat(again.numBlocks()).isZero();
    assertThat(pool.cpuLoadedBlocks()).isZero();
    assertThat(pool.freeBlocks()).isZero();
  }
}
