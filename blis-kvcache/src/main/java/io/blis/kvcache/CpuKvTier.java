package io.blis.kvcache;

/**
 * The CPU tier of the KV cache (vLLM's OffloadingConnector with a CPU backend): a fixed number of
 * block slots in host memory holding copies of computed prompt blocks, keyed by their chained
 * hash, evicted least recently used first. Every prompt block the GPU pool registers is stored
 * here too (the connector offloads blocks as they are computed), so a prefix evicted from the GPU
 * can be reloaded instead of recomputed. Primitive arrays only; no allocation after construction.
 */
final class CpuKvTier {

  private final int capacity;
  private final LongIntMap slotOf;
  private final long[] hashOf;
  private final IntrusiveList lru; // head = least recently used
  private int size;

  CpuKvTier(int capacityBlocks) {
    if (capacityBlocks < 1) {
      throw new IllegalArgumentException("CPU KV blocks must be at least 1, got " + capacityBlocks);
    }
    capacity = capacityBlocks;
    slotOf = new LongIntMap(capacityBlocks);
    hashOf = new long[capacityBlocks];
    lru = new IntrusiveList(capacityBlocks);
  }

  int capacity() {
    return capacity;
  }

  int size() {
    return size;
  }

  boolean contains(long hash) {
    return slotOf.get(hash) != LongIntMap.MISSING;
  }

  /** Stores {@code hash} as most recently used, evicting the least recently used when full. */
  void store(long hash) {
    int slot = slotOf.get(hash);
    if (slot != LongIntMap.MISSING) {
      lru.unlink(slot);
      lru.append(slot);
      return;
    }
    if (size == capacity) {
      slot = lru.head();
      lru.unlink(slot);
      slotOf.removeIfMapsTo(hashOf[slot], slot);
    } else {
      slot = size++;
    }
    hashOf[slot] = hash;
    slotOf.putIfAbsent(hash, slot);
    lru.append(slot);
  }
}
