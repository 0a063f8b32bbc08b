package io.blis.kvcache;

/**
 * Blocks a request holds besides one block per {@code blockSizeTokens} of its tokens, as vLLM's
 * hybrid KV-cache manager allocates them: a block of the pool is a page in each layer of one group
 * of layers, a request holds {@code ceil(tokens / blockSize)} blocks in the full-attention group,
 * at most the window's blocks in each sliding-window group, and one block (its state) in each
 * recurrent group (Mamba, linear attention).
 *
 * @param perRequest blocks every request holds whatever its length (its recurrent groups' states)
 * @param slidingGroups groups of sliding-window layers
 * @param windowBlocks the most blocks one sliding-window group keeps for a request: {@code
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

  /** {@return the blocks besides its tokens' a request holds when its tokens take {@code tokenBlocks}} */
  public int forTokenBlocks(long tokenBlocks) {
    return perRequest + slidingGroups * (int) Math.min(tokenBlocks, windowBlocks);
  }
}
