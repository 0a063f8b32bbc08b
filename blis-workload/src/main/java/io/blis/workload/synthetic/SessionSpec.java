package io.blis.workload.synthetic;

import io.blis.workload.RequestSpec;

/**
 * Multi-turn sessions of a client: every open-loop request of the client starts a session of
 * {@code rounds} rounds. Round k+1 is sent {@code thinkTimeUs} microseconds after round k completed
 * (closed loop); a round that times out or is rejected ends its session.
 *
 * <p>With {@code users > 0} the client is that many closed-loop users instead (a benchmark's
 * concurrency): no arrival process, each user's first request at {@code u x thinkTimeUs / users}
 * (user u, 0-based), each later one {@code thinkTimeUs} after the previous one completed, a fresh
 * prompt every time, for as long as the workload's request count and horizon allow ({@link
 * #users(int, long)}).
 *
 * @param rounds rounds per session, at least 1 (1 means single requests); {@link Integer#MAX_VALUE}
 *     for closed-loop users
 * @param thinkTimeUs pause between a round's completion and the next round's send, microseconds
 * @param accumulateContext when true, round k+1's prompt is round k's prompt, then its output, then
 *     a new turn of freshly sampled input length; when false every round is the prefix plus a new
 *     turn
 * @param users closed-loop users of the client; 0 for sessions started by its arrival process
 */
public record SessionSpec(int rounds, long thinkTimeUs, boolean accumulateContext, int users) {

  /** No sessions: every request stands alone. */
  public static final SessionSpec NONE = new SessionSpec(1, 0, false);

  /** The most closed-loop users a client may have. */
  public static final int MAX_USERS = 1_000_000;

  public SessionSpec {
    if (rounds < 1) {
      throw new IllegalArgumentException("session rounds must be at least 1, got " + rounds);
    }
    if (thinkTimeUs < 0 || thinkTimeUs > RequestSpec.MAX_TIME_US) {
      throw new IllegalArgumentException("session think time must be in [0, "
          + RequestSpec.MAX_TIME_US + "] us, got " + thinkTimeUs);
    }
    if (users < 0 || users > MAX_USERS) {
      throw new IllegalArgumentException("closed-loop users must be in [0, " + MAX_USERS + "], got " + users);
    }
    if (users > 0 && (rounds != Integer.MAX_VALUE || accumulateContext)) {
      throw new IllegalArgumentException("closed-loop users send requests without end and without context");
    }
  }

  /** Sessions started by the client's arrival process. */
  public SessionSpec(int rounds, long thinkTimeUs, boolean accumulateContext) {
    this(rounds, thinkTimeUs, accumulateContext, 0);
  }

  /** {@code users} closed-loop users, each sending its next request {@code thinkTimeUs} after the previous one completed. */
  public static SessionSpec users(int users, long thinkTimeUs) {
    if (users < 1) {
      throw new IllegalArgumentException("closed-loop users must be at least 1, got " + users);
    }
    return new SessionSpec(Integer.MAX_VALUE, thinkTimeUs, false, users);
  }

  /** True when requests of this client have follow-up rounds. */
  public boolean multiTurn() {
    return rounds > 1;
  }

  /** True when the client is closed-loop users rather than an arrival process. */
  public boolean closedLoopUsers() {
    return users > 0;
  }
}
