package io.blis.kvcache;

/**
 * The Java heap a {@link KvBlockPool} takes when it is built, computed from its sizes without
 * building it: its per-block arrays (reference counts, hashes, the free list's links, the chains
 * of blocks of one hash), its hash index, and the same for its CPU tier. This is what an instance
 * holds before any request, and nearly all of it: 29 bytes a GPU block in arrays and 32 to 64 in
 * the index (its slots a power of two, two to four per block), so 7,462 blocks (Llama-2-7B on an
 * H100) take 479,184 bytes. A run
 * of thousands of instances can be refused before it allocates them when these do not fit.
 * Secondary offload tiers grow with use and are not counted.
 */
public final class KvFootprint {

  /** An array's header (mark word, compressed class pointer, length), in bytes. */
  private static final long ARRAY_HEADER = 16;

  /** Objects of a pool and of its lists, maps and tier besides their arrays, in bytes. */
  private static final long OBJECTS = 512;

  private KvFootprint() {}

  /**
   * Bytes of heap a pool of {@code totalBlocks} GPU blocks and {@code cpuBlocks} CPU-tier blocks
   * takes when built (the arrays {@link KvBlockPool}'s constructor allocates).
   */
  public static long poolBytes(long totalBlocks, long cpuBlocks) {
    long n = Math.max(0, totalBlocks);
    long bytes = OBJECTS + array(n, 4) + array(n, 8) + array(n, 1) + 2 * array(n, 4) // refCount, blockHash, hashed, chains
        + 2 * array(n, 4) // the free list's links
        + array(2L * LongIntMap.capacityFor((int) Math.min(n, 1 << 29)), 8); // the hash index
    long c = Math.max(0, cpuBlocks);
    if (c > 0) {
      bytes += OBJECTS + array(2L * LongIntMap.capacityFor((int) Math.min(c, 1 << 29)), 8) // its index
          + array(c, 8) + array(c, 4) + array(c, 1) // hashes, pins, pending copies
          + 2 * array(c, 4); // its LRU list's links
    }
    return bytes;
  }

  /** Bytes of an array of {@code length} elements of {@code size} bytes, 8-byte aligned. */
  private static long array(long length, int size) {
    return ARRAY_HEADER + ((length * size + 7) & ~7L);
  }
}
