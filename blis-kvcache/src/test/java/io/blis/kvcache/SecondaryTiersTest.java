package io.blis.kvcache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class SecondaryTiersTest {

  private static int[] tokens(int from, int count) {
    return IntStream.range(from, from + count).toArray();
  }

  /** A tier of one read and one write thread: a transfer of b bytes takes 10 + b/100 us. */
  private static final OffloadTier DISK = new OffloadTier(1, 1, 100, 100, 10);

  /** Admits, and frees at once, a request of {@code prompt} (its blocks are stored and written). */
  private static void compute(KvBlockPool pool, int[] prompt) {
    BlockTable t = pool.newTable(prompt, prompt.length);
    assertThat(pool.admit(t, 0, prompt.length)).isTrue();
    pool.free(t);
  }

  @Test
  void transferTimesFollowBaseLatencyBandwidthAndTheRamp() {
    assertThat(DISK.transferUs(true, 1000, 1)).isEqualTo(20);
    assertThat(DISK.transferUs(false, 0, 1)).isEqualTo(10);
    OffloadTier ramp = new OffloadTier(4, 4, 100, 50, 0, 3, 0.5);
    assertThat(ramp.transferUs(true, 1000, 1)).isEqualTo(20); // half the peak alone
    assertThat(ramp.transferUs(true, 1000, 2)).isEqualTo(14); // 0.75 of it: 13.3 rounded up
    assertThat(ramp.transferUs(true, 1000, 3)).isEqualTo(10); // the peak from 3 in service
    assertThat(ramp.transferUs(false, 1000, 9)).isEqualTo(20);
    assertThatThrownBy(() -> new OffloadTier(0, 0, 1, 1, 0)).hasMessageContaining("threads");
    assertThatThrownBy(() -> new OffloadTier(1, 1, 0, 1, 0)).hasMessageContaining("bandwidths");
    assertThatThrownBy(() -> new OffloadTier(1, 1, 1, 1, 0, 2, 0)).hasMessageContaining("fraction");
  }

  @Test
  void stationServesEachQueueFirstOnItsOwnThreadsAndFallsBackToTheOther() {
    TransferStation s = new TransferStation(List.of(DISK));
    long[] h = {1, 2, 3, 4};
    s.submit(0, false, 1000, h, 0, 1); // write thread: 0..20
    s.submit(0, false, 1000, h, 1, 1); // the read thread takes it, no read waiting: 0..20
    s.submit(0, true, 1000, h, 2, 1); // waits
    s.submit(0, false, 1000, h, 3, 1); // waits
    List<String> done = new ArrayList<>();
    s.advance(1000, j -> done.add((j.read ? "r" : "w") + j.hashes[j.from] + "@" + j.completeUs));
    // at 20 the read thread frees first (same time, same submission: by job number): it takes the
    // read; the write thread takes the write
    assertThat(done).containsExactly("w1@20", "w2@20", "r3@40", "w4@40");
    assertThat(s.pending()).isZero();
    assertThat(s.nextCompletionUs()).isEqualTo(Long.MAX_VALUE);
  }

  @Test
  void everyStoredBlockIsWrittenToEachTierAndHeldUntilWritten() {
    KvBlockPool pool = new KvBlockPool(8, 2, 2, new OffloadTiers(List.of(DISK, DISK), 500));
    assertThat(pool.hasSecondaryTiers()).isTrue();
    assertThat(pool.secondaryTierCount()).isEqualTo(2);
    pool.advanceTransfers(0);
    compute(pool, tokens(0, 4)); // two blocks, both CPU slots pinned by four writes
    assertThat(pool.nextTransferUs()).isEqualTo(15);
    compute(pool, tokens(100, 4)); // no evictable CPU slot: both stores skipped
    assertThat(pool.skippedStores()).isEqualTo(2);
    pool.advanceTransfers(100);
    assertThat(pool.secondaryWrittenBlocks()).isEqualTo(4);
    compute(pool, tokens(200, 4)); // now the first two are evicted from the CPU tier
    assertThat(pool.skippedStores()).isEqualTo(2);
    pool.advanceTransfers(200);
    assertThat(pool.secondaryWrittenBlocks()).isEqualTo(8);
  }

  @Test
  void evictionPassesOverABlockBeingWritten() {
    KvBlockPool pool = new KvBlockPool(8, 2, 2, new OffloadTiers(List.of(DISK), 500));
    int[] a = tokens(0, 2);
    int[] c = tokens(200, 2);
    pool.advanceTransfers(0);
    compute(pool, a);
    compute(pool, tokens(100, 2));
    pool.advanceTransfers(100); // both written
    compute(pool, a); // touched: b is the least recently used
    compute(pool, c); // evicts b; c is being written
    compute(pool, a); // a only touched: c is now the least recently used, but held
    compute(pool, tokens(300, 2)); // so a is evicted, not c
    assertThat(pool.cpuPrefixBlocks(pool.newTable(c, 2), 0, 1)).isEqualTo(1);
    assertThat(pool.cpuPrefixBlocks(pool.newTable(a, 2), 0, 1)).isZero();
    assertThat(pool.skippedStores()).isZero();
  }

  @Test
  void aPrefixOnlyOnATierIsReadIntoTheCpuTierThenLoaded() {
    KvBlockPool pool = new KvBlockPool(4, 2, 2, new OffloadTiers(List.of(DISK), 1000));
    int[] a = tokens(0, 5); // two full blocks and one token
    pool.advanceTransfers(0);
    compute(pool, a);
    pool.advanceTransfers(100); // written
    compute(pool, tokens(100, 4)); // evicts a from the GPU ...
    compute(pool, tokens(200, 4)); // ... and from the CPU tier
    pool.advanceTransfers(200);
    BlockTable t = pool.newTable(a, 5);
    assertThat(pool.cachedPrefixBlocks(t)).isZero();
    assertThat(pool.cpuPrefixBlocks(t, 0, 2)).isZero();
    assertThat(pool.fetchKind(t, 0, 2)).isEqualTo(KvBlockPool.FETCH_SECONDARY);
    assertThat(pool.fetchKind(t, 0, 0)).isEqualTo(KvBlockPool.FETCH_NONE);
    assertThat(pool.lookedUp(t, 0)).isFalse();

    assertThat(pool.promote(t, 0, 2)).isEqualTo(2); // one read of both blocks: 10 + 2000/100 us
    assertThat(pool.lookedUp(t, 0)).isTrue();
    assertThat(pool.fetchKind(t, 0, 2)).isEqualTo(KvBlockPool.FETCH_PENDING);
    assertThat(pool.fetchState(t, 0, 2)).isEqualTo(KvBlockPool.FETCH_PENDING);
    assertThat(pool.nextTransferUs()).isEqualTo(230);
    pool.advanceTransfers(229);
    assertThat(pool.cpuPrefixBlocks(t, 0, 2)).isZero();
    pool.advanceTransfers(230);
    assertThat(pool.fetchState(t, 0, 2)).isEqualTo(KvBlockPool.FETCH_NONE);
    assertThat(pool.cpuPrefixBlocks(t, 0, 2)).isEqualTo(2);
    assertThat(pool.secondaryReadBlocks()).isEqualTo(2);
    assertThat(pool.admitLoading(t, 0, 2)).isTrue();
    assertThat(pool.cachedPrefixBlocks(pool.newTable(a, 5))).isEqualTo(2);
  }

  @Test
  void aReadWithoutCpuRoomIsRefusedAndChangesNothing() {
    KvBlockPool pool = new KvBlockPool(4, 2, 1, new OffloadTiers(List.of(DISK), 1000));
    int[] a = tokens(0, 4);
    pool.advanceTransfers(0);
    compute(pool, a);
    pool.advanceTransfers(100);
    compute(pool, tokens(100, 4));
    compute(pool, tokens(200, 4)); // the one CPU slot is pinned by this write now
    BlockTable t = pool.newTable(a, 4);
    assertThat(pool.fetchKind(t, 0, 2)).isEqualTo(KvBlockPool.FETCH_SECONDARY);
    assertThat(pool.promote(t, 0, 2)).isZero(); // two blocks need two slots: all or nothing
    assertThat(pool.refusedPromotions()).isEqualTo(1);
    assertThat(pool.fetchKind(t, 0, 2)).isEqualTo(KvBlockPool.FETCH_SECONDARY);
    assertThat(pool.secondaryReadBlocks()).isZero();
  }

  @Test
  void generatedBlocksAreOffloadedTooWhenAskedAndTakeTheirSlots() {
    int[] a = tokens(0, 4);
    for (boolean generated : new boolean[] {false, true}) {
      KvBlockPool pool = new KvBlockPool(8, 2, 2, new OffloadTiers(List.of(DISK), 500, generated));
      pool.advanceTransfers(0);
      BlockTable t = pool.newTable(a, 9);
      assertThat(pool.admit(t, 0, 4)).isTrue(); // the prompt's two blocks
      pool.advanceTransfers(100);
      assertThat(pool.grow(t, 7)).isTrue(); // three generated tokens: one more full block
      pool.advanceTransfers(200);
      assertThat(pool.grow(t, 9)).isTrue(); // and another
      pool.advanceTransfers(300);
      pool.free(t);
      // generated blocks, when offloaded, push the prompt's out of the two CPU slots
      assertThat(pool.cpuPrefixBlocks(pool.newTable(a, 4), 0, 2)).isEqualTo(generated ? 0 : 2);
      assertThat(pool.secondaryWrittenBlocks()).isEqualTo(generated ? 4 : 2);
    }
    assertThatThrownBy(() -> new KvBlockPool(4, 2, 0, new OffloadTiers(List.of(), 1, true)))
        .hasMessageContaining("need a CPU tier");
  }

  @Test
  void withoutTiersNothingIsFetchedAndTiersNeedACpuTier() {
    KvBlockPool pool = new KvBlockPool(4, 2, 2);
    BlockTable t = pool.newTable(tokens(0, 4), 4);
    assertThat(pool.hasSecondaryTiers()).isFalse();
    assertThat(pool.fetchKind(t, 0, 2)).isEqualTo(KvBlockPool.FETCH_NONE);
    assertThat(pool.promote(t, 0, 2)).isZero();
    assertThat(pool.nextTransferUs()).isEqualTo(Long.MAX_VALUE);
    assertThatThrownBy(() -> new KvBlockPool(4, 2, 0, new OffloadTiers(List.of(DISK), 1)))
        .hasMessageContaining("need a CPU tier");
  }

  @Test
  void longSetGrowsAndKeepsZero() {
    LongSet s = new LongSet();
    for (long k = -500; k < 500; k++) {
      s.add(k * 7919);
    }
    s.add(0);
    assertThat(s.size()).isEqualTo(1000);
    for (long k = -500; k < 500; k++) {
      assertThat(s.contains(k * 7919)).isTrue();
    }
    assertThat(s.contains(1)).isFalse();
  }
}
