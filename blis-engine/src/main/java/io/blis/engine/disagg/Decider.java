package io.blis.engine.disagg;

/**
 * Decides per request whether it is disaggregated (prefilled on a prefill instance, decoded on a
 * decode instance) or served whole by a decode instance.
 */
public enum Decider {
  /** Every request is served whole. */
  NEVER("never"),
  /** Every request is disaggregated. */
  ALWAYS("always"),
  /**
   * A request is disaggregated when more than the threshold of its prompt tokens are not already
   * cached on the decode instance holding the longest cached prefix (llm-d's P/D decider).
   */
  PREFIX_THRESHOLD("prefix-threshold");

  private final String label;

  Decider(String label) {
    this.label = label;
  }

  /** The name in flags and policy bundles. */
  public String label() {
    return label;
  }

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
    for (Decider d : values()) {
      if (d.label.equals(s)) {
        return d;
      }
    }
    throw new IllegalArgumentException("PD decider must be never, always or prefix-threshold, got '" + s + "'");
  }
}
