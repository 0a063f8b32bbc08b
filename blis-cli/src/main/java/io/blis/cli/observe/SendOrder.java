package io.blis.cli.observe;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.LongSupplier;

/**
 * Gives each request, as it leaves the client, its place in the send order and its send time,
 * together and under one lock, so that send times never decrease along the send order (the
 * workload trace and {@code requests.csv} need both). Each assignment is queued for the run's
 * thread.
 */
final class SendOrder {

  /** A request left: the run's key of it, its place in the send order, its send time. */
  record Sent(long key, long seq, long sendUs) {}

  private final LongSupplier clockUs;
  private final ConcurrentLinkedQueue<Sent> queue;
  private long next;

  SendOrder(LongSupplier clockUs, ConcurrentLinkedQueue<Sent> queue) {
    this.clockUs = clockUs;
    this.queue = queue;
  }

  /** The next place and the time now, for the request of {@code key}. */
  synchronized Sent take(long key) {
    Sent s = new Sent(key, next++, clockUs.getAsLong());
    queue.add(s);
    return s;
  }
}
