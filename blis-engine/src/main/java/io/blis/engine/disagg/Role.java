package io.blis.engine.disagg;

import java.util.Locale;

/** What a pool's instances do under prefill/decode disaggregation. */
public enum Role {
  /** Prefills the prompts of disaggregated requests; their KV then moves to a decode instance. */
  PREFILL,
  /** Decodes disaggregated requests after their KV arrived, and serves requests kept whole. */
  DECODE,
  /** Both: a request may be prefilled or decoded here, or served whole (an instance without PD). */
  BOTH;

  /** The name in flags and policy bundles: {@code prefill}, {@code decode}, {@code both}. */
  public String label() {
    return name().toLowerCase(Locale.ROOT);
  }

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
    String v = s == null ? "" : s.trim().toLowerCase(Locale.ROOT);
    if (v.equals("prefill-decode") || v.equals("shared")) {
      return BOTH;
    }
    for (Role r : values()) {
      if (r.label().equals(v)) {
        return r;
      }
    }
    throw new IllegalArgumentException("role must be prefill, decode or both, got '" + s + "'");
  }
}
