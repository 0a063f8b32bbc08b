package io.blis.workload.synthetic;

import io.blis.workload.RequestSpec;

/**
 * Multi-turn sessions of a client: every open-loop request of the client starts a session of
 * {@code rounds} rounds. Round k+1 is sent {@code thinkTimeUs} microseconds after round k completed
 * (closed loop); a round that times out or is rejected ends its session.
 *
 * @param rounds rounds per session, at least 1 (1 means single requests)
 * @param thinkTimeUs pause between a round's completion and the next round's send, microseconds
 * @param accumulateContext when true, round k+1's prompt is round k's prompt, then its output, then
 *     a new turn of freshly sampled input length; when false every round is the prefix plus a new
 *     turn
 */
public record SessionSpec(int rounds, long thinkTimeUs, boolean accumulateContext) {

  /** No sessions: every request stands alone. */
  public static final SessionSpec NONE = new SessionSpec(1, 0, false);

  public SessionSpec {
    if (rounds < 1) {
      throw new IllegalArgumentException("session rounds must be at least 1, got " + rounds);
    }
    if (thinkTimeUs < 0 || thinkTimeUs > RequestSpec.MAX_TIME_US) {
      throw new IllegalArgumentException("session think time must be in [0, "
          + RequestSpec.MAX_TIME_US + "] us, got " + thinkTimeUs);
    }
  }

  /** True when requests of this client have follow-up rounds. */
  public boolean multiTurn() {
    return rounds > 1;
  }
}
