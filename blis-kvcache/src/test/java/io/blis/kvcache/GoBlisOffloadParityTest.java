package io.blis.kvcache;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * Pool-level properties of Go BLIS's offload tests (inference-sim/inference-sim at f90a1e3a,
 * sim/kv), re-expressed against this project's {@link KvBlockPool}; the scenarios and properties are
 * Go BLIS's, the code is this project's. The table is in docs/vllm-parity.md.
 */
class GoBlisOffloadParityTest {

  private static int[] tokens(int from, int count) {
    return IntStream.range(from, from + count).toArray();
  }

  /** One read and one write thread; a transfer of b bytes takes 10 + b/100 us. */
  private static final OffloadTier FAST = new OffloadTier(1, 1, 100, 100, 10);
  /** One read and one write thread; a transfer of b bytes takes 50 + b/10 us. */
  private static final OffloadTier SLOW = new OffloadTier(1, 1, 10, 10, 50);

  /** Admits, and frees at once, a request of {@code prompt}. */
  private static void compute(KvBlockPool pool, int[] prompt) {
    BlockTable t = pool.newTable(prompt, prompt.length);
    assertThat(pool.admit(t, 0, prompt.length)).isTrue();
    pool.free(t);
  }

  /** What a promotion of a prefix found only on the secondary tiers did. */
  record Outcome(int kindBefore, int promoted, long readDoneUs, int cpuAfter, long readBlocks, long writtenBlocks,
      long refused, boolean loaded, int gpuCachedAfter) {}

  /**
   * A 2-block prefix X (plus a partial block) is computed, written to every tier, then pushed out
   * of the GPU and the CPU tier by two other prompts; at 10,000 us a new request for X looks it up
   * and promotes it from the secondary tiers, and after the read it is loaded to the GPU.
   */
  private static Outcome promoteX(List<OffloadTier> tiers) {
    KvBlockPool pool = new KvBlockPool(4, 2, 2, new OffloadTiers(tiers, 1_000));
    int[] x = tokens(0, 5);
    pool.advanceTransfers(0);
    compute(pool, x);
    pool.advanceTransfers(1_000); // both tiers written, whatever their speed
    compute(pool, tokens(100, 4)); // evicts X from the CPU tier ...
    compute(pool, tokens(200, 4)); // ... and from the GPU
    pool.advanceTransfers(10_000);
    BlockTable t = pool.newTable(x, 5);
    assertThat(pool.cachedPrefixBlocks(t)).isZero();
    assertThat(pool.cpuPrefixBlocks(t, 0, 2)).isZero();
    int kind = pool.fetchKind(t, 0, 2);
    int promoted = pool.promote(t, 0, 2);
    long done = pool.nextTransferUs();
    pool.advanceTransfers(100_000);
    int cpu = pool.cpuPrefixBlocks(t, 0, 2);
    boolean loaded = cpu > 0 && pool.admitLoading(t, 0, cpu);
    return new Outcome(kind, promoted, done, cpu, pool.secondaryReadBlocks(), pool.secondaryWrittenBlocks(),
        pool.refusedPromotions(), loaded, pool.cachedPrefixBlocks(pool.newTable(x, 5)));
  }

  /**
   * Go: sim/kv/offload_metamorphic_test.go::TestOffload_TierOrderInvariant. Permuting the
   * secondary tiers does not change which blocks are promoted, how many, or what the pool holds
   * after the read; only which tier serves the read (the first in lookup order) and so when it ends.
   * Go's scenario stores disjoint contents on the two tiers; here every block stored in the CPU tier
   * is written to every tier, so the permuted tiers differ in speed, not in contents.
   */
  @Test
  void permutingTheSecondaryTiersChangesOnlyWhichTierServesTheRead() {
    Outcome a = promoteX(List.of(FAST, SLOW));
    Outcome b = promoteX(List.of(SLOW, FAST));
    assertThat(a.kindBefore()).isEqualTo(KvBlockPool.FETCH_SECONDARY);
    assertThat(a.promoted()).isEqualTo(2); // both X blocks, in one read
    assertThat(a.cpuAfter()).isEqualTo(2);
    assertThat(a.readBlocks()).isEqualTo(2);
    assertThat(a.refused()).isZero();
    assertThat(a.loaded()).isTrue();
    assertThat(a.gpuCachedAfter()).isEqualTo(2);
    // the same promotion outcome with the tiers swapped
    assertThat(new Object[] {b.kindBefore(), b.promoted(), b.cpuAfter(), b.readBlocks(), b.writtenBlocks(),
        b.refused(), b.loaded(), b.gpuCachedAfter()})
        .containsExactly(a.kindBefore(), a.promoted(), a.cpuAfter(), a.readBlocks(), a.writtenBlocks(),
            a.refused(), a.loaded(), a.gpuCachedAfter());
    // the first tier in lookup order served the read: 2,000 bytes on FAST (10 + 20 us) or SLOW (50 + 200 us)
    assertThat(a.readDoneUs()).isEqualTo(10_000 + 30);
    assertThat(b.readDoneUs()).isEqualTo(10_000 + 250);
  }

  /**
   * Go: sim/kv/tiered_test.go::TestTieredKVCache_HitRate_MonotoneInCPUResidency, at the pool: a
   * seeded sequence of admissions and frees (several requests live at once, freed in random order,
   * prompts sharing prefixes) is replayed on pools that differ only in the CPU tier's size; the
   * prompt blocks served from a cache (the GPU's prefix cache plus blocks reloaded from the CPU
   * tier) never decrease as the tier grows, and the GPU's own hits are the same in every replay.
   */
  @Test
  void cacheHitsNeverDecreaseAsTheCpuTierGrows() {
    for (long seed = 1; seed <= 20; seed++) {
      long prevServed = -1;
      long gpuHits = -1;
      long[] served = new long[9];
      int[] sizes = {0, 1, 2, 3, 5, 8, 13, 21, 200};
      for (int k = 0; k < sizes.length; k++) {
        long[] r = replay(seed, sizes[k]);
        served[k] = r[0] + r[1];
        assertThat(served[k]).as("seed %d, CPU tier of %d blocks", seed, sizes[k]).isGreaterThanOrEqualTo(prevServed);
        prevServed = served[k];
        if (gpuHits < 0) {
          gpuHits = r[0];
        }
        assertThat(r[0]).as("GPU hits, seed %d", seed).isEqualTo(gpuHits);
      }
      if (seed == 1) {
        assertThat(served[sizes.length - 1]).isGreaterThan(served[0]);
      }
    }
  }

  /** {GPU hit blocks, CPU-reloaded blocks} of the seeded sequence on a pool with {@code cpuBlocks}. */
  private static long[] replay(long seed, int cpuBlocks) {
    SplittableRandom rnd = new SplittableRandom(seed);
    KvBlockPool pool = new KvBlockPool(24, 2, cpuBlocks);
    int[][] prefixes = new int[10][];
    for (int p = 0; p < prefixes.length; p++) {
      prefixes[p] = tokens(1_000 * (p + 1), 2 * (1 + rnd.nextInt(4)));
    }
    List<BlockTable> live = new ArrayList<>();
    long cpuLoaded = 0;
    for (int i = 0; i < 300; i++) {
      if (live.size() >= 3 || (!live.isEmpty() && rnd.nextInt(3) == 0)) {
        pool.free(live.remove(rnd.nextInt(live.size())));
        continue;
      }
      int[] own = tokens(1_000_000 + 100 * i, 1 + rnd.nextInt(4));
      int[] prompt = rnd.nextInt(5) == 0 ? own
          : concat(prefixes[rnd.nextInt(prefixes.length)], own);
      BlockTable t = pool.newTable(prompt, prompt.length);
      int maxCached = (prompt.length - 1) / 2;
      int gpu = Math.min(pool.cachedPrefixBlocks(t), maxCached);
      int cpu = pool.cpuPrefixBlocks(t, gpu, maxCached - gpu);
      if (cpu > 0) {
        assertThat(pool.admitLoading(t, gpu, cpu)).isTrue();
        assertThat(pool.grow(t, prompt.length)).isTrue();
        cpuLoaded += cpu;
      } else {
        assertThat(pool.admit(t, gpu, prompt.length)).isTrue();
      }
      live.add(t);
    }
    assertThat(pool.cpuLoadedBlocks()).isEqualTo(cpuLoaded);
    return new long[] {pool.hitBlocks(), pool.cpuLoadedBlocks()};
  }

  private static int[] concat(int[] a, int[] b) {
    int[] out = new int[a.length + b.length];
    System.arraycopy(a, 0, out, 0, a.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }
}
