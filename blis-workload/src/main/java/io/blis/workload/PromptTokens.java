package io.blis.workload;

/**
 * Deterministic synthetic token ids. A prompt is built from <em>content keys</em>: the tokens of a
 * key are a pure function of the key and the position, so two prompts built from the same key
 * share identical ids (and get prefix-cache hits), while different keys almost never collide.
 *
 * <p>Ids lie in [{@value #FIRST_ID}, {@value #VOCAB_SIZE}); ids below {@value #FIRST_ID} are left
 * for special tokens, and {@link #BOS} marks the beginning of a sequence.
 */
public final class PromptTokens {

  /** Beginning-of-sequence token id. */
  public static final int BOS = 1;
  /** Smallest content token id. */
  public static final int FIRST_ID = 3;
  /** Exclusive upper bound of token ids (a Llama-2 sized vocabulary). */
  public static final int VOCAB_SIZE = 32000;

  private PromptTokens() {}

  /**
   * Writes {@code count} ids of content {@code contentKey} into {@code dest} from {@code offset},
   * starting at position {@code firstPosition} of that content.
   */
  public static void fill(int[] dest, int offset, int count, long contentKey, int firstPosition) {
    long base = Sampling.mix(contentKey, 0x5DEECE66DL);
    for (int i = 0; i < count; i++) {
      long h = Sampling.mix(base, firstPosition + i);
      dest[offset + i] = FIRST_ID + (int) Long.remainderUnsigned(h, VOCAB_SIZE - FIRST_ID);
    }
  }

  /** Writes {@code count} ids of content {@code contentKey}, from its first position. */
  public static void fill(int[] dest, int offset, int count, long contentKey) {
    fill(dest, offset, count, contentKey, 0);
  }

  /**
   * The canonical prompt of this module: {@code prefixLength} tokens of the prefix group's content
   * followed by {@code inputTokens - prefixLength} tokens of content {@code contentId}, both under
   * {@code seed}. Equal arguments give equal prompts; prompts of one group share their first {@code
   * min(prefixLength)} tokens; prompts with the same content id and a longer input extend the
   * shorter ones (this is how accumulated multi-turn contexts keep their cache hits).
   *
   * @throws IllegalArgumentException if the lengths are inconsistent or a prefix length is given
   *     without a group
   */
  public static int[] build(
      long seed, String prefixGroup, int prefixLength, long contentId, int inputTokens) {
    if (inputTokens < 1 || prefixLength < 0 || prefixLength > inputTokens) {
      throw new IllegalArgumentException(
          "prompt of " + inputTokens + " tokens cannot have a prefix of " + prefixLength + " tokens");
    }
    if (prefixLength > 0 && prefixGroup.isEmpty()) {
      throw new IllegalArgumentException("a prefix length of " + prefixLength + " needs a prefix group");
    }
    int[] tokens = new int[inputTokens];
    if (prefixLength > 0) {
      fill(tokens, 0, prefixLength, prefixKey(seed, prefixGroup));
    }
    fill(tokens, prefixLength, inputTokens - prefixLength, contentKey(seed, contentId));
    return tokens;
  }

  /** Key of the shared content of a prefix group. */
  public static long prefixKey(long seed, String prefixGroup) {
    return key(seed, "prefix:" + prefixGroup);
  }

  /** Key of the per-request content {@code contentId}. */
  public static long contentKey(long seed, long contentId) {
    return key(seed, "content", contentId);
  }

  /**
   * A 64-bit fingerprint of the first {@code min(16, count)} tokens from {@code offset}: two
   * contents with equal fingerprints are taken to be the same content (traces use it as content id).
   */
  public static long fingerprint(int[] tokens, int offset, int count) {
    long h = 0x9E3779B97F4A7C15L;
    int n = Math.min(16, count);
    for (int i = 0; i < n; i++) {
      h = Sampling.mix(h, tokens[offset + i]);
    }
    return h;
  }

  /** A key identifying named content (a prefix group, for example) under a seed. */
  public static long key(long seed, String name) {
    return Sampling.subSeed(seed, name);
  }

  /** A key identifying the {@code index}-th item of a family of contents under a seed. */
  public static long key(long seed, String family, long index) {
    return Sampling.mix(Sampling.subSeed(seed, family), index);
  }
}
