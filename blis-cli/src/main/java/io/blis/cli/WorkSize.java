package io.blis.cli;

import java.util.Locale;

/**
 * One-line notes, printed before the work starts, of work so large that a user would otherwise
 * wait minutes or hours for an answer without a word (on a terminal the progress line shows it
 * too; in a pipe or a log file this note is all there is). Pure functions of the flags, tested
 * without doing the work.
 */
final class WorkSize {

  /** Decision records from which {@code --trace-level decisions} is noted: 1,000,000. */
  static final long NOTED_DECISIONS = 1_000_000;

  /**
   * Bytes of the result's JSON a request adds with {@code --trace-level decisions}: 270, and 113 for
   * each instance its routing decision lists. Measured on 5,000 requests of the default workload:
   * 379 bytes a request with 1 instance, 492 with 2, 2,066 with 16; 1,000,000 requests on 8 instances
   * wrote 1,171,576,724 bytes (1,172 a request).
   */
  static final long DECISION_BYTES_PER_REQUEST = 270;

  /** See {@link #DECISION_BYTES_PER_REQUEST}. */
  static final long DECISION_BYTES_PER_CANDIDATE = 113;

  /** Requests per load point from which a capacity search is noted: 1,000,000 (5 x the default most). */
  static final long NOTED_POINT_REQUESTS = 1_000_000;

  private WorkSize() {}

  /**
   * The note for {@code --trace-level decisions} on {@code requests} requests routed among {@code
   * instances} instances: every request has an admission and a routing decision, the routing one
   * listing every instance. Null below {@link #NOTED_DECISIONS} records.
   */
  static String decisionTrace(long requests, long instances) {
    long records = 2 * requests;
    if (records < NOTED_DECISIONS) {
      return null;
    }
    long bytes = requests * (DECISION_BYTES_PER_REQUEST + DECISION_BYTES_PER_CANDIDATE * instances);
    return String.format(Locale.ROOT, "--trace-level decisions on %,d requests and %,d instance%s records about %,d"
        + " decisions (an admission and a routing decision a request, each routing one listing every instance), about"
        + " %s of the result's JSON; they are spilled to a temporary file, not held in memory, but the run takes"
        + " longer to write them", requests, instances, instances == 1 ? "" : "s", records, HeapBudget.size(bytes));
  }

  /**
   * The note for a capacity search whose every load point simulates at least {@code minRequests}
   * requests (--min-point-requests): a search simulates one point after another (the highest rate
   * meeting the targets and the saturation rate, about a dozen points each; with --target-rate, that
   * again for each instance count it tries). Null below {@link #NOTED_POINT_REQUESTS}.
   */
  static String capacityPoints(long minRequests) {
    if (minRequests < NOTED_POINT_REQUESTS) {
      return null;
    }
    return String.format(Locale.ROOT, "each load point simulates at least %,d requests (--min-point-requests), and a"
        + " search simulates one point after another, about 25 (with --target-rate, about 12 more for each instance"
        + " count tried): each takes about as long as blis run --num-requests %d; the answer comes when all are done",
        minRequests, minRequests);
  }
}
