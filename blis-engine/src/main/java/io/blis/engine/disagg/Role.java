package io.blis.engine.disagg;

import io.blis.engine.flow.FlowControl;

/**
 * What a pool's instances do under prefill/decode disaggregation; its names ({@link #label()}) are
 * {@code prefill}, {@code decode} and {@code both}.
 */
public enum Role implements FlowControl.Labeled {
  /** Prefills the prompts of disaggregated requests; their KV then moves to a decode instance. */
  PREFILL,
  /** Decodes disaggregated requests after their KV arrived, and serves requests kept whole. */
  DECODE,
  /** Both: a request may be prefilled or decoded here, or served whole (an instance without PD). */
  BOTH;

  /** Whether prefill sub-requests may run here. */
  public boolean prefills() {
    return this != DECODE;
  }

  /** Whether decodes (and requests kept whole) may run here. */
  public boolean decodes() {
    return this != PREFILL;
  }

  /**
   * The role named {@code s} ({@code prefill-decode} is Go BLIS's and llm-d's name of {@code both}).
   *
   * @throws IllegalArgumentException naming the accepted values
   */
  public static Role parse(String s) {
    String v = s == null ? "" : s.trim().toLowerCase(java.util.Locale.ROOT);
    if (v.equals("prefill-decode") || v.equals("shared")) {
      return BOTH;
    }
    try {
      return FlowControl.parse(Role.class, v, "role");
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("role must be prefill, decode or both, got '" + s + "'", e);
    }
  }
}
