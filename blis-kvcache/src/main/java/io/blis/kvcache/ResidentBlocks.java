package io.blis.kvcache;

/**
 * Blocks a request holds besides one block per {@code blockSizeTokens} of its tokens, as vLLM's
 * hybrid KV-cache manager allocates them: a block of the pool is a page in each layer of one group
 * of layers, a request holds {@code ceil(tokens / blockSize)} blocks in the full-attention group,
 * the window's blocks in each sliding-window group while it decodes (the window plus the step's
 * tokens during a prefill chunk: {@link #forStep}), and one block (its state) in each recurrent
 * group (Mamba, linear attention).
 *
 * @param perRequest blocks every request holds whatever its length (its recurrent groups' states)
 * @param slidingGroups groups of sliding-window layers
 * @param windowBlocks the blocks one sliding-window group keeps for a decoding request: {@code
 *     ceil((window - 1) / blockSize) + 1}
 */
public record ResidentBlocks(int perRequest, int slidingGroups, int windowBlocks) {

  /** Nothing beyond the tokens' blocks: every layer attends to the whole context. */
  public static final ResidentBlocks NONE = new ResidentBlocks(0, 0, 0);

  public ResidentBlocks {
    if (perRequest < 0 || slidingGroups < 0 || windowBlocks < 0 || (slidingGroups > 0) != (windowBlocks > 0)) {
      throw new IllegalArgumentException("resident blocks must be >= 0, with a window exactly when there are"
          + " sliding groups, got " + perRequest + ", " + slidingGroups + ", " + windowBlocks);
    }
  }

  /**
   * The blocks besides its tokens' a request holds during a step that takes it from {@code
   * computedBefore} tokens to {@code totalTokens}, as vLLM's sliding-window manager allocates them:
   * each sliding group holds the blocks of the positions from the window's start before the step
   * ({@code computedBefore - (window - 1)}) to the step's last token, so a prefill chunk holds the
   * window plus the chunk, and a decode step the window; blocks that fall behind the window are
   * freed at the next step. The window is taken as {@code (windowBlocks - 1) x blockSize + 1}
   * tokens, the longest that needs {@code windowBlocks} blocks.
   */
  public int forStep(long computedBefore, long totalTokens, int blockSize) {
    if (slidingGroups == 0 || totalTokens <= 0) {
      return perRequest;
    }
    long tokenBlocks = (totalTokens + blockSize - 1) / blockSize;
    long before = Math.max(0, Math.min(computedBefore, totalTokens - 1));
    long start = Math.max(0, before - (long) (windowBlocks - 1) * blockSize);
    long span = (totalTokens - 1) / blockSize - start / blockSize + 1;
    long perGroup = Math.min(tokenBlocks, Math.max(span, windowBlocks));
    return perRequest + slidingGroups * (int) perGroup;
  }
}
