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
 * @param models metrics per model named by requests (those naming none are left out), sorted by
 *     name: a served model under its name, one nobody serves under the name requests gave
 * @param anomalies counters of behaviour a policy should not produce
 * @param decisionSummary summary of the decision trace, or null without one
 * @param decisions every admission and routing decision (empty without a decision trace); a run's
 *     own is a {@link SpilledList}, beyond its first decisions on disk: iterate it
 */
public record ClusterReport(List<InstanceResult> instances, Map<String, MetricsSummary> sloClasses,
    Map<String, MetricsSummary> tenants, Map<String, MetricsSummary> models, Anomalies anomalies,
    DecisionSummary decisionSummary, List<RoutingDecision> decisions) {

  /** A report without metrics per model. */
  public ClusterReport(List<InstanceResult> instances, Map<String, MetricsSummary> sloClasses,
      Map<String, MetricsSummary> tenants, Anomalies anomalies, DecisionSummary decisionSummary,
      List<RoutingDecision> decisions) {
    this(instances, sloClasses, tenants, Map.of(), anomalies, decisionSummary, decisions);
  }

  public ClusterReport {
    instances = List.copyOf(instances);
    sloClasses = Collections.unmodifiableMap(new TreeMap<>(sloClasses));
    tenants = Collections.unmodifiableMap(new TreeMap<>(tenants));
    models = Collections.unmodifiableMap(new TreeMap<>(models));
    // a run's own log stays as it is: spilled to a file past its first decisions, read-only
    decisions = decisions instanceof SpilledList ? decisions : List.copyOf(decisions);
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

  /**
   * The decision trace's summary as lines of text (Go BLIS's {@code --summarize-trace}): decisions
   * taken, rejections, requests routed to each instance, and the regret when alternatives were
   * considered; empty without a decision trace.
   */
  public String traceSummary() {
    if (decisionSummary == null) {
      return "";
    }
    DecisionSummary d = decisionSummary;
    StringBuilder b = new StringBuilder("=== Trace Summary ===\n");
    b.append(String.format(java.util.Locale.ROOT, "admission decisions: %d (%d rejected)%n", d.admissionDecisions(),
        d.rejected()));
    b.append(String.format(java.util.Locale.ROOT, "routing decisions:   %d%n", d.routingDecisions()));
    long[] routed = new long[instances.size()];
    for (RoutingDecision r : decisions) {
      if (r.kind().equals("routing") && r.chosen() >= 0 && r.chosen() < routed.length) {
        routed[r.chosen()]++;
      }
    }
    b.append("routed per instance:");
    for (int i = 0; i < routed.length; i++) {
      InstanceResult ir = instances.get(i);
      b.append(String.format(java.util.Locale.ROOT, " %d%s=%d", i, ir.pool().isEmpty() ? "" : "(" + ir.pool() + ")",
          routed[i]));
    }
    b.append('\n');
    if (d.counterfactualK() > 0) {
      Distribution g = d.regret();
      b.append(String.format(java.util.Locale.ROOT,
          "regret (k=%d): mean %.3f ms, p99 %.3f ms; %d decisions with a better alternative%n", d.counterfactualK(),
          g.count() == 0 ? 0 : g.meanUs() / 1000, g.count() == 0 ? 0 : g.p99Us() / 1000, d.regretDecisions()));
    }
    return b.toString();
  }
}
