package io.blis.workload.trace;

import java.util.Arrays;
import java.util.BitSet;

/**
 * A set of longs that is small for the ids traces use: ids in [0, {@value #DENSE_LIMIT}) take one
 * bit each up to the largest (1.25 MB for ten million requests numbered from 0); others go to an
 * open-addressing hash table of 16 bytes per id at most.
 */
final class LongSet {

  /** Ids below this are kept in the bit set (at most 16 MB of bits). */
  static final long DENSE_LIMIT = 1L << 27;

  private static final long EMPTY = Long.MIN_VALUE;

  private final BitSet dense = new BitSet();
  private long[] table = new long[16];
  private int sparseSize;
  private boolean hasEmptyValue;

  LongSet() {
    Arrays.fill(table, EMPTY);
  }

  /** Adds {@code v}; false when it was already there. */
  boolean add(long v) {
    if (v >= 0 && v < DENSE_LIMIT) {
      if (dense.get((int) v)) {
        return false;
      }
      dense.set((int) v);
      return true;
    }
    if (v == EMPTY) {
      boolean added = !hasEmptyValue;
      hasEmptyValue = true;
      return added;
    }
    int slot = slot(v, table);
    if (table[slot] == v) {
      return false;
    }
    table[slot] = v;
    if (++sparseSize * 2 > table.length) {
      grow();
    }
    return true;
  }

  boolean contains(long v) {
    if (v >= 0 && v < DENSE_LIMIT) {
      return dense.get((int) v);
    }
    if (v == EMPTY) {
      return hasEmptyValue;
    }
    return table[slot(v, table)] == v;
  }

  /** The slot holding {@code v}, or the empty slot where it belongs (linear probing). */
  private static int slot(long v, long[] t) {
    int mask = t.length - 1;
    long h = v * 0x9E3779B97F4A7C15L;
    int i = (int) (h ^ (h >>> 32)) & mask;
    while (t[i] != EMPTY && t[i] != v) {
      i = (i + 1) & mask;
    }
    return i;
  }

  private void grow() {
    long[] bigger = new long[table.length * 2];
    Arrays.fill(bigger, EMPTY);
    for (long v : table) {
      if (v != EMPTY) {
        bigger[slot(v, bigger)] = v;
      }
    }
    table = bigger;
  }
}
