package io.blis.kvcache;

/**
 * The CPU tier of the KV cache (vLLM's OffloadingConnector with a CPU backend): a fixed number of
 * block slots in host memory holding copies of computed prompt blocks, keyed by their chained
 * hash, evicted least recently used first. Every prompt block the GPU pool registers is stored
 * here too (the connector offloads blocks as they are computed), so a prefix evicted from the GPU
 * can be reloaded instead of recomputed.
 *
 * <p>With secondary tiers behind it (see {@link OffloadTiers}) a slot can also be <em>pinned</em>
 * (a copy to a secondary tier is being written from it) or <em>pending</em> (a block is being read
 * into it from a secondary tier); neither can be evicted, as vLLM's offloading manager skips
 * blocks whose reference count is not zero. A store that finds every slot so held is skipped.
 * Primitive arrays only; no allocation after construction.
 */
final class CpuKvTier {

  /** {@link #state}: not held. */
  static final int MISS = 0;
  /** {@link #state}: held and readable. */
  static final int READY = 1;
  /** {@link #state}: being read in from a secondary tier. */
  static final int PENDING = 2;

  private final int capacity;
  private final LongIntMap slotOf;
  private final long[] hashOf;
  private final int[] pins;
  private final boolean[] pending;
  private final IntrusiveList lru; // head = least recently used
  private int size;
  private int held; // slots pinned or pending

  CpuKvTier(int capacityBlocks) {
    if (capacityBlocks < 1) {
      throw new IllegalArgumentException("CPU KV blocks must be at least 1, got " + capacityBlocks);
    }
    capacity = capacityBlocks;
    slotOf = new LongIntMap(capacityBlocks);
    hashOf = new long[capacityBlocks];
    pins = new int[capacityBlocks];
    pending = new boolean[capacityBlocks];
    lru = new IntrusiveList(capacityBlocks);
  }

  int capacity() {
    return capacity;
  }

  int size() {
    return size;
  }

  boolean contains(long hash) {
    return state(hash) == READY;
  }

  /** {@link #MISS}, {@link #READY} or {@link #PENDING}. */
  int state(long hash) {
    int slot = slotOf.get(hash);
    return slot == LongIntMap.MISSING ? MISS : pending[slot] ? PENDING : READY;
  }

  /**
   * Stores {@code hash} as most recently used, evicting the least recently used evictable block
   * when full. An already held block is only touched.
   *
   * @return true when the block was newly stored; false when it was held already or no slot could
   *     be freed (every slot pinned or pending)
   */
  boolean store(long hash) {
    int slot = slotOf.get(hash);
    if (slot != LongIntMap.MISSING) {
      touch(slot);
      return false;
    }
    slot = freeSlot();
    if (slot < 0) {
      return false;
    }
    place(slot, hash, false);
    return true;
  }

  /** Slots that a store could take now: free ones and evictable ones. */
  int available() {
    return capacity - held;
  }

  /**
   * Takes a slot for each of {@code n} hashes of {@code hashes} from {@code from} (none held yet),
   * marked pending: all or nothing.
   *
   * @return false, changing nothing, when fewer than {@code n} slots are available
   */
  boolean prepare(long[] hashes, int from, int n) {
    if (n > available()) {
      return false;
    }
    for (int k = 0; k < n; k++) {
      int slot = freeSlot();
      place(slot, hashes[from + k], true);
    }
    return true;
  }

  /** A pending block was read in: it becomes readable (and most recently used). */
  void complete(long hash) {
    int slot = slotOf.get(hash);
    if (slot != LongIntMap.MISSING && pending[slot]) {
      pending[slot] = false;
      release(slot);
      touch(slot);
    }
  }

  /** Holds {@code hash}'s slot while a copy is written from it; no effect on a block not held. */
  void pin(long hash) {
    int slot = slotOf.get(hash);
    if (slot != LongIntMap.MISSING) {
      if (pins[slot]++ == 0 && !pending[slot]) {
        held++;
      }
    }
  }

  /** A copy from {@code hash}'s slot was written. */
  void unpin(long hash) {
    int slot = slotOf.get(hash);
    if (slot != LongIntMap.MISSING && pins[slot] > 0) {
      if (--pins[slot] == 0 && !pending[slot]) {
        held--;
      }
    }
  }

  private void touch(int slot) {
    lru.unlink(slot);
    lru.append(slot);
  }

  private void release(int slot) {
    if (pins[slot] == 0) {
      held--;
    }
  }

  private void place(int slot, long hash, boolean isPending) {
    hashOf[slot] = hash;
    pins[slot] = 0;
    pending[slot] = isPending;
    if (isPending) {
      held++;
    }
    slotOf.putIfAbsent(hash, slot);
    lru.append(slot);
  }

  /** A free slot, or the least recently used evictable one emptied; -1 when none. */
  private int freeSlot() {
    if (size < capacity) {
      return size++;
    }
    if (held == capacity) {
      return -1;
    }
    int slot = lru.head();
    while (pins[slot] > 0 || pending[slot]) {
      slot = lru.next(slot);
    }
    lru.unlink(slot);
    slotOf.removeIfMapsTo(hashOf[slot], slot);
    return slot;
  }
}
