package io.blis.engine.result;

import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the gateway's flow control did over a run: every request that reached the gateway ends
 * dispatched to the router, rejected (its band or the queue full), shed (displaced by a more
 * urgent one), expired (waited past the request TTL), timed out (its client deadline passed in
 * the queue) or still queued when the run ended; in all and per SLO class.
 *
 * @param settings the flow-control settings in one line
 * @param all the counts over every class
 * @param maxDepth the most requests queued at once
 * @param waitUs time from joining the queue to leaving it for the router, dispatched requests
 * @param bySloClass the counts per SLO class
 */
public record GatewayReport(String settings, Counts all, int maxDepth, Distribution waitUs,
    Map<String, Counts> bySloClass) {

  /** The ends of the requests of one scope. */
  public record Counts(long enqueued, long dispatched, long rejected, long shed, long expired,
      long timedOut, long stillQueued) {

    /** Whether every enqueued request is counted once among the ends. */
    public boolean conserved() {
      return enqueued == dispatched + rejected + shed + expired + timedOut + stillQueued;
    }
  }

  public GatewayReport {
    bySloClass = Collections.unmodifiableMap(new TreeMap<>(bySloClass));
  }
}
