package io.blis.engine;

/**
 * Keeps the data-parallel ranks of an MoE instance in step: every MoE layer exchanges tokens
 * across them, so no rank's step ends before the steps its peers are running. A rank launching a
 * step of {@code d} microseconds at {@code t} ends it at {@code max(t + d, end)}, where {@code end}
 * is the latest end of the ranks' steps still running; idle ranks cost nothing (vLLM runs dummy
 * batches on them).
 */
final class StepGate {

  private long endUs = Long.MIN_VALUE;

  /** The duration of a step launched at {@code nowUs} that would take {@code stepUs} alone. */
  long align(long nowUs, long stepUs) {
    long end = SimulatedTime.later(nowUs, stepUs);
    if (endUs > nowUs && endUs > end) {
      end = endUs;
    }
    endUs = Math.max(endUs, end);
    return end - nowUs;
  }
}
