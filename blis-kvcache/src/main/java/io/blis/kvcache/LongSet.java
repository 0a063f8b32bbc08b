package io.blis.kvcache;

/**
 * A growing set of longs (open addressing, linear probing): what a secondary offload tier holds,
 * which has no capacity of its own. No removal.
 */
final class LongSet {

  private static final long EMPTY = 0L;

  private long[] slots = new long[64];
  private boolean hasZero;
  private int size;

  int size() {
    return size + (hasZero ? 1 : 0);
  }

  boolean contains(long key) {
    if (key == EMPTY) {
      return hasZero;
    }
    int mask = slots.length - 1;
    for (int i = slot(key, mask); ; i = (i + 1) & mask) {
      if (slots[i] == key) {
        return true;
      }
      if (slots[i] == EMPTY) {
        return false;
      }
    }
  }

  void add(long key) {
    if (key == EMPTY) {
      hasZero = true;
      return;
    }
    if ((size + 1) * 4 > slots.length * 3) {
      grow();
    }
    if (insert(slots, key)) {
      size++;
    }
  }

  private void grow() {
    long[] bigger = new long[slots.length * 2];
    for (long k : slots) {
      if (k != EMPTY) {
        insert(bigger, k);
      }
    }
    slots = bigger;
  }

  private static boolean insert(long[] table, long key) {
    int mask = table.length - 1;
    for (int i = slot(key, mask); ; i = (i + 1) & mask) {
      if (table[i] == key) {
        return false;
      }
      if (table[i] == EMPTY) {
        table[i] = key;
        return true;
      }
    }
  }

  private static int slot(long key, int mask) {
    long h = key * 0x9E3779B97F4A7C15L;
    return (int) (h ^ (h >>> 32)) & mask;
  }
}
