package io.blis.kvcache;

import java.util.Arrays;

/**
 * A paged KV-cache block pool with reference counts and automatic prefix caching, modelled on the
 * vLLM v1 block pool.
 *
 * <ul>
 *   <li>{@code totalBlocks} blocks of {@code blockSizeTokens} tokens each, ids {@code 0..N-1}.
 *   <li>A block is <em>used</em> while at least one request references it, <em>free</em>
 *       otherwise. {@link #usedBlocks()} + {@link #freeBlocks()} = {@link #totalBlocks()} always.
 *   <li>A full prompt block is registered under its chained hash ({@link BlockHashes}) when its
 *       tokens are scheduled. After the block is freed it keeps its hash, so a later request with
 *       the same prefix can claim it again (a prefix-cache hit).
 *   <li>Free blocks are reused in least-recently-freed order (an intrusive doubly linked free
 *       list; a request's blocks are freed last block first, so the tail of a prompt is evicted
 *       before its more shareable head). Reusing a block drops its old hash entry.
 *   <li>Every allocation checks first and mutates only on success: a failed call changes nothing.
 * </ul>
 *
 * <p>Hit accounting counts successful admissions: prompt tokens (and full prompt blocks) queried
 * versus served from the cache. After construction no method allocates, except a {@link
 * BlockTable} growing beyond its expected size. Not thread-safe.
 */
public final class KvBlockPool {

  private final int totalBlocks;
  private final int blockSizeTokens;
  private final int[] refCount;
  private final long[] blockHash;
  private final boolean[] hashed;
  /**
   * The other blocks carrying the same hash (vLLM does not de-duplicate: a prompt block recomputed
   * while a copy is cached is cached too, and stays a hit when the first copy is evicted), as a
   * doubly linked ring per hash; -1 ends it. The index points at one member.
   */
  private final int[] nextSame;
  private final int[] prevSame;
  private final IntrusiveList freeList; // head = next block to reuse
  private final LongIntMap index;
  /** Entries (live and stale) at which the index is refilled with the live ones. */
  private final int staleLimit;
  private final CpuKvTier cpu;
  private long cpuLoadedBlocks;
  // secondary offload tiers (null without): what each holds, the I/O threads, what was looked up
  private final OffloadTiers offload;
  private final LongSet[] onTier;
  private final TransferStation station;
  private final LongSet lookedUp;
  private final TransferStation.Done onTransferDone = this::transferDone;
  private long secondaryReadBlocks;
  private long secondaryWrittenBlocks;
  private long refusedPromotions;
  private long skippedStores;
  private final boolean offloadGenerated;
  private long tables;

  private long queriedTokens;
  private long hitTokens;
  private long queriedBlocks;
  private long hitBlocks;
  private int peakUsedBlocks;
  private final ResidentBlocks resident;
  /** Whether a freed block without a hash goes to the head of the free list (vLLM 0.23 and later). */
  private boolean freshBlocksFirst;

  /**
   * A pool of {@code totalBlocks} free blocks.
   *
   * @throws IllegalArgumentException if a size is not positive or the pool is too large
   */
  public KvBlockPool(long totalBlocks, int blockSizeTokens) {
    this(totalBlocks, blockSizeTokens, 0);
  }

  /**
   * A pool of {@code totalBlocks} free GPU blocks backed by a CPU tier of {@code cpuBlocks} block
   * slots (0 for none). Every prompt block registered in the GPU prefix cache is also stored in
   * the CPU tier (least recently stored evicted first), from where {@link #admitLoading} reloads
   * it.
   *
   * @throws IllegalArgumentException if a size is out of range
   */
  public KvBlockPool(long totalBlocks, int blockSizeTokens, long cpuBlocks) {
    this(totalBlocks, blockSizeTokens, cpuBlocks, OffloadTiers.NONE);
  }

  /**
   * A pool of {@code totalBlocks} free GPU blocks backed by a CPU tier of {@code cpuBlocks} block
   * slots and, behind it, the secondary tiers of {@code offload} (disks or remote file systems).
   * Every block newly stored in the CPU tier is also written to each secondary tier (a write job
   * per block and tier, holding the CPU slot until it is written). A prefix continuing on a
   * secondary tier is read back into the CPU tier by {@link #promote} before {@link #admitLoading}
   * can load it; the copies take time on the tiers' I/O threads, which {@link #advanceTransfers}
   * moves forward.
   *
   * @throws IllegalArgumentException if a size is out of range, or secondary tiers are given
   *     without a CPU tier
   */
  public KvBlockPool(long totalBlocks, int blockSizeTokens, long cpuBlocks, OffloadTiers offload) {
    this(totalBlocks, blockSizeTokens, cpuBlocks, offload, ResidentBlocks.NONE);
  }

  /**
   * As {@link #KvBlockPool(long, int, long, OffloadTiers)}, where every request also holds {@code
   * resident} blocks besides its tokens' (a hybrid model's recurrent states and sliding windows):
   * taken with its tokens' blocks, all or nothing, and freed with them.
   */
  public KvBlockPool(long totalBlocks, int blockSizeTokens, long cpuBlocks, OffloadTiers offload,
      ResidentBlocks resident) {
    java.util.Objects.requireNonNull(offload, "offload");
    this.resident = java.util.Objects.requireNonNull(resident, "resident");
    if ((offload.any() || offload.generatedBlocks()) && cpuBlocks < 1) {
      throw new IllegalArgumentException("secondary offload tiers and offloaded generated blocks need a CPU tier in"
          + " front of them (CPU KV blocks >= 1)");
    }
    offloadGenerated = offload.generatedBlocks();
    if (cpuBlocks < 0 || cpuBlocks > (1 << 29)) {
      throw new IllegalArgumentException(
          "CPU KV blocks must be in [0, " + (1 << 29) + "], got " + cpuBlocks);
    }
    if (totalBlocks < 1 || totalBlocks > (1 << 29)) {
      throw new IllegalArgumentException(
          "total KV blocks must be in [1, " + (1 << 29) + "], got " + totalBlocks);
    }
    if (blockSizeTokens < 1) {
      throw new IllegalArgumentException("block size must be at least 1 token, got " + blockSizeTokens);
    }
    this.totalBlocks = (int) totalBlocks;
    this.blockSizeTokens = blockSizeTokens;
    int n = this.totalBlocks;
    refCount = new int[n];
    blockHash = new long[n];
    hashed = new boolean[n];
    nextSame = new int[n];
    prevSame = new int[n];
    Arrays.fill(nextSame, -1);
    Arrays.fill(prevSame, -1);
    freeList = new IntrusiveList(n);
    for (int i = 0; i < n; i++) {
      freeList.append(i);
    }
    index = new LongIntMap(n);
    staleLimit = index.capacity() / 4 * 3;
    cpu = cpuBlocks > 0 ? new CpuKvTier((int) cpuBlocks) : null;
    if (offload.any()) {
      this.offload = offload;
      onTier = new LongSet[offload.tiers().size()];
      for (int t = 0; t < onTier.length; t++) {
        onTier[t] = new LongSet();
      }
      station = new TransferStation(offload.tiers());
      lookedUp = new LongSet();
    } else {
      this.offload = null;
      onTier = null;
      station = null;
      lookedUp = null;
    }
  }

  /**
   * Puts a freed block that carries no hash (a partial last block, blocks of generated tokens) at
   * the head of the free list, so it is reused before any cached block, as vLLM does from 0.23
   * (pull request 43447: uncached blocks prepended to the free queue, cached ones appended); off,
   * every freed block goes to the tail, as before. Set it before the pool is used.
   *
   * @return this pool
   */
  public KvBlockPool freshBlocksFirst(boolean on) {
    this.freshBlocksFirst = on;
    return this;
  }

  // ---------------------------------------------------------------- secondary tiers

  /** {@link #fetchKind}: nothing to wait for (all loadable now, or a miss to recompute). */
  public static final int FETCH_NONE = 0;
  /** {@link #fetchKind}: the prefix continues on a secondary tier. */
  public static final int FETCH_SECONDARY = 1;
  /** {@link #fetchKind}: the prefix continues in a block being read into the CPU tier. */
  public static final int FETCH_PENDING = 2;

  /** Whether secondary tiers stand behind the CPU tier. */
  public boolean hasSecondaryTiers() {
    return station != null;
  }

  /** Secondary tiers behind the CPU tier (0 without). */
  public int secondaryTierCount() {
    return onTier == null ? 0 : onTier.length;
  }

  /**
   * Moves the tiers' transfers forward to {@code nowUs}: blocks read from a secondary tier become
   * loadable from the CPU tier, blocks written to one are held there and free their CPU slot. New
   * transfers start at the latest time given here. No effect without secondary tiers.
   */
  public void advanceTransfers(long nowUs) {
    if (station != null) {
      station.advance(nowUs, onTransferDone);
    }
  }

  /** When the next transfer in progress ends; {@link Long#MAX_VALUE} when none is (or no tiers). */
  public long nextTransferUs() {
    return station == null ? Long.MAX_VALUE : station.nextCompletionUs();
  }

  /**
   * What the prompt of {@code table} needs at block {@code fromBlock}, the first one neither the
   * GPU prefix cache nor the CPU tier's readable blocks hold ({@link #cachedPrefixBlocks} plus
   * {@link #cpuPrefixBlocks}): {@link #FETCH_PENDING} when it is being read into the CPU tier,
   * {@link #FETCH_SECONDARY} when a secondary tier holds it, else {@link #FETCH_NONE} (also when
   * {@code maxBlocks} is 0 or there are no secondary tiers).
   */
  public int fetchKind(BlockTable table, int fromBlock, int maxBlocks) {
    if (station == null || maxBlocks < 1 || fromBlock >= table.promptBlockHashes.length) {
      return FETCH_NONE;
    }
    long h = table.promptBlockHashes[fromBlock];
    int state = cpu.state(h);
    if (state == CpuKvTier.PENDING) {
      return FETCH_PENDING;
    }
    return state == CpuKvTier.MISS && tierHolding(h) >= 0 ? FETCH_SECONDARY : FETCH_NONE;
  }

  /**
   * Whether the secondary tiers were already asked for block {@code fromBlock} of {@code table}
   * (vLLM caches what a lookup found, so a second request for the same blocks skips a scheduler
   * round).
   */
  public boolean lookedUp(BlockTable table, int fromBlock) {
    return station != null && fromBlock < table.promptBlockHashes.length
        && lookedUp.contains(table.promptBlockHashes[fromBlock]);
  }

  /**
   * Starts reading the prompt blocks of {@code table} from {@code fromBlock} (at most {@code
   * maxBlocks}, and no further than the first tier that holds the first of them holds them in a
   * row) into the CPU tier, in one transfer. Their CPU slots are taken at once (all or nothing),
   * pending until the transfer ends.
   *
   * @return the blocks being read; 0 when there is nothing to read or the CPU tier had no room for
   *     them (every slot pinned or pending: the request recomputes them)
   */
  public int promote(BlockTable table, int fromBlock, int maxBlocks) {
    if (station == null || maxBlocks < 1 || fromBlock >= table.promptBlockHashes.length
        || cpu.state(table.promptBlockHashes[fromBlock]) != CpuKvTier.MISS) {
      return 0;
    }
    long[] hashes = table.promptBlockHashes;
    int tier = tierHolding(hashes[fromBlock]);
    if (tier < 0) {
      return 0; // on no tier: nothing to read
    }
    int end = Math.min(hashes.length, fromBlock + maxBlocks);
    int n = 1;
    while (fromBlock + n < end && cached(hashes[fromBlock + n]) == LongIntMap.MISSING
        && cpu.state(hashes[fromBlock + n]) == CpuKvTier.MISS && tierHolding(hashes[fromBlock + n]) == tier) {
      n++;
    }
    for (int k = 0; k < n; k++) {
      lookedUp.add(hashes[fromBlock + k]);
    }
    if (!cpu.prepare(hashes, fromBlock, n)) {
      refusedPromotions++;
      return 0;
    }
    station.submit(tier, true, n * offload.blockBytes(), hashes, fromBlock, n);
    return n;
  }

  /**
   * Whether blocks {@code fromBlock .. fromBlock+count-1} of {@code table}'s prompt are all on the
   * GPU or readable in the CPU tier ({@link #FETCH_NONE}), some still being read ({@link
   * #FETCH_PENDING}), or one was lost (evicted before use: {@link #FETCH_SECONDARY} if a tier
   * still holds it; the request then recomputes it).
   */
  public int fetchState(BlockTable table, int fromBlock, int count) {
    long[] hashes = table.promptBlockHashes;
    int end = Math.min(hashes.length, fromBlock + count);
    boolean pending = false;
    for (int b = fromBlock; b < end; b++) {
      if (cached(hashes[b]) != LongIntMap.MISSING) {
        continue;
      }
      int state = cpu.state(hashes[b]);
      if (state == CpuKvTier.MISS) {
        return FETCH_SECONDARY;
      }
      pending |= state == CpuKvTier.PENDING;
    }
    return pending ? FETCH_PENDING : FETCH_NONE;
  }

  /** Blocks read from the secondary tiers into the CPU tier. */
  public long secondaryReadBlocks() {
    return secondaryReadBlocks;
  }

  /** Block copies written to the secondary tiers (one per block and tier). */
  public long secondaryWrittenBlocks() {
    return secondaryWrittenBlocks;
  }

  /** Reads from the secondary tiers refused because every CPU slot was pinned or pending. */
  public long refusedPromotions() {
    return refusedPromotions;
  }

  /** Blocks not stored in the CPU tier because every slot was pinned or pending. */
  public long skippedStores() {
    return skippedStores;
  }

  private int tierHolding(long h) {
    for (int t = 0; t < onTier.length; t++) {
      if (onTier[t].contains(h)) {
        return t;
      }
    }
    return -1;
  }

  private void transferDone(TransferStation.Job j) {
    if (j.read) {
      for (int k = 0; k < j.count; k++) {
        cpu.complete(j.hashes[j.from + k]);
      }
      secondaryReadBlocks += j.count;
    } else {
      long h = j.hashes[j.from];
      onTier[j.tier].add(h);
      cpu.unpin(h);
      secondaryWrittenBlocks++;
    }
  }

  /**
   * Stores a computed block in the CPU tier and, when newly stored, writes it to each secondary
   * tier: {@code hashes[b]}, or {@code h} when {@code hashes} is null.
   */
  private void offloadBlock(long[] hashes, int b, long h) {
    if (hashes != null) {
      h = hashes[b];
    }
    if (station == null) {
      cpu.store(h);
      return;
    }
    if (cpu.state(h) == CpuKvTier.MISS && cpu.available() == 0) {
      skippedStores++;
      return;
    }
    if (cpu.store(h)) {
      long[] keys = hashes != null ? hashes : new long[] {h};
      for (int t = 0; t < onTier.length; t++) {
        cpu.pin(h);
        station.submit(t, false, offload.blockBytes(), keys, hashes != null ? b : 0, 1);
      }
    }
  }

  /** Whether a CPU tier backs this pool. */
  public boolean hasCpuTier() {
    return cpu != null;
  }

  /** Block slots of the CPU tier (0 without one). */
  public int cpuTierBlocks() {
    return cpu == null ? 0 : cpu.capacity();
  }

  /**
   * Number of consecutive prompt blocks of {@code table}, starting at block {@code fromBlock}, held
   * by the CPU tier; at most {@code maxBlocks}. Always 0 without a CPU tier.
   */
  public int cpuPrefixBlocks(BlockTable table, int fromBlock, int maxBlocks) {
    if (cpu == null) {
      return 0;
    }
    int end = Math.min(table.promptBlockHashes.length, fromBlock + Math.max(0, maxBlocks));
    int b = fromBlock;
    while (b < end && cpu.contains(table.promptBlockHashes[b])) {
      b++;
    }
    return b - fromBlock;
  }

  /**
   * Admits a request whose prefix is partly in the GPU cache ({@code gpuCachedBlocks}) and
   * continues in the CPU tier ({@code cpuBlocks}, from {@link #cpuPrefixBlocks}): claims the GPU
   * blocks and allocates GPU blocks for the reloaded ones, which are registered in the prefix
   * cache at once. All or nothing. Counted as a GPU hit of {@code gpuCachedBlocks} and a CPU load
   * of {@code cpuBlocks}.
   *
   * @return false, changing nothing, when there are not enough free blocks
   */
  public boolean admitLoading(BlockTable table, int gpuCachedBlocks, int cpuBlocks) {
    if (cpu == null || cpuBlocks < 1) {
      throw new IllegalArgumentException("admitLoading needs a CPU tier and at least one CPU block");
    }
    if (!admit(table, gpuCachedBlocks, (gpuCachedBlocks + cpuBlocks) * blockSizeTokens)) {
      return false;
    }
    cpuLoadedBlocks += cpuBlocks;
    return true;
  }

  /** Blocks reloaded from the CPU tier by {@link #admitLoading}. */
  public long cpuLoadedBlocks() {
    return cpuLoadedBlocks;
  }

  /** Total blocks in the pool. */
  public int totalBlocks() {
    return totalBlocks;
  }

  /** Tokens per block. */
  public int blockSizeTokens() {
    return blockSizeTokens;
  }

  /** Blocks not referenced by any request (some may still hold a cached prefix). */
  public int freeBlocks() {
    return freeList.size();
  }

  /** Blocks referenced by at least one request. */
  public int usedBlocks() {
    return totalBlocks - freeList.size();
  }

  /** Highest {@link #usedBlocks()} seen after any allocation. */
  public int peakUsedBlocks() {
    return peakUsedBlocks;
  }

  /** Blocks needed to hold {@code tokens} tokens. */
  public int blocksFor(long tokens) {
    return (int) ((tokens + blockSizeTokens - 1) / blockSizeTokens);
  }

  /**
   * A new, empty block table for a request with this prompt; the prompt's full-block hashes are
   * computed here, once.
   *
   * @param expectedTokens tokens the request is expected to hold at most (sizes the table)
   */
  public BlockTable newTable(int[] promptTokens, long expectedTokens) {
    return newTable(promptTokens, expectedTokens, "");
  }

  /**
   * As {@link #newTable(int[], long)}, the prompt's block hashes keyed by {@code extraKey} (the LoRA
   * adapter; {@link BlockHashes#ofFullBlocks(int[], int, String)}).
   */
  public BlockTable newTable(int[] promptTokens, long expectedTokens, String extraKey) {
    long[] hashes = BlockHashes.ofFullBlocks(promptTokens, blockSizeTokens, extraKey);
    int expected = (int) Math.min(totalBlocks, blocksFor(Math.max(expectedTokens, promptTokens.length)));
    BlockTable t = new BlockTable(hashes, promptTokens.length, expected);
    t.number = ++tables;
    return t;
  }

  /** Number of leading blocks of {@code table}'s prompt currently in the prefix cache. */
  public int cachedPrefixBlocks(BlockTable table) {
    return cachedPrefixBlocks(table.promptBlockHashes, table.promptBlockHashes.length);
  }

  /**
   * Number of leading blocks of a chained-hash sequence ({@link BlockHashes#ofFullBlocks}) that are
   * in the prefix cache, looking at no more than {@code maxBlocks}. Routers use this to find the
   * instance holding the longest prefix.
   */
  public int cachedPrefixBlocks(long[] hashes, int maxBlocks) {
    int n = Math.min(maxBlocks, hashes.length);
    int i = 0;
    while (i < n && cached(hashes[i]) != LongIntMap.MISSING) {
      i++;
    }
    return i;
  }

  /**
   * Admits a request: claims the first {@code cachedBlocks} blocks of its prompt from the prefix
   * cache and allocates new blocks so that the table holds {@code totalTokens} tokens. All or
   * nothing.
   *
   * @param table an empty table
   * @param cachedBlocks leading prompt blocks to take from the cache; at most {@link
   *     #cachedPrefixBlocks(BlockTable)}
   * @param totalTokens tokens the table must hold afterwards (cached plus newly scheduled)
   * @return false, changing nothing, when there are not enough free blocks
   */
  public boolean admit(BlockTable table, int cachedBlocks, int totalTokens) {
    return admit(table, cachedBlocks, totalTokens, 0);
  }

  /**
   * As {@link #admit(BlockTable, int, int)}, with room for {@code lookaheadTokens} more tokens past
   * {@code totalTokens} (a speculative drafter's slots, vLLM's {@code num_lookahead_tokens}): blocks
   * for both are taken, all or nothing, but only the first {@code totalTokens} count as computed for
   * the prefix cache.
   */
  public boolean admit(BlockTable table, int cachedBlocks, int totalTokens, int lookaheadTokens) {
    if (lookaheadTokens < 0) {
      throw new IllegalArgumentException("lookahead tokens must be >= 0, got " + lookaheadTokens);
    }
    if (table.numBlocks != 0) {
      throw new IllegalStateException("admit needs an empty block table, it holds " + table.numBlocks);
    }
    if (cachedBlocks < 0 || cachedBlocks > table.promptBlockHashes.length
        || (long) cachedBlocks * blockSizeTokens > totalTokens) {
      throw new IllegalArgumentException(
          "cached blocks " + cachedBlocks + " do not fit " + totalTokens + " tokens");
    }
    int claimFromFree = 0;
    for (int b = 0; b < cachedBlocks; b++) {
      int id = cached(table.promptBlockHashes[b]);
      if (id == LongIntMap.MISSING) {
        throw new IllegalArgumentException("prompt block " + b + " is not cached");
      }
      if (refCount[id] == 0) {
        claimFromFree++;
      }
    }
    int tokenBlocks = blocksFor((long) totalTokens + lookaheadTokens);
    int newBlocks = tokenBlocks - cachedBlocks;
    int residentBlocks = resident.forStep((long) cachedBlocks * blockSizeTokens, (long) totalTokens + lookaheadTokens,
        blockSizeTokens);
    if ((long) newBlocks + claimFromFree + residentBlocks > freeList.size()) {
      return false;
    }
    for (int b = 0; b < cachedBlocks; b++) {
      int id = cached(table.promptBlockHashes[b]);
      if (refCount[id]++ == 0) {
        freeList.unlink(id);
      }
      table.add(id);
    }
    table.hashedBlocks = cachedBlocks;
    takeResidentBlocks(table, residentBlocks);
    takeFreeBlocks(table, newBlocks, totalTokens);
    table.tokens = totalTokens;
    queriedTokens += table.promptTokens;
    hitTokens += (long) cachedBlocks * blockSizeTokens;
    queriedBlocks += table.promptBlockHashes.length;
    hitBlocks += cachedBlocks;
    return true;
  }

  /**
   * Grows {@code table} so that it holds {@code totalTokens} tokens (a running request's next
   * prefill chunk or decode token). All or nothing.
   *
   * @return false, changing nothing, when there are not enough free blocks
   */
  public boolean grow(BlockTable table, int totalTokens) {
    return grow(table, totalTokens, 0);
  }

  /**
   * As {@link #grow(BlockTable, int)}, with room for {@code lookaheadTokens} more tokens past {@code
   * totalTokens} (a speculative drafter's slots): only the first {@code totalTokens} count as
   * computed for the prefix cache. Blocks past what a later step needs stay with the table until it
   * is freed, as vLLM keeps them (a rejected draft's slots are written again by the next step).
   */
  public boolean grow(BlockTable table, int totalTokens, int lookaheadTokens) {
    if (lookaheadTokens < 0) {
      throw new IllegalArgumentException("lookahead tokens must be >= 0, got " + lookaheadTokens);
    }
    int tokenBlocks = blocksFor((long) totalTokens + lookaheadTokens);
    int newBlocks = tokenBlocks - table.numBlocks;
    // a sliding window's blocks of the step: the window plus the tokens computed now; the ones that
    // fell behind the window since the last step are freed now (vLLM's remove_skipped_blocks)
    int targetResident = resident.forStep(table.tokens, (long) totalTokens + lookaheadTokens, blockSizeTokens);
    int newResident = Math.max(0, targetResident - table.numResident);
    int behind = Math.max(0, table.numResident - targetResident);
    if ((long) Math.max(0, newBlocks) + newResident > freeList.size() + behind) {
      return false;
    }
    if (behind > 0) {
      release(table.residentIds, table.numResident, targetResident);
      table.numResident = targetResident;
    }
    takeResidentBlocks(table, newResident);
    takeFreeBlocks(table, Math.max(0, newBlocks), totalTokens);
    table.tokens = totalTokens;
    return true;
  }

  /** Releases every block of {@code table} (last block first); cached hashes stay until reuse. */
  public void free(BlockTable table) {
    release(table.residentIds, table.numResident);
    table.numResident = 0;
    release(table.blockIds, table.numBlocks);
    table.numBlocks = 0;
    table.tokens = 0;
    table.offloadedBlocks = 0;
    table.hashedBlocks = 0;
  }

  /** Drops one reference to each of the first {@code n} blocks of {@code ids}, last first. */
  private void release(int[] ids, int n) {
    release(ids, n, 0);
  }

  /** Drops one reference to each of the blocks {@code ids[from, n)}, last first. */
  private void release(int[] ids, int n, int from) {
    for (int i = n - 1; i >= from; i--) {
      int id = ids[i];
      if (--refCount[id] == 0) {
        if (freshBlocksFirst && !hashed[id]) {
          freeList.prepend(id);
        } else {
          freeList.append(id);
        }
      } else if (refCount[id] < 0) {
        throw new IllegalStateException("block " + id + " freed more often than referenced");
      }
    }
  }

  /** Reference count of block {@code id} (for tests and diagnostics). */
  public int refCount(int id) {
    return refCount[id];
  }

  /** Prompt tokens queried at successful admissions. */
  public long queriedTokens() {
    return queriedTokens;
  }

  /** Prompt tokens served from the prefix cache at successful admissions. */
  public long hitTokens() {
    return hitTokens;
  }

  /** Full prompt blocks queried at successful admissions. */
  public long queriedBlocks() {
    return queriedBlocks;
  }

  /** Full prompt blocks served from the prefix cache at successful admissions. */
  public long hitBlocks() {
    return hitBlocks;
  }

  /** {@link #hitTokens()} / {@link #queriedTokens()}, 0 when nothing was queried. */
  public double tokenHitRate() {
    return queriedTokens == 0 ? 0.0 : (double) hitTokens / queriedTokens;
  }

  /** {@link #hitBlocks()} / {@link #queriedBlocks()}, 0 when nothing was queried. */
  public double blockHitRate() {
    return queriedBlocks == 0 ? 0.0 : (double) hitBlocks / queriedBlocks;
  }

  /**
   * Ids of the free blocks in reuse order (next victim first). Allocates; for tests and
   * diagnostics only.
   */
  public int[] freeListOrder() {
    int[] out = new int[freeList.size()];
    int k = 0;
    for (int id = freeList.head(); id != IntrusiveList.NONE; id = freeList.next(id)) {
      out[k++] = id;
    }
    return Arrays.copyOf(out, k);
  }

  /** Whether block {@code id} currently carries a registered prefix hash. */
  public boolean isCached(int id) {
    return hashed[id];
  }

  /**
   * The block holding prompt content {@code h}, or {@link LongIntMap#MISSING}. The index keeps
   * the entries of evicted blocks (removing them cost a cache miss on every reuse of a cached
   * block, a quarter of a large cluster's run): an entry counts only while its block still
   * carries that hash.
   */
  private int cached(long h) {
    int id = index.get(h);
    return id != LongIntMap.MISSING && hashed[id] && blockHash[id] == h ? id : LongIntMap.MISSING;
  }

  /** Registers block {@code id} as holding content {@code h}; clears out stale entries when due. */
  private void register(long h, int id) {
    if (index.size() >= staleLimit) {
      // three quarters full: refill with the live entries only (sequential, amortized over the
      // evictions that made the stale ones)
      index.clear();
      for (int b = 0; b < totalBlocks; b++) {
        if (hashed[b]) {
          index.put(blockHash[b], b);
        }
      }
    }
    index.put(h, id);
    blockHash[id] = h;
    hashed[id] = true;
  }

  /** Caches block {@code id} as another copy of {@code h}, whose cached copy is {@code copy}. */
  private void duplicate(int copy, int id, long h) {
    blockHash[id] = h;
    hashed[id] = true;
    int after = nextSame[copy];
    nextSame[copy] = id;
    prevSame[id] = copy;
    nextSame[id] = after;
    if (after >= 0) {
      prevSame[after] = id;
    }
  }

  /**
   * Block {@code id} is taken for new content: its hash, if any, is dropped. When the index points
   * at it and another copy of the hash is cached, the index points at that copy instead; otherwise
   * the entry is left stale (see {@link #cached}).
   */
  private void evict(int id) {
    if (!hashed[id]) {
      return;
    }
    hashed[id] = false;
    int next = nextSame[id];
    int prev = prevSame[id];
    if (next < 0 && prev < 0) {
      return;
    }
    if (prev >= 0) {
      nextSame[prev] = next;
    }
    if (next >= 0) {
      prevSame[next] = prev;
    }
    nextSame[id] = -1;
    prevSame[id] = -1;
    long h = blockHash[id];
    if (index.get(h) == id) {
      index.put(h, next >= 0 ? next : prev);
    }
  }

  /** Takes {@code count} free blocks as {@code table}'s resident ones (never in the prefix cache). */
  private void takeResidentBlocks(BlockTable table, int count) {
    for (int k = 0; k < count; k++) {
      int id = freeList.head();
      freeList.unlink(id);
      evict(id);
      refCount[id] = 1;
      table.addResident(id);
    }
  }

  private void takeFreeBlocks(BlockTable table, int count, int totalTokens) {
    for (int k = 0; k < count; k++) {
      int id = freeList.head();
      freeList.unlink(id);
      evict(id);
      refCount[id] = 1;
      table.add(id);
    }
    int fullPromptBlocksNow = Math.min(table.promptBlockHashes.length, totalTokens / blockSizeTokens);
    for (int b = table.hashedBlocks; b < fullPromptBlocksNow; b++) {
      int id = table.blockIds[b];
      long h = table.promptBlockHashes[b];
      if (!hashed[id]) {
        int copy = cached(h);
        if (copy == LongIntMap.MISSING) {
          register(h, id);
        } else {
          duplicate(copy, id, h);
        }
      }
      if (cpu != null) {
        offloadBlock(table.promptBlockHashes, b, 0);
      }
    }
    if (fullPromptBlocksNow > table.hashedBlocks) {
      table.hashedBlocks = fullPromptBlocksNow;
    }
    if (offloadGenerated) {
      // full blocks past the prompt's full ones hold generated tokens: offloaded too
      int full = totalTokens / blockSizeTokens;
      for (int b = Math.max(table.promptBlockHashes.length, table.offloadedBlocks); b < full; b++) {
        offloadBlock(null, 0, BlockHashes.generatedBlock(table.number, b));
      }
      table.offloadedBlocks = Math.max(table.offloadedBlocks, full);
    }
    int used = totalBlocks - freeList.size();
    if (used > peakUsedBlocks) {
      peakUsedBlocks = used;
    }
  }
}
