package io.blis.engine.policy;

import java.util.Arrays;

/**
 * A set of at most {@code capacity} block hashes that evicts the least recently used, on
 * primitive arrays (no boxing, no allocation per call): an open-addressing table maps each hash
 * to the sequence number of its latest use, and a ring of uses in order (twice the capacity,
 * compacted when full) gives the eviction order
 * (a use that a later one superseded is skipped when it reaches the head).
 */
final class HashLru {

  private static final long EMPTY = -1;

  private final int capacity;
  private final long[] keys;
  private final long[] seqs;
  private final int mask;
  private final long[] ring;
  private final long[] scratch;
  private long head;
  private long next;
  private int size;

  HashLru(int capacity) {
    this.capacity = capacity;
    int table = Integer.highestOneBit(Math.max(4, capacity) * 4 - 1) << 1;
    keys = new long[table];
    seqs = new long[table];
    Arrays.fill(seqs, EMPTY);
    mask = table - 1;
    ring = new long[capacity * 2];
    scratch = new long[capacity + 1];
  }

  boolean contains(long hash) {
    return seqs[find(hash)] != EMPTY;
  }

  /** Marks {@code hash} as used now, adding it (and evicting the least recent) if absent. */
  void touch(long hash) {
    if (next - head == ring.length) {
      compact();
    }
    long seq = next++;
    ring[(int) (seq % ring.length)] = hash;
    int i = find(hash);
    if (seqs[i] == EMPTY) {
      keys[i] = hash;
      size++;
    }
    seqs[i] = seq;
    while (size > capacity) {
      popHead();
    }
  }

  int size() {
    return size;
  }

  /**
   * Rewrites the ring with only the latest use of each hash (at most {@code capacity}), oldest
   * first, renumbering them from 0.
   */
  private void compact() {
    int k = 0;
    for (long seq = head; seq < next; seq++) {
      long hash = ring[(int) (seq % ring.length)];
      if (seqs[find(hash)] == seq) {
        scratch[k++] = hash;
      }
    }
    for (int j = 0; j < k; j++) {
      ring[j] = scratch[j];
      seqs[find(scratch[j])] = j;
    }
    head = 0;
    next = k;
  }

  /** Drops the oldest use; removes its hash when that was the hash's latest use. */
  private void popHead() {
    long seq = head++;
    long hash = ring[(int) (seq % ring.length)];
    int i = find(hash);
    if (seqs[i] == seq) {
      remove(i);
    }
  }

  private int find(long hash) {
    int i = (int) mix(hash) & mask;
    while (seqs[i] != EMPTY && keys[i] != hash) {
      i = (i + 1) & mask;
    }
    return i;
  }

  /** Backward-shift deletion keeps every probe chain unbroken. */
  private void remove(int i) {
    size--;
    int hole = i;
    int j = i;
    while (true) {
      j = (j + 1) & mask;
      if (seqs[j] == EMPTY) {
        break;
      }
      int home = (int) mix(keys[j]) & mask;
      boolean movable = hole <= j ? home <= hole || home > j : home <= hole && home > j;
      if (movable) {
        keys[hole] = keys[j];
        seqs[hole] = seqs[j];
        hole = j;
      }
    }
    seqs[hole] = EMPTY;
  }

  private static long mix(long h) {
    h ^= h >>> 33;
    h *= 0xff51afd7ed558ccdL;
    return h ^ (h >>> 33);
  }
}
