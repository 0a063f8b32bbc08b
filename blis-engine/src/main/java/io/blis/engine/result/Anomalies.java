package io.blis.engine.result;

import java.util.Map;
import java.util.TreeMap;

/**
 * Counters of behaviour a policy should not produce.
 *
 * @param priorityInversions admissions of a request while a request of a more urgent SLO class,
 *     queued at the same instance no later, kept waiting (summed over instances)
 * @param holBlockingEvents routing decisions at which some instance's backlog (requests routed
 *     there and not running yet) was far above the cluster mean (at least twice the mean and 4 requests more: the engine's {@code HOL_FACTOR} and
 *     {@code HOL_MIN_EXCESS})
 * @param rejectionsByReason requests refused, by reason: by the admission policy and by the
 *     instances (too long for the model or the KV cache)
 */
public record Anomalies(long priorityInversions, long holBlockingEvents,
    Map<String, Long> rejectionsByReason) {

  public Anomalies {
    rejectionsByReason = java.util.Collections.unmodifiableMap(new TreeMap<>(rejectionsByReason));
  }
}
