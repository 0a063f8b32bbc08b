package io.blis.engine.flow;

import io.blis.engine.metrics.ValueStore;
import io.blis.engine.result.GatewayReport;
import java.util.Map;
import java.util.TreeMap;

/** Counts what the gateway did to each request, per SLO class, and the time requests waited. */
final class GatewayStats {

  /** The ends a request can meet at the gateway. */
  enum End { DISPATCHED, REJECTED, SHED, EXPIRED, TIMED_OUT }

  private static final int ENQUEUED = End.values().length;
  private static final int STILL_QUEUED = ENQUEUED + 1;

  private final Map<String, long[]> byClass = new TreeMap<>();
  private final ValueStore wait;

  GatewayStats(boolean streaming) {
    this.wait = ValueStore.create(streaming);
  }

  private long[] of(String sloClass) {
    return byClass.computeIfAbsent(sloClass, k -> new long[STILL_QUEUED + 1]);
  }

  /** A request of {@code sloClass} reached the gateway. */
  void arrived(String sloClass) {
    of(sloClass)[ENQUEUED]++;
  }

  /** A request of {@code sloClass} met {@code end}; a dispatched one after {@code waitedUs}. */
  void ended(String sloClass, End end, long waitedUs) {
    of(sloClass)[end.ordinal()]++;
    if (end == End.DISPATCHED) {
      wait.add(waitedUs);
    }
  }

  /** A request of {@code sloClass} was still queued when the run ended. */
  void stillQueued(String sloClass) {
    of(sloClass)[STILL_QUEUED]++;
  }

  /** The report, with the settings and the deepest the queue was. */
  GatewayReport report(FlowControl config, int maxDepth) {
    long[] all = new long[STILL_QUEUED + 1];
    Map<String, GatewayReport.Counts> classes = new TreeMap<>();
    byClass.forEach((k, v) -> {
      for (int i = 0; i < v.length; i++) {
        all[i] += v[i];
      }
      classes.put(k, counts(v));
    });
    return new GatewayReport(config.describe(), counts(all), maxDepth, wait.summarize(), classes);
  }

  private static GatewayReport.Counts counts(long[] v) {
    return new GatewayReport.Counts(v[ENQUEUED], v[End.DISPATCHED.ordinal()], v[End.REJECTED.ordinal()],
        v[End.SHED.ordinal()], v[End.EXPIRED.ordinal()], v[End.TIMED_OUT.ordinal()], v[STILL_QUEUED]);
  }
}
