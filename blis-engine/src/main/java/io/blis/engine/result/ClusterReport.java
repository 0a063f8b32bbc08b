package io.blis.engine.result;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The cluster side of a run: per-instance results, per SLO class and per tenant metrics, anomaly
 * counters and, with a decision trace, the decisions and their summary.
 *
 * @param instances one result per instance, by index
 * @param sloClasses metrics per SLO class, sorted by class name
 * @param tenants metrics per tenant (requests without a tenant are left out), sorted by name
 * @param anomalies counters of behaviour a policy should not produce
 * @param decisionSummary summary of the decision trace, or null without one
 * @param decisions every admission and routing decision (empty without a decision trace)
 */
public record ClusterReport(List<InstanceResult> instances, Map<String, MetricsSummary> sloClasses,
    Map<String, MetricsSummary> tenants, Anomalies anomalies, DecisionSummary decisionSummary,
    List<RoutingDecision> decisions) {

  public ClusterReport {
    instances = List.copyOf(instances);
    sloClasses = Collections.unmodifiableMap(new TreeMap<>(sloClasses));
    tenants = Collections.unmodifiableMap(new TreeMap<>(tenants));
    decisions = List.copyOf(decisions);
  }

  /**
   * Jain's fairness index over the tenants' throughput, measured as the output tokens of their
   * completed requests over the run: {@code (sum x)^2 / (n sum x^2)}, 1 when every tenant got the
   * same, 1/n when one got everything; NaN without tenants or without any completed token.
   */
  public double tenantFairness() {
    double sum = 0;
    double squares = 0;
    for (MetricsSummary m : tenants.values()) {
      double x = m.outputTokens();
      sum += x;
      squares += x * x;
    }
    return tenants.isEmpty() || squares == 0 ? Double.NaN : sum * sum / (tenants.size() * squares);
  }
}
