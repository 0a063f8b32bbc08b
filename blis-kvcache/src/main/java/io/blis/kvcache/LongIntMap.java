package io.blis.kvcache;

/**
 * Open-addressing map from 64-bit block hashes to block ids, linear probing with backward-shift
 * deletion (the CPU tier) or none (the GPU pool leaves an evicted block's entry in place, checks
 * what it finds, and clears and refills the map when stale entries have filled it to its limit). Fixed capacity, so it never resizes
 * and never allocates after construction. Each slot keeps its key and value side by side in one
 * {@code long[]}, so a probe touches one cache line, not two: on large pools the lookups and
 * deletions are dominated by cache misses.
 */
final class LongIntMap {

  static final int MISSING = -1;

  /** Slot i: key at {@code 2i}, value at {@code 2i + 1} ({@link #MISSING} marks an empty slot). */
  private final long[] slots;
  private final int mask;
  private int size;

  LongIntMap(int maxEntries) {
    int cap = capacityFor(maxEntries);
    slots = new long[2 * cap];
    for (int i = 1; i < slots.length; i += 2) {
      slots[i] = MISSING;
    }
    mask = cap - 1;
  }

  /** The slots of a map for {@code maxEntries}: a power of two, at least twice as many, at most 2^29. */
  static int capacityFor(int maxEntries) {
    int cap = Integer.highestOneBit(Math.max(4, maxEntries) * 2 - 1) << 1;
    if (cap < 0 || cap > (1 << 29)) {
      cap = 1 << 29;
    }
    return cap;
  }

  int size() {
    return size;
  }

  private int slot(long key) {
    long h = key * 0x9E3779B97F4A7C15L;
    return (int) (h ^ (h >>> 32)) & mask;
  }

  /** The slot holding {@code key}, or the empty slot that ends its probe chain. */
  private int find(long key) {
    for (int i = slot(key); ; i = (i + 1) & mask) {
      if ((int) slots[2 * i + 1] == MISSING || slots[2 * i] == key) {
        return i;
      }
    }
  }

  int get(long key) {
    return (int) slots[2 * find(key) + 1];
  }

  /** Maps {@code key} to {@code value}, replacing what it mapped to. */
  void put(long key, int value) {
    int i = find(key);
    if ((int) slots[2 * i + 1] == MISSING) {
      size++;
    }
    slots[2 * i] = key;
    slots[2 * i + 1] = value;
  }

  /** Slots of the table (entries fit in fewer: keep the load well below 1). */
  int capacity() {
    return mask + 1;
  }

  /** Removes every entry. */
  void clear() {
    for (int i = 1; i < slots.length; i += 2) {
      slots[i] = MISSING;
    }
    size = 0;
  }

  /** Maps {@code key} to {@code value} unless the key is present; returns whether it was added. */
  boolean putIfAbsent(long key, int value) {
    int i = find(key);
    if ((int) slots[2 * i + 1] != MISSING) {
      return false;
    }
    slots[2 * i] = key;
    slots[2 * i + 1] = value;
    size++;
    return true;
  }

  /** Removes {@code key} if it maps to {@code value}. */
  void removeIfMapsTo(long key, int value) {
    int i = find(key);
    if ((int) slots[2 * i + 1] != value || value == MISSING) {
      return; // absent, or mapping to another block
    }
    // backward-shift deletion keeps every probe chain intact
    int hole = i;
    int j = i;
    while (true) {
      j = (j + 1) & mask;
      if ((int) slots[2 * j + 1] == MISSING) {
        break;
      }
      long k = slots[2 * j];
      int home = slot(k);
      boolean movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
      if (movable) {
        slots[2 * hole] = k;
        slots[2 * hole + 1] = slots[2 * j + 1];
        hole = j;
      }
    }
    slots[2 * hole + 1] = MISSING;
    size--;
  }
}
