package io.blis.api;

/** The phase a request is in from the engine's point of view. */
public enum Phase {
  /** Prompt tokens are still being computed (possibly in chunks). */
  PREFILL,
  /** The prompt is fully computed; the request generates one token per step. */
  DECODE
}
