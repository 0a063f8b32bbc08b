package io.blis.cli;

import io.blis.engine.result.ClusterReport;
import io.blis.engine.result.DisaggregationReport;
import io.blis.engine.result.Distribution;
import io.blis.engine.result.Fitness;
import io.blis.engine.result.GatewayReport;
import io.blis.engine.result.GoBlisResult;
import io.blis.engine.result.InstanceResult;
import io.blis.engine.result.MetricsSummary;
import io.blis.engine.result.RoutingDecision;
import io.blis.engine.result.SimulationResult;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * What Go BLIS's {@code run} prints on stdout, for {@code --output-format go-blis}: a {@code ===
 * Simulation Metrics ===} object per instance (when there are several) and the cluster's, then the
 * sections Go BLIS prints when they apply, in its order and wording: fitness (its score is the
 * weighted sum of the normalized metrics, where this project's own is their weighted mean),
 * anomaly counters, KV cache metrics, per SLO class, per model, per tenant, disaggregation, and the
 * decision trace's summary. docs/go-blis.md lists what differs.
 */
final class GoBlisOutput {

  private GoBlisOutput() {}

  private static final String METRICS = "=== Simulation Metrics ===\n";

  /**
   * The whole stdout of a run.
   *
   * @param clusterJson the cluster's object ({@link GoBlisResult#toJson} and any appended fields)
   * @param summarizeTrace whether {@code --summarize-trace} was given
   */
  static String render(SimulationResult r, String clusterJson, boolean summarizeTrace) {
    StringBuilder b = new StringBuilder();
    ClusterReport c = r.cluster();
    if (c.instances().size() > 1) {
      for (InstanceResult ir : c.instances()) {
        b.append(METRICS).append(GoBlisResult.instanceJson(ir));
      }
    }
    b.append(METRICS).append(clusterJson);
    r.fitness().ifPresent(f -> fitness(b, f, r));
    anomalies(b, r);
    kvCache(b, r);
    perSlo(b, c.sloClasses());
    perModel(b, c.models());
    perTenant(b, c);
    r.sessions().ifPresent(s -> sessions(b, s));
    r.disaggregation().ifPresent(d -> disaggregation(b, d, c, r.simulatedDurationUs()));
    if (summarizeTrace && c.decisionSummary() != null) {
      traceSummary(b, c);
    }
    return b.toString();
  }

  private static void line(StringBuilder b, String format, Object... args) {
    b.append(String.format(Locale.ROOT, format, args)).append('\n');
  }

  /**
   * Go BLIS's fitness: the weighted sum of the normalized metrics, its rates over the simulated
   * duration from time 0 (the {@code responses_per_sec} and {@code tokens_per_sec} printed above;
   * this project's own fitness takes them from the first arrival).
   */
  private static void fitness(StringBuilder b, Fitness.Result f, SimulationResult r) {
    double seconds = r.simulatedDurationUs() / 1e6;
    double rps = seconds > 0 ? r.overall().completedRequests() / seconds : 0;
    double tps = seconds > 0 ? r.overall().outputTokens() / seconds : 0;
    TreeMap<String, Double> components = new TreeMap<>();
    double score = 0;
    for (Map.Entry<String, Double> e : f.weights().entrySet()) {
      double v = switch (e.getKey()) {
        case "throughput" -> rps / (rps + 100);
        case "tokens_per_s" -> tps / (tps + 10_000);
        default -> f.normalized().get(e.getKey());
      };
      components.put(Fitness.goKey(e.getKey()), v);
      score += e.getValue() * v;
    }
    b.append("=== Fitness Evaluation ===\n");
    line(b, "Score: %.6f", score);
    components.forEach((k, v) -> line(b, "  %s: %.6f", k, v));
  }

  private static void anomalies(StringBuilder b, SimulationResult r) {
    MetricsSummary o = r.overall();
    var a = r.cluster().anomalies();
    long admission = GoBlisResult.admissionRefusals(o);
    long routing = GoBlisResult.routingRefusals(o);
    long unservable = GoBlisResult.unservable(o);
    GatewayReport.Counts g = r.gateway().map(GatewayReport::all).orElse(null);
    long gwQueued = g == null ? 0 : g.stillQueued();
    long gwShed = g == null ? 0 : g.shed();
    long gwRejected = g == null ? 0 : g.rejected();
    long gwExpired = g == null ? 0 : g.expired();
    if (a.priorityInversions() == 0 && a.holBlockingEvents() == 0 && admission == 0 && routing == 0
        && unservable == 0 && o.timedOutRequests() == 0 && gwQueued == 0 && gwShed == 0 && gwRejected == 0
        && gwExpired == 0) {
      return;
    }
    b.append("=== Anomaly Counters ===\n");
    line(b, "Priority Inversions: %d", a.priorityInversions());
    line(b, "HOL Blocking Events: %d", a.holBlockingEvents());
    line(b, "Rejected Requests (Admission): %d", admission);
    r.cluster().sloClasses().forEach((cls, m) -> {
      long shed = m.rejectedByReason().getOrDefault("tier_shed", 0L);
      if (shed > 0) {
        line(b, "  Shed (%s): %d", cls, shed);
      }
    });
    line(b, "Rejected Requests (Routing): %d", routing);
    line(b, "Dropped Unservable: %d", unservable);
    line(b, "Timed Out Requests: %d", o.timedOutRequests());
    line(b, "Length-Capped Requests: %d", 0);
    if (gwQueued > 0) {
      line(b, "Gateway Queue Depth (horizon): %d", gwQueued);
    }
    if (gwShed > 0) {
      line(b, "Gateway Queue Shed: %d", gwShed);
    }
    if (gwRejected > 0) {
      line(b, "Gateway Queue Rejected: %d", gwRejected);
    }
    if (gwExpired > 0) {
      line(b, "Gateway Expired (TTL): %d", gwExpired);
    }
  }

  /**
   * Preemptions per completed request, the instances' mean prefix-cache hit rate (of prompt
   * tokens; Go BLIS's is of blocks) and, without a CPU tier, Go BLIS's thrashing rate of a single
   * tier, 0. With a CPU tier the thrashing line is left out: its CPU evictions are not counted here.
   */
  private static void kvCache(StringBuilder b, SimulationResult r) {
    long completed = r.overall().completedRequests();
    double preemptionRate = completed > 0 ? (double) r.engine().preemptions() / completed : 0;
    double hit = 0;
    for (InstanceResult ir : r.cluster().instances()) {
      hit += Double.isFinite(ir.kvTokenHitRate()) ? ir.kvTokenHitRate() : 0;
    }
    hit = r.cluster().instances().isEmpty() ? 0 : hit / r.cluster().instances().size();
    if (preemptionRate == 0 && hit == 0) {
      return;
    }
    b.append("=== KV Cache Metrics ===\n");
    line(b, "Preemption Rate: %.4f", preemptionRate);
    line(b, "Cache Hit Rate: %.4f", hit);
    if (r.engine().cpuTierBlocks() == 0) {
      line(b, "KV Thrashing Rate: %.4f", 0.0);
    }
  }

  private static double us(double v) {
    return Double.isFinite(v) ? v : 0;
  }

  private static void perSlo(StringBuilder b, Map<String, MetricsSummary> classes) {
    if (classes.size() <= 1) {
      return;
    }
    b.append("=== Per-SLO Metrics ===\n");
    classes.forEach((cls, m) -> {
      line(b, "  %s:", cls.isEmpty() ? "default" : cls);
      meanAndP99(b, "TTFT: ", m.ttft());
      meanAndP99(b, "ITL:  ", m.itl());
      meanAndP99(b, "E2E:  ", m.e2e());
    });
  }

  private static void meanAndP99(StringBuilder b, String label, Distribution x) {
    line(b, "    %smean=%.2f p99=%.2f (n=%d)", label, us(x.meanUs()), us(x.p99Us()), x.count());
  }

  private static void perModel(StringBuilder b, Map<String, MetricsSummary> models) {
    if (models.isEmpty()) {
      return;
    }
    b.append("=== Per-Model Metrics ===\n");
    models.forEach((model, m) -> {
      line(b, "  %s:", model);
      line(b, "    TTFT: p50=%.2f p99=%.2f (n=%d)", us(m.ttft().p50Us()), us(m.ttft().p99Us()), m.ttft().count());
      line(b, "    E2E:  p50=%.2f p99=%.2f (n=%d)", us(m.e2e().p50Us()), us(m.e2e().p99Us()), m.e2e().count());
      line(b, "    Throughput: %.2f req/s, %.2f tok/s", m.requestsPerS(), m.outputTokensPerS());
    });
  }

  private static void perTenant(StringBuilder b, ClusterReport c) {
    if (c.tenants().isEmpty()) {
      return;
    }
    b.append("=== Per-Tenant Metrics ===\n");
    c.tenants().forEach((t, m) -> line(b, "  %s: requests=%d, tokens=%d", t, m.completedRequests(), m.outputTokens()));
    double jain = c.tenantFairness();
    line(b, "  Jain Fairness Index: %.4f", Double.isNaN(jain) ? 1.0 : jain);
  }

  /** Go BLIS's session lines: round 0's TTFT, the later rounds', and each session's span, in ms. */
  private static void sessions(StringBuilder b, io.blis.engine.result.SessionReport s) {
    b.append("=== Session Metrics ===\n");
    line(b, "  Sessions: %d", s.sessions());
    sessionLine(b, "TTFT cold (round 0):", s.ttftCold());
    sessionLine(b, "TTFT warm (round\u22651):", s.ttftWarm());
    sessionLine(b, "Session duration:   ", s.duration());
  }

  private static void sessionLine(StringBuilder b, String label, Distribution d) {
    if (d.count() > 0) {
      line(b, "  %s mean=%.2f p50=%.2f p95=%.2f p99=%.2f ms (n=%d)", label, d.meanUs() / 1000, d.p50Us() / 1000,
          d.p95Us() / 1000, d.p99Us() / 1000, d.count());
    }
  }

  /**
   * Go BLIS's PD lines. Its sub-requests map onto this project's requests: a prefill sub-request
   * completes when a disaggregated request's prefill ends, and on a prefill (or both) instance a
   * request served whole completes one too; a decode sub-request completes where a request
   * completes on a decode (or both) instance. Rates are over the simulated duration from time 0.
   */
  private static void disaggregation(StringBuilder b, DisaggregationReport d, ClusterReport c, long durationUs) {
    b.append("=== PD Metrics ===\n");
    line(b, "Disaggregated Requests: %d", d.transferred());
    line(b, "Dropped at Decode KV: %d", 0); // a decode instance without room makes it wait, never drops it
    java.util.Map<String, String> roles = new java.util.HashMap<>();
    d.pools().forEach(p -> roles.put(p.name(), p.role()));
    long prefills = d.disaggregated();
    long decodes = 0;
    for (InstanceResult ir : c.instances()) {
      io.blis.engine.disagg.Role role = io.blis.engine.disagg.Role.parse(roles.getOrDefault(ir.pool(), "both"));
      long done = ir.metrics().completedRequests();
      prefills += role.prefills() ? done : 0;
      decodes += role.decodes() ? done : 0;
    }
    double seconds = durationUs / 1e6;
    double prefillRate = seconds > 0 ? prefills / seconds : 0;
    double decodeRate = seconds > 0 ? decodes / seconds : 0;
    line(b, "Prefill Throughput: %.4f sub-req/s", prefillRate);
    line(b, "Decode Throughput: %.4f sub-req/s", decodeRate);
    double low = Math.min(prefillRate, decodeRate);
    double high = Math.max(prefillRate, decodeRate);
    if (high > 0 && low <= 0) {
      line(b, "Load Imbalance Ratio: inf (one pool idle)");
    } else {
      line(b, "Load Imbalance Ratio: %.4f", high == 0 ? 1.0 : high / low);
    }
    microseconds(b, "Parent TTFT (us)", d.ttftUs());
    microseconds(b, "KV Transfer Duration (us)", d.transferUs());
    line(b, "Peak Concurrent Transfers: %d", d.peakConcurrentTransfers());
    line(b, "Mean Transfer Queue Depth: %.4f", d.meanConcurrentTransfers());
  }

  private static void microseconds(StringBuilder b, String label, Distribution t) {
    if (t.count() > 0) {
      line(b, "%s: mean=%.1f p50=%.1f p95=%.1f p99=%.1f", label, t.meanUs(), t.p50Us(), t.p95Us(), t.p99Us());
    }
  }

  /**
   * Go BLIS's regret of a routing decision: the best candidate's score less the chosen one's, 0
   * when the chosen one is the best or has no score (a router that does not score).
   */
  static double regret(RoutingDecision d) {
    double chosen = Double.NaN;
    double best = Double.NEGATIVE_INFINITY;
    for (RoutingDecision.Candidate k : d.candidates()) {
      if (!Double.isNaN(k.score())) {
        best = Math.max(best, k.score());
        if (k.instance() == d.chosen()) {
          chosen = k.score();
        }
      }
    }
    return Double.isNaN(chosen) ? 0 : Math.max(0, best - chosen);
  }

  /**
   * Go BLIS's trace summary: decisions, targets ({@code instance_N}, sorted as text) and the regret
   * of each routing decision, the best candidate's score less the chosen one's (0 for routers that
   * do not score).
   */
  private static void traceSummary(StringBuilder b, ClusterReport c) {
    var s = c.decisionSummary();
    TreeMap<String, Long> targets = new TreeMap<>();
    double regretSum = 0;
    double regretMax = 0;
    long routings = 0;
    for (RoutingDecision d : c.decisions()) {
      if (!d.kind().equals("routing") || d.chosen() < 0) {
        continue;
      }
      routings++;
      targets.merge("instance_" + d.chosen(), 1L, Long::sum);
      double regret = regret(d);
      regretSum += regret;
      regretMax = Math.max(regretMax, regret);
    }
    b.append("=== Trace Summary ===\n");
    line(b, "Total Decisions: %d", s.admissionDecisions());
    line(b, "  Admitted: %d", s.admissionDecisions() - s.rejected());
    line(b, "  Rejected: %d", s.rejected());
    line(b, "Unique Targets: %d", targets.size());
    if (!targets.isEmpty()) {
      b.append("Target Distribution:\n");
      targets.forEach((k, v) -> line(b, "  %s: %d", k, v));
    }
    line(b, "Mean Regret: %.6f", routings == 0 ? 0 : regretSum / routings);
    line(b, "Max Regret: %.6f", regretMax);
  }
}
