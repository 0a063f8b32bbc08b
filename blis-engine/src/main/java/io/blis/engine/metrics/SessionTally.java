package io.blis.engine.metrics;

import io.blis.engine.result.SessionReport;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Counts multi-turn sessions as their requests arrive and end: first-round and later-round TTFT,
 * and each session's span from its first round's arrival to its last completion. Sessions are kept
 * in arrival order, so the same run gives the same figures.
 */
public final class SessionTally {

  /** A session's first-round arrival (-1 until seen) and its latest completion (-1 until one). */
  private final Map<Long, long[]> sessions = new LinkedHashMap<>();
  private final ValueStore cold;
  private final ValueStore warm;
  private final boolean streaming;

  public SessionTally(boolean streaming) {
    this.streaming = streaming;
    this.cold = ValueStore.create(streaming);
    this.warm = ValueStore.create(streaming);
  }

  /** Request of round {@code round} of session {@code sessionId} arrived at {@code atUs}. */
  public void onArrival(long sessionId, int round, long atUs) {
    long[] s = sessions.computeIfAbsent(sessionId, k -> new long[] {-1, -1});
    if (round == 0) {
      s[0] = atUs;
    }
  }

  /**
   * A request of round {@code round} of session {@code sessionId} ended, with its TTFT
   * (microseconds; negative when it had no first token) and, when it completed, its end.
   */
  public void onFinished(long sessionId, int round, long ttftUs, boolean completed, long endUs) {
    if (ttftUs >= 0) {
      (round == 0 ? cold : warm).add(ttftUs);
    }
    long[] s = sessions.get(sessionId);
    if (completed && s != null) {
      s[1] = Math.max(s[1], endUs);
    }
  }

  /** The sessions so far. */
  public SessionReport report() {
    ValueStore durations = ValueStore.create(streaming);
    for (long[] s : sessions.values()) {
      if (s[0] >= 0 && s[1] > s[0]) {
        durations.add(s[1] - s[0]);
      }
    }
    return new SessionReport(sessions.size(), cold.summarize(), warm.summarize(), durations.summarize());
  }
}
