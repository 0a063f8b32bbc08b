package io.blis.kvcache;

/**
 * Chained 64-bit hashes of the full blocks of a token sequence, the keys of the prefix cache.
 *
 * <p>The hash of block {@code i} mixes the hash of block {@code i - 1} with the token ids of block
 * {@code i}, so two sequences share the hash of block {@code i} exactly when (up to 64-bit
 * collisions) they share every token of blocks {@code 0..i}. A trailing partial block has no hash:
 * only full blocks can be cached and shared, as in vLLM.
 */
public final class BlockHashes {

  private static final long SEED = 0x2545F4914F6CDD1DL;
  private static final long MUL = 0x9E3779B97F4A7C15L;

  private BlockHashes() {}

  /**
   * Hashes of the {@code tokens.length / blockSizeTokens} full blocks of {@code tokens}.
   *
   * @throws IllegalArgumentException if {@code blockSizeTokens < 1}
   */
  public static long[] ofFullBlocks(int[] tokens, int blockSizeTokens) {
    return ofFullBlocks(tokens, blockSizeTokens, "");
  }

  /**
   * As {@link #ofFullBlocks(int[], int)}, every block's hash also keyed by {@code extraKey} (the
   * LoRA adapter a request names, as vLLM keys its block hashes by the adapter: the same prompt
   * under another adapter holds other KV). An empty key gives the plain hashes.
   */
  public static long[] ofFullBlocks(int[] tokens, int blockSizeTokens, String extraKey) {
    if (blockSizeTokens < 1) {
      throw new IllegalArgumentException("block size must be at least 1 token, got " + blockSizeTokens);
    }
    int blocks = tokens.length / blockSizeTokens;
    long[] out = new long[blocks];
    long prev = extraKey.isEmpty() ? SEED : keyed(extraKey);
    for (int b = 0; b < blocks; b++) {
      prev = hashBlock(prev, tokens, b * blockSizeTokens, blockSizeTokens);
      out[b] = prev;
    }
    return out;
  }

  /** The chain's first link for a non-empty extra key: the key's characters mixed into the seed. */
  private static long keyed(String key) {
    long h = SEED ^ 0x9E3779B97F4A7C15L;
    for (int i = 0; i < key.length(); i++) {
      h = (h ^ key.charAt(i)) * MUL;
      h ^= h >>> 29;
    }
    return finish(h ^ key.length());
  }

  /** Hash of the block {@code tokens[from, from + length)} chained to {@code previousHash}. */
  static long hashBlock(long previousHash, int[] tokens, int from, int length) {
    long h = previousHash ^ (length * MUL);
    for (int i = from, end = from + length; i < end; i++) {
      h = (h ^ (tokens[i] & 0xFFFFFFFFL)) * MUL;
      h ^= h >>> 29;
    }
    return finish(h);
  }

  /**
   * A key for block {@code index} of the generated tokens of the request numbered {@code
   * request}: no prompt block has it, and no other request's block (their token ids are not known).
   */
  static long generatedBlock(long request, int index) {
    return finish((request * MUL) ^ (0x5DEECE66DL + index) * 0xD1B54A32D192ED03L);
  }

  /** SplitMix64 finalizer: full avalanche of the running state. */
  private static long finish(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }
}
