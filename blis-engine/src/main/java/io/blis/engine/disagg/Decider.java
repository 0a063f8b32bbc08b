package io.blis.engine.disagg;

import io.blis.engine.flow.FlowControl;

/**
 * Decides per request whether it is disaggregated (prefilled on a prefill instance, decoded on a
 * decode instance) or served whole by a decode instance. Its names ({@link #label()}) are
 * {@code never}, {@code always} and {@code prefix-threshold}.
 */
public enum Decider implements FlowControl.Labeled {
  /** Every request is served whole. */
  NEVER,
  /** Every request is disaggregated. */
  ALWAYS,
  /**
   * A request is disaggregated when more than the threshold of its prompt tokens are not already
   * cached on the decode instance holding the longest cached prefix (llm-d's P/D decider).
   */
  PREFIX_THRESHOLD;

  /**
   * Whether a request of {@code promptTokens} tokens, of which {@code cachedOnDecode} are cached on
   * the best decode instance, is disaggregated.
   */
  public boolean disaggregates(int promptTokens, int cachedOnDecode, int threshold) {
    return switch (this) {
      case NEVER -> false;
      case ALWAYS -> true;
      case PREFIX_THRESHOLD -> promptTokens - Math.min(promptTokens, cachedOnDecode) > threshold;
    };
  }

  /**
   * The decider named {@code s}.
   *
   * @throws IllegalArgumentException naming the accepted values
   */
  public static Decider parse(String s) {
    try {
      return FlowControl.parse(Decider.class, s, "PD decider");
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("PD decider must be never, always or prefix-threshold, got '" + s + "'", e);
    }
  }
}
