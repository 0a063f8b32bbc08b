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
  private final IntrusiveList freeList; // head = next block to reuse
  private final LongIntMap index;
  /** Entries (live and stale) at which the index is refilled with the live ones. */
  private final int staleLimit;
  private final CpuKvTier cpu;
  private long cpuLoadedBlocks;

  private long queriedTokens;
  private long hitTokens;
  private long queriedBlocks;
  private long hitBlocks;
  private int peakUsedBlocks;

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
    freeList = new IntrusiveList(n);
    for (int i = 0; i < n; i++) {
      freeList.append(i);
    }
    index = new LongIntMap(n);
    staleLimit = index.capacity() / 4 * 3;
    cpu = cpuBlocks > 0 ? new CpuKvTier((int) cpuBlocks) : null;
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
    long[] hashes = BlockHashes.ofFullBlocks(promptTokens, blockSizeTokens);
    int expected = (int) Math.min(totalBlocks, blocksFor(Math.max(expectedTokens, promptTokens.length)));
    return new BlockTable(hashes, promptTokens.length, expected);
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
    int newBlocks = blocksFor(totalTokens) - cachedBlocks;
    if ((long) newBlocks + claimFromFree > freeList.size()) {
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
    takeFreeBlocks(table, newBlocks, totalTokens);
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
    int newBlocks = blocksFor(totalTokens) - table.numBlocks;
    if (newBlocks > freeList.size()) {
      return false;
    }
    takeFreeBlocks(table, Math.max(0, newBlocks), totalTokens);
    return true;
  }

  /** Releases every block of {@code table} (last block first); cached hashes stay until reuse. */
  public void free(BlockTable table) {
    for (int i = table.numBlocks - 1; i >= 0; i--) {
      int id = table.blockIds[i];
      if (--refCount[id] == 0) {
        freeList.append(id);
      } else if (refCount[id] < 0) {
        throw new IllegalStateException("block " + id + " freed more often than referenced");
      }
    }
    table.numBlocks = 0;
    table.hashedBlocks = 0;
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

  private void takeFreeBlocks(BlockTable table, int count, int totalTokens) {
    for (int k = 0; k < count; k++) {
      int id = freeList.head();
      freeList.unlink(id);
      hashed[id] = false; // its index entry, if any, is stale from now on (see cached)
      refCount[id] = 1;
      table.add(id);
    }
    int fullPromptBlocksNow = Math.min(table.promptBlockHashes.length, totalTokens / blockSizeTokens);
    for (int b = table.hashedBlocks; b < fullPromptBlocksNow; b++) {
      int id = table.blockIds[b];
      long h = table.promptBlockHashes[b];
      if (!hashed[id] && cached(h) == LongIntMap.MISSING) {
        register(h, id);
      }
      if (cpu != null) {
        cpu.store(h);
      }
    }
    if (fullPromptBlocksNow > table.hashedBlocks) {
      table.hashedBlocks = fullPromptBlocksNow;
    }
    int used = totalBlocks - freeList.size();
    if (used > peakUsedBlocks) {
      peakUsedBlocks = used;
    }
  }
}
