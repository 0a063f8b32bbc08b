package io.blis.engine.frontend;

/**
 * One API server's work queue: it serves requests taken in and chunks streamed out one at a time,
 * in the order they become ready (Lindley's recursion: each item starts when it is ready or when
 * the one before it is done, whichever is later). Ready times must not decrease, which the event
 * loop guarantees. Fractions of a microsecond are carried, never lost, so a million 0.4 us chunks
 * cost 400,000 us.
 */
public final class ApiServerQueue {

  private final ApiServer costs;
  /** Whether any work is charged (fixed with the costs; read on every streamed chunk). */
  private final boolean active;
  /** When the server is done with everything given so far, in microseconds. */
  private long freeUs = Long.MIN_VALUE;
  /** Work not yet charged, below one microsecond. */
  private double carryUs;

  public ApiServerQueue(ApiServer costs) {
    this.costs = costs;
    this.active = costs.active();
  }

  /** Whether this server charges anything (otherwise every call returns its ready time). */
  public boolean active() {
    return active;
  }

  /** When a request that reached the server at {@code readyUs} with {@code inputTokens} prompt tokens is handed to the engine. */
  public long admit(long readyUs, int inputTokens) {
    return serve(readyUs, costs.requestUs() + costs.inputTokenUs() * inputTokens);
  }

  /** When a chunk the engine produced at {@code readyUs} leaves the server for its client. */
  public long stream(long readyUs) {
    return serve(readyUs, costs.chunkUs());
  }

  private long serve(long readyUs, double workUs) {
    if (!active) {
      return readyUs;
    }
    double total = workUs + carryUs;
    long whole = (long) Math.floor(total);
    carryUs = total - whole;
    long start = Math.max(readyUs, freeUs);
    freeUs = start + whole;
    return freeUs;
  }
}
