package io.blis.latency.kv;

import io.blis.api.ModelSpec;
import io.blis.latency.catalog.ModelSizes;

/**
 * How vLLM's hybrid KV-cache manager lays out a model whose layers are not all alike (sliding-window
 * layers beside full attention, recurrent Mamba or linear-attention layers beside attention), in the
 * units of BLIS's block pool.
 *
 * <p>vLLM cuts every kind of layer into groups of {@code g} layers ({@code g} the smallest count of
 * a kind, or the largest when the largest is below 1.5 times the smallest), pads every kind's page
 * to the largest, and gives each block id one page in each of {@code g} layers. A request holds one
 * block per {@code blockSize} tokens in each full-attention group, at most the window's blocks in
 * each sliding-window group, and one block (its state) in each recurrent group. Here a pool block is
 * the full-attention layers' pages of {@code blockSize} tokens ({@code g} is taken as the number of
 * full-attention layers, which it is for every hybrid vLLM serves: Gemma 2/3, gpt-oss, Qwen3-Next,
 * Nemotron-H, Granite 4.0-H, Jamba), and the other groups' blocks are the request's resident ones.
 *
 * <p>For a recurrent hybrid vLLM enlarges the attention block so that an attention page holds a
 * layer's state: {@code blockSize = 16 ceil(statePage / (16 attentionPagePerToken))}, per GPU.
 *
 * @param groupSize layers per group ({@code g})
 * @param slidingGroups groups of sliding-window layers
 * @param recurrentGroups groups of recurrent layers
 * @param windowBlocks blocks one sliding-window group keeps for a request, {@code ceil((window - 1) /
 *     blockSize) + 1}, 0 without sliding layers
 * @param blockSize tokens per block
 */
public record HybridKv(int groupSize, int slidingGroups, int recurrentGroups, int windowBlocks, int blockSize) {

  /** Kernel alignment of the attention block vLLM uses when it enlarges it (FlashAttention's). */
  public static final int ALIGNMENT = 16;

  /** The layout of {@code m} with blocks of {@code blockSize} tokens. */
  public static HybridKv of(ModelSpec m, int blockSize) {
    int attention = ModelSizes.attentionLayers(m);
    int sliding = m.slidingWindowLayers();
    int full = attention - sliding;
    if (full < 1) {
      throw new IllegalArgumentException(m.name() + ": no layer attends to the whole context; every sliding or"
          + " recurrent layer needs full-attention layers beside it here");
    }
    int g = full;
    int slidingGroups = sliding == 0 ? 0 : (sliding + g - 1) / g;
    int recurrentGroups = m.recurrentLayers() == 0 ? 0 : (m.recurrentLayers() + g - 1) / g;
    int window = sliding == 0 ? 0 : (m.slidingWindow() - 1 + blockSize - 1) / blockSize + 1;
    return new HybridKv(g, slidingGroups, recurrentGroups, window, blockSize);
  }

  /**
   * The attention block vLLM uses for a recurrent hybrid on {@code tp} GPUs when the given one is
   * smaller: the smallest multiple of {@link #ALIGNMENT} tokens whose page in one layer holds one
   * layer's recurrent state; {@code given} for any other model.
   */
  public static int blockSizeFor(ModelSpec m, int tp, int given) {
    if (m.recurrentLayers() == 0) {
      return given;
    }
    double pagePerToken = (double) ModelSizes.kvBytesPerTokenPerGpu(m, tp) / ModelSizes.attentionLayers(m);
    double statePage = (double) m.recurrentStateBytesPerLayer() / tp;
    int enlarged = ALIGNMENT * (int) Math.ceil(statePage / (ALIGNMENT * pagePerToken));
    return Math.max(given, enlarged);
  }

  /** {@return every group: the full-attention one and the others} */
  public int groups() {
    return 1 + slidingGroups + recurrentGroups;
  }

  /** {@return whether a request holds blocks besides its tokens' full-attention ones} */
  public boolean hybrid() {
    return slidingGroups > 0 || recurrentGroups > 0;
  }

  /**
   * What vLLM logs as its {@code GPU KV cache size: N tokens} for {@code blocks} blocks: the pool
   * split evenly over the groups, in tokens.
   */
  public long reportedTokens(long blocks) {
    return blocks / groups() * blockSize;
  }
}
