package io.blis.cli;

import io.blis.engine.InstanceFootprint;
import java.util.Locale;

/**
 * What the Java heap a command runs in ({@code Runtime.maxMemory()}, set by {@code -Xmx}) can hold,
 * decided before the work starts: the default of {@code --max-backlog}, derived from the heap, and
 * the refusal of a deployment whose instances alone would not fit in it. Pure functions of the
 * heap's size and the deployment's estimate, so that they are tested without filling a heap.
 */
final class HeapBudget {

  /**
   * Heap a request holds while it waits in the simulation, at the default prompts (512 tokens on
   * average): 2,500 bytes. Measured with a class histogram of a run whose backlog grew to 482,000
   * requests (-Xmx2g, 100,000 req/s, 3,000 output tokens): 1,129 MB live, 2,340 bytes a request (its
   * prompt's token ids, 4 bytes a token, 1,990 bytes; the engine's request, 224; the workload's
   * request, 88; its slots in the queues), rounded up.
   */
  static final long BYTES_PER_WAITING_REQUEST = 2_500;

  /**
   * Share of the heap the instances and the waiting requests may take together: 75%. The rest is
   * for the metrics, the result and the collector's room to work.
   */
  static final double BACKLOG_SHARE = 0.75;

  /** Share of the heap the instances alone may take before any request: 90%; more is refused. */
  static final double INSTANCES_SHARE = 0.9;

  /** The default --max-backlog with a heap large enough (4 GiB and more): 1,000,000 requests, as before. */
  static final long MAX_DEFAULT_BACKLOG = 1_000_000;

  /** The least default --max-backlog, however small the heap left: 1,000 requests. */
  static final long MIN_DEFAULT_BACKLOG = 1_000;

  private HeapBudget() {}

  /**
   * The default --max-backlog: as many waiting requests ({@link #BYTES_PER_WAITING_REQUEST} each)
   * as fit in {@link #BACKLOG_SHARE} of the heap beside the instances, between {@link
   * #MIN_DEFAULT_BACKLOG} and {@link #MAX_DEFAULT_BACKLOG}. 2 GiB of heap and one instance:
   * 644,000 requests; 512 MiB: 161,000; 4 GiB and more: 1,000,000.
   *
   * @param maxHeapBytes the heap's limit ({@code Runtime.getRuntime().maxMemory()})
   * @param instanceBytes what the instances take ({@link InstanceFootprint#bytes()})
   */
  static long defaultMaxBacklog(long maxHeapBytes, long instanceBytes) {
    double room = BACKLOG_SHARE * maxHeapBytes - instanceBytes;
    double n = Math.floor(room / BYTES_PER_WAITING_REQUEST);
    return (long) Math.max(MIN_DEFAULT_BACKLOG, Math.min(MAX_DEFAULT_BACKLOG, n));
  }

  /**
   * The one-line refusal of instances that would take more than {@link #INSTANCES_SHARE} of the
   * heap before any request, naming {@code what} (the flags that set them, e.g. {@code
   * --num-instances 4096}), the estimate and what would fit; null when they fit.
   */
  static String instancesRefusal(String what, InstanceFootprint f, long maxHeapBytes) {
    double budget = INSTANCES_SHARE * maxHeapBytes;
    if (f.bytes() <= budget) {
      return null;
    }
    double each = f.bytes() / (double) Math.max(1, f.instances());
    long fit = (long) Math.floor(budget / each);
    long suggestedGiB = (long) Math.ceil(f.bytes() / BACKLOG_SHARE / (1L << 30)) + 1;
    boolean one = f.instances() == 1;
    return String.format(Locale.ROOT, "%s: %,d instance%s of %s KV blocks need%s about %s of heap before any request"
        + " (%sthe blocks' tables and index, the instance's state), more than the %s (%d%%) %s may take of the Java"
        + " heap's %s; give %s, or more heap (e.g. BLIS_JAVA_OPTS=-Xmx%dg)",
        what, f.instances(), one ? "" : "s", f.smallestKvBlocks() == f.largestKvBlocks()
            ? String.format(Locale.ROOT, "%,d", f.largestKvBlocks())
            : String.format(Locale.ROOT, "%,d to %,d", f.smallestKvBlocks(), f.largestKvBlocks()),
        one ? "s" : "", size(f.bytes()), one ? "" : "about " + size((long) each) + " each: ", size((long) budget),
        Math.round(INSTANCES_SHARE * 100), one ? "it" : "they", size(maxHeapBytes),
        fit >= 1 ? String.format(Locale.ROOT, "at most %,d instances of these", fit) : "fewer KV blocks (--total-kv-blocks)",
        suggestedGiB);
  }

  /** Refuses ({@link IllegalArgumentException}) instances that do not fit in this JVM's heap. */
  static void requireInstancesFit(String what, InstanceFootprint f) {
    String refusal = instancesRefusal(what, f, Runtime.getRuntime().maxMemory());
    if (refusal != null) {
      throw new IllegalArgumentException(refusal);
    }
  }

  /** Bytes as KiB, MiB or GiB with 3 significant digits at most. */
  static String size(long bytes) {
    if (bytes >= 1L << 30) {
      return String.format(Locale.ROOT, "%.1f GiB", bytes / (double) (1L << 30));
    }
    if (bytes >= 1L << 20) {
      return String.format(Locale.ROOT, "%.0f MiB", bytes / (double) (1L << 20));
    }
    return String.format(Locale.ROOT, "%.0f KiB", bytes / 1024.0);
  }
}
