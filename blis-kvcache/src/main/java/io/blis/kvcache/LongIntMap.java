package io.blis.kvcache;

/**
 * Open-addressing map from 64-bit block hashes to block ids, linear probing with backward-shift
 * deletion. Fixed capacity (the pool never holds more entries than blocks), so it never resizes
 * and never allocates after construction.
 */
final class LongIntMap {

  static final int MISSING = -1;

  private final long[] keys;
  private final int[] values; // MISSING marks an empty slot
  private final int mask;
  private int size;

  LongIntMap(int maxEntries) {
    int cap = Integer.highestOneBit(Math.max(4, maxEntries) * 2 - 1) << 1;
    if (cap < 0 || cap > (1 << 30)) {
      cap = 1 << 30;
    }
    keys = new long[cap];
    values = new int[cap];
    java.util.Arrays.fill(values, MISSING);
    mask = cap - 1;
  }

  int size() {
    return size;
  }

  private int slot(long key) {
    long h = key * 0x9E3779B97F4A7C15L;
    return (int) (h ^ (h >>> 32)) & mask;
  }

  int get(long key) {
    for (int i = slot(key); ; i = (i + 1) & mask) {
      int v = values[i];
      if (v == MISSING) {
        return MISSING;
      }
      if (keys[i] == key) {
        return v;
      }
    }
  }

  /** Maps {@code key} to {@code value} unless the key is present; returns whether it was added. */
  boolean putIfAbsent(long key, int value) {
    for (int i = slot(key); ; i = (i + 1) & mask) {
      int v = values[i];
      if (v == MISSING) {
        keys[i] = key;
        values[i] = value;
        size++;
        return true;
      }
      if (keys[i] == key) {
        return false;
      }
    }
  }

  /** Removes {@code key} if it maps to {@code value}. */
  void removeIfMapsTo(long key, int value) {
    int i = slot(key);
    while (true) {
      int v = values[i];
      if (v == MISSING) {
        return;
      }
      if (keys[i] == key) {
        if (v != value) {
          return;
        }
        break;
      }
      i = (i + 1) & mask;
    }
    // backward-shift deletion keeps every probe chain intact
    int hole = i;
    int j = i;
    while (true) {
      j = (j + 1) & mask;
      if (values[j] == MISSING) {
        break;
      }
      int home = slot(keys[j]);
      boolean movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
      if (movable) {
        keys[hole] = keys[j];
        values[hole] = values[j];
        hole = j;
      }
    }
    values[hole] = MISSING;
    size--;
  }
}
