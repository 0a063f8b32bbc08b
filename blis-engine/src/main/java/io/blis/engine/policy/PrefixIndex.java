package io.blis.engine.policy;

import java.util.Arrays;

/**
 * A router's own record of the prompt blocks it sent to each instance: per instance (by an integer
 * key), a least-recently-used set of at most {@code capacityBlocks} chained block hashes (block
 * i's hash covers blocks 0..i, so a match stops at the first miss). The router knows only what it
 * routed, not what the instances' caches still hold. Shared by the {@code prefix-affinity} router
 * and the weighted router's {@code prefix-affinity} scorer.
 */
final class PrefixIndex {

  private final int capacityBlocks;
  private HashLru[] lru = new HashLru[0];

  PrefixIndex(int capacityBlocks) {
    if (capacityBlocks < 1) {
      throw new IllegalArgumentException("prefix index: capacity must be at least 1 block, got " + capacityBlocks);
    }
    this.capacityBlocks = capacityBlocks;
  }

  /** How many leading blocks of {@code hashes} were recorded for instance {@code key}. */
  int matched(long[] hashes, int key) {
    HashLru set = key < lru.length ? lru[key] : null;
    if (set == null) {
      return 0;
    }
    int m = 0;
    while (m < hashes.length && set.contains(hashes[m])) {
      m++;
    }
    return m;
  }

  /** Records that the blocks {@code hashes} were sent to instance {@code key}. */
  void record(long[] hashes, int key) {
    if (key >= lru.length) {
      lru = Arrays.copyOf(lru, Math.max(key + 1, lru.length * 2));
    }
    HashLru set = lru[key];
    if (set == null) {
      set = lru[key] = new HashLru(capacityBlocks);
    }
    // last block first: the leading blocks end up most recent, so eviction trims a prefix from its
    // end and never leaves a tail that the chained match (which stops at the first miss) cannot use
    for (int b = hashes.length - 1; b >= 0; b--) {
      set.touch(hashes[b]);
    }
  }
}
