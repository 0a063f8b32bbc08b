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
      // Multiply-shift range reduction of the high 32 bits (no division).
      dest[offset + i] = FIRST_ID + (int) (((h >>> 32) * (VOCAB_SIZE - FIRST_ID)) >>> 32);
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
   * @throws IllegalArgumentException if the lengths are inconsistent, the prompt is longer than
   *     {@link RequestSpec#MAX_TOKENS}, or a prefix length is given without a group
   */
  public static int[] build(
      long seed, String prefixGroup, int prefixLength, long contentId, int inputTokens) {
    if (inputTokens > RequestSpec.MAX_TOKENS) {
      throw new IllegalArgumentException("a prompt of " + inputTokens + " tokens is longer than the "
          + RequestSpec.MAX_TOKENS + " a request may have");
    }
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

  /** Content tokens a fingerprint encodes exactly. */
  public static final int FINGERPRINT_TOKENS = 4;

  private static final long RADIX = VOCAB_SIZE - FIRST_ID + 1;

  /**
   * A 64-bit content id for the {@code count} tokens from {@code offset}, used by traces. When the
   * first {@value #FINGERPRINT_TOKENS} (or fewer) tokens are ids in [{@value #FIRST_ID}, {@value
   * #VOCAB_SIZE}), the id encodes them exactly as digits (a non-negative number); otherwise it is a
   * hash of them with the sign bit set. Contents that start alike get the same id, and {@link
   * #rebuild} turns an id back into a content that starts with the same tokens.
   */
  public static long fingerprint(int[] tokens, int offset, int count) {
    int n = Math.min(FINGERPRINT_TOKENS, count);
    long digits = 0;
    long scale = 1;
    for (int i = 0; i < n; i++) {
      int t = tokens[offset + i];
      if (t < FIRST_ID || t >= VOCAB_SIZE) {
        long h = 0x9E3779B97F4A7C15L;
        for (int j = 0; j < n; j++) {
          h = Sampling.mix(h, tokens[offset + j]);
        }
        return h | Long.MIN_VALUE;
      }
      digits += (t - FIRST_ID + 1) * scale;
      scale *= RADIX;
    }
    return digits;
  }

  /**
   * A prompt with the structure a trace row records: {@code prefixLength} tokens of the group's
   * content, then {@code inputTokens - prefixLength} tokens of content {@code contentId}: the
   * tokens encoded in a non-negative id first (see {@link #fingerprint}), then a stream keyed by the
   * id. {@code fingerprint} of the rebuilt content equals {@code contentId} whenever the id was
   * produced by {@code fingerprint} for a content of at least as many tokens.
   */
  public static int[] rebuild(
      long seed, String prefixGroup, int prefixLength, long contentId, int inputTokens) {
    int[] tokens = build(seed, prefixGroup, prefixLength, contentId, inputTokens);
    if (contentId > 0) {
      long rest = contentId;
      for (int i = prefixLength; i < inputTokens && rest > 0; i++) {
        int digit = (int) (rest % RADIX);
        rest /= RADIX;
        if (digit == 0) {
          break;
        }
        tokens[i] = FIRST_ID + digit - 1;
      }
    }
    return tokens;
  }

  /**
   * As {@link #build}, in the form a trace without token ids records exactly: the content's first
   * (up to {@value #FINGERPRINT_TOKENS}) tokens are those {@code build} gives, the rest a stream
   * keyed by their {@link #fingerprint}, so that {@link #rebuild} from the fingerprint gives these
   * very tokens. Prompts of distinct content ids differ unless their first tokens coincide.
   */
  public static int[] rebuildable(
      long seed, String prefixGroup, int prefixLength, long contentId, int inputTokens) {
    // the first content tokens build would give, and only those: the fingerprint reads no more
    int[] first = new int[Math.max(0, Math.min(FINGERPRINT_TOKENS, inputTokens - prefixLength))];
    fill(first, 0, first.length, contentKey(seed, contentId));
    return rebuild(seed, prefixGroup, prefixLength, fingerprint(first, 0, first.length), inputTokens);
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
