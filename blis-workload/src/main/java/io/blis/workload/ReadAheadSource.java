package io.blis.workload;

import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Generates a source's open-loop requests on a thread of its own, a few thousand ahead of the
 * simulation, so that building prompts (and reading trace files) overlaps simulating them on a
 * second core. Only for sources that say they can be read ahead ({@link
 * RequestSource#readableAhead()}); any other source is called as it is, on the caller's thread.
 *
 * <p>The simulation sees the same requests in the same order as without read-ahead, and an error
 * the source raises at its k-th request is raised by the k-th call of {@link #next()}, so results
 * and messages are the same. Calls other than {@code next()} go to the source on the caller's
 * thread. {@link #close()} stops the reading thread and leaves the source open: whoever opened it
 * closes it.
 */
public final class ReadAheadSource implements RequestSource {

  /** Requests handed over at a time. */
  static final int CHUNK = 256;
  /** Chunks read ahead at most. */
  static final int CHUNKS = 8;

  private static final Object END = new Object();

  private final RequestSource source;
  private final ArrayBlockingQueue<Object[]> chunks = new ArrayBlockingQueue<>(CHUNKS);
  /** The reading thread; null when the source is not read ahead. */
  private final Thread reader;
  private volatile boolean stopped;
  private Object[] chunk;
  private int at;
  private boolean ended;
  private Throwable failed;

  private ReadAheadSource(RequestSource source) {
    this.source = java.util.Objects.requireNonNull(source, "source");
    if (source.readableAhead()) {
      reader = new Thread(this::read, "blis-read-ahead");
      reader.setDaemon(true);
      reader.start();
    } else {
      reader = null;
    }
  }

  /**
   * {@code source} read ahead on a thread of its own when it allows it ({@link
   * RequestSource#readableAhead()}), otherwise called directly. Close the result when the
   * simulation is over; that stops the thread and leaves {@code source} open.
   */
  public static ReadAheadSource over(RequestSource source) {
    return new ReadAheadSource(source);
  }

  /** Whether a thread of its own reads the source ahead. */
  public boolean readsAhead() {
    return reader != null;
  }

  private void read() {
    Object[] out = new Object[CHUNK];
    int n = 0;
    try {
      RequestSpec r;
      while (!stopped && (r = source.next()) != null) {
        out[n++] = r;
        if (n == CHUNK) {
          if (!hand(out)) {
            return;
          }
          out = new Object[CHUNK];
          n = 0;
        }
      }
      out[n] = END;
    } catch (RuntimeException | Error e) {
      out[n] = e; // raised again where the simulation reaches it
    }
    hand(out);
  }

  /** Queues a chunk; false when stopped first. */
  private boolean hand(Object[] out) {
    try {
      while (!stopped) {
        if (chunks.offer(out, 20, TimeUnit.MILLISECONDS)) {
          return true;
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return false;
  }

  @Override
  public RequestSpec next() {
    if (reader == null) {
      return source.next();
    }
    if (ended) {
      return null;
    }
    if (failed != null) {
      throw rethrown(failed);
    }
    if (chunk == null || at == CHUNK) {
      chunk = take();
      at = 0;
    }
    Object item = chunk[at++];
    if (item instanceof RequestSpec r) {
      return r;
    }
    if (item == END) {
      ended = true;
      return null;
    }
    failed = (Throwable) item;
    throw rethrown(failed);
  }

  private static RuntimeException rethrown(Throwable t) {
    if (t instanceof Error e) {
      throw e;
    }
    return (RuntimeException) t;
  }

  private Object[] take() {
    try {
      return chunks.take();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for the next request", e);
    }
  }

  /** When read ahead, always true after {@link #next()} returned null: the source has ended. */
  @Override
  public boolean exhausted() {
    return reader == null ? source.exhausted() : true;
  }

  @Override
  public List<RequestSpec> onFinished(RequestSpec request, RequestOutcome outcome, long timeUs) {
    return source.onFinished(request, outcome, timeUs);
  }

  /** This source is read ahead already. */
  @Override
  public boolean readableAhead() {
    return false;
  }

  /** Stops the reading thread and waits for it; the wrapped source stays open. */
  @Override
  public void close() {
    if (reader == null) {
      return;
    }
    stopped = true;
    boolean interrupted = false;
    while (reader.isAlive()) {
      try {
        reader.join();
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }
}
