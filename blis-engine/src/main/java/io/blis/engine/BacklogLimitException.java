package io.blis.engine;

/**
 * A simulation held more requests at once than its {@linkplain Simulation.Builder#maxBacklog
 * backlog limit}: the workload arrives faster than the deployment serves it, and the requests
 * waiting would only have grown. The run stops when the limit is passed; nothing of it is reported.
 */
public final class BacklogLimitException extends IllegalStateException {

  private static final long serialVersionUID = 1L;

  private final long limit;
  private final long atUs;

  BacklogLimitException(long limit, long atUs) {
    super(String.format(java.util.Locale.ROOT,
        "more than %,d requests arrived and not yet finished at simulated time %.3f s: requests arrive faster"
            + " than the deployment serves them, and the backlog would only grow",
        limit, atUs / 1e6));
    this.limit = limit;
    this.atUs = atUs;
  }

  /** The limit that was passed, requests. */
  public long limit() {
    return limit;
  }

  /** Simulated time at which it was passed, microseconds. */
  public long atUs() {
    return atUs;
  }
}
