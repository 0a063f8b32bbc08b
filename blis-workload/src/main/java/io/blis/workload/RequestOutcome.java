package io.blis.workload;

/** How a request ended, as reported back to its {@link RequestSource}. */
public enum RequestOutcome {
  /** All output tokens were delivered. */
  COMPLETED,
  /** The client gave up: its timeout elapsed first. */
  TIMED_OUT,
  /** The server refused it (too long for max-model-len or the KV cache, or not admitted). */
  REJECTED
}
