package io.blis.cli.plan;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.blis.cli.sweep.SweepTable;
import io.blis.engine.result.AutoscaleReport;
import io.blis.engine.result.Distribution;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * A day plan's answer: one row per point (cost, attainment, latencies), the frontier of cost
 * against attainment, and the best point; as CSV, as a summary JSON with each point's hours and
 * replicas over time, and as a text table. Built from the outcomes alone, so the same outcomes give
 * the same bytes.
 */
public final class DayPlanTable {

  /** The CSV's columns, in order. */
  public static final List<String> COLUMNS = List.of("index", "label", "scaler", "peak_replicas", "peak_nodes",
      "replica_gpu_hours", "node_hours", "gpu_hours", "cost_usd", "example_price", "attainment", "worst_hour",
      "worst_hour_attainment", "requests", "completed", "rejected", "timed_out", "arrivals_while_short",
      "scale_ups", "scale_downs", "ttft_p50_ms", "ttft_p99_ms", "e2e_p50_ms", "e2e_p99_ms", "frontier", "best",
      "args");

  private static final JsonNodeFactory NODES = JsonNodeFactory.withExactBigDecimals(true);

  private final DayPlan plan;
  private final List<DayOutcome> outcomes;
  private final Set<Integer> frontier;
  private final DayOutcome best;
  private final List<ObjectNode> rows = new ArrayList<>();

  /**
   * @param outcomes one per point of the plan, in plan order
   */
  public DayPlanTable(DayPlan plan, List<DayOutcome> outcomes) {
    this.plan = Objects.requireNonNull(plan, "plan");
    this.outcomes = List.copyOf(outcomes);
    if (this.outcomes.size() != plan.points().size()) {
      throw new IllegalArgumentException(outcomes.size() + " outcomes for " + plan.points().size() + " points");
    }
    this.frontier = frontier(this.outcomes);
    this.best = best(this.outcomes, plan.attainmentTarget());
    for (DayOutcome o : this.outcomes) {
      rows.add(row(o));
    }
  }

  /**
   * The points no other beats on both cost (to the cent) and attainment: by cost ascending (then attainment
   * descending, then index), each point with a higher attainment than every cheaper one. Points
   * where nothing finished are left out.
   */
  static Set<Integer> frontier(List<DayOutcome> outcomes) {
    List<DayOutcome> sorted = outcomes.stream().filter(o -> !Double.isNaN(o.attainment()))
        .sorted(Comparator.comparing(DayPlanTable::cents)
            .thenComparing(Comparator.comparingDouble(DayOutcome::attainment).reversed())
            .thenComparingInt(DayOutcome::index))
        .toList();
    Set<Integer> out = new TreeSet<>();
    double bestSoFar = Double.NEGATIVE_INFINITY;
    for (DayOutcome o : sorted) {
      if (o.attainment() > bestSoFar) {
        out.add(o.index());
        bestSoFar = o.attainment();
      }
    }
    return out;
  }

  /** The cost as the table shows it, to the cent: what the frontier and the best compare. */
  private static BigDecimal cents(DayOutcome o) {
    return BigDecimal.valueOf(o.scale().cost()).setScale(2, RoundingMode.HALF_EVEN);
  }

  /** The cheapest point attaining the target (then the higher attainment, then the first); null without one. */
  static DayOutcome best(List<DayOutcome> outcomes, Double target) {
    if (target == null) {
      return null;
    }
    return outcomes.stream().filter(o -> o.attainment() >= target)
        .min(Comparator.comparing(DayPlanTable::cents)
            .thenComparing(Comparator.comparingDouble(DayOutcome::attainment).reversed())
            .thenComparingInt(DayOutcome::index))
        .orElse(null);
  }

  private ObjectNode row(DayOutcome o) {
    AutoscaleReport a = o.scale();
    ObjectNode r = NODES.objectNode();
    r.put("index", o.index());
    r.put("label", o.label());
    r.put("scaler", a.scaler());
    r.put("peak_replicas", a.peakReplicas());
    r.put("peak_nodes", a.peakNodes());
    r.set("replica_gpu_hours", fixed(a.replicaGpuHours(), 3));
    r.set("node_hours", fixed(a.nodeHours(), 3));
    r.set("gpu_hours", fixed(a.gpuHours(), 3));
    r.set("cost_usd", fixed(a.cost(), 2));
    r.put("example_price", o.examplePrice());
    r.set("attainment", fixed(o.attainment(), 6));
    AutoscaleReport.Hour worst = o.worstHour();
    r.set("worst_hour", worst == null ? NODES.nullNode() : NODES.numberNode(worst.hour()));
    r.set("worst_hour_attainment", worst == null ? NODES.nullNode() : fixed(worst.attainment(), 6));
    r.put("requests", o.requests());
    r.put("completed", o.completed());
    r.put("rejected", o.rejected());
    r.put("timed_out", o.timedOut());
    r.put("arrivals_while_short", a.arrivalsWhileShort());
    r.put("scale_ups", a.scaleUps());
    r.put("scale_downs", a.scaleDowns());
    Distribution ttft = o.ttft();
    Distribution e2e = o.e2e();
    r.set("ttft_p50_ms", ms(ttft, ttft.p50Us()));
    r.set("ttft_p99_ms", ms(ttft, ttft.p99Us()));
    r.set("e2e_p50_ms", ms(e2e, e2e.p50Us()));
    r.set("e2e_p99_ms", ms(e2e, e2e.p99Us()));
    r.put("frontier", frontier.contains(o.index()));
    r.put("best", best != null && best.index() == o.index());
    r.put("args", String.join(" ", o.args()));
    return r;
  }

  private static JsonNode ms(Distribution d, double us) {
    return d.count() == 0 ? NODES.nullNode() : fixed(us / 1000, 1);
  }

  /** {@code v} to {@code places} decimals (half even), null when not finite. */
  public static JsonNode fixed(double v, int places) {
    if (!Double.isFinite(v)) {
      return NODES.nullNode();
    }
    return NODES.numberNode(BigDecimal.valueOf(v).setScale(places, RoundingMode.HALF_EVEN));
  }

  /** The plan answered. */
  public DayPlan plan() {
    return plan;
  }

  /** The outcomes, in plan order. */
  public List<DayOutcome> outcomes() {
    return outcomes;
  }

  /** The rows, in plan order, with the {@link #COLUMNS}. */
  public List<ObjectNode> rows() {
    return List.copyOf(rows);
  }

  /** The indices of the frontier's points, ascending. */
  public Set<Integer> frontier() {
    return frontier;
  }

  /** The cheapest point attaining the plan's target, or null (no target, or none attains it). */
  public DayOutcome best() {
    return best;
  }

  /** The table as CSV. */
  public String csv() {
    return SweepTable.csv(COLUMNS, rows);
  }

  /**
   * The summary: the plan, the best point, the frontier, and every point's row with its hours
   * (finished, met and attainment by hour of arrival) and its replicas over time (at every
   * scaling tick).
   */
  public ObjectNode summary() {
    ObjectNode s = NODES.objectNode();
    s.put("plan", plan.source());
    s.set("attainment_target", plan.attainmentTarget() == null ? NODES.nullNode()
        : NODES.numberNode(plan.attainmentTarget()));
    s.set("best", best == null ? NODES.nullNode() : NODES.numberNode(best.index()));
    ArrayNode f = s.putArray("frontier");
    frontier.forEach(f::add);
    s.put("example_prices_used", outcomes.stream().anyMatch(DayOutcome::examplePrice));
    ArrayNode points = s.putArray("points");
    for (int i = 0; i < outcomes.size(); i++) {
      ObjectNode p = rows.get(i).deepCopy();
      ArrayNode hours = p.putArray("hours");
      for (AutoscaleReport.Hour h : outcomes.get(i).scale().hours()) {
        ObjectNode o = hours.addObject();
        o.put("hour", h.hour());
        o.put("finished", h.finished());
        o.put("met_slo", h.metSlo());
        o.set("attainment", fixed(h.attainment(), 6));
      }
      ArrayNode line = p.putArray("timeline");
      for (AutoscaleReport.Sample t : outcomes.get(i).scale().timeline()) {
        ObjectNode o = line.addObject();
        o.set("at_s", fixed(t.atUs() / 1e6, 3));
        o.put("desired", t.desired());
        o.put("ready", t.ready());
        o.put("starting", t.starting());
        o.put("draining", t.draining());
        o.put("nodes", t.nodes());
      }
      points.add(p);
    }
    return s;
  }

  /** The table's file in an output directory. */
  public static final String CSV = "day.csv";
  /** The summary's file in an output directory. */
  public static final String SUMMARY = "summary.json";
  /** The report's file in an output directory. */
  public static final String REPORT = "report.html";

  /** Writes {@link #CSV}, {@link #SUMMARY} and {@link #REPORT} to {@code dir}, each moved into place when whole. */
  public void write(java.nio.file.Path dir) {
    try {
      java.nio.file.Files.createDirectories(dir);
      io.blis.engine.result.OutputFiles.write(dir.resolve(CSV), csv());
      io.blis.engine.result.OutputFiles.write(dir.resolve(SUMMARY), io.blis.cli.sweep.Sweep.pretty(summary()));
      io.blis.engine.result.OutputFiles.write(dir.resolve(REPORT), DayPlanReport.html(this));
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(dir + ": cannot write the day plan's tables: " + e.getMessage(), e);
    }
  }

  /** A text table of the points for a terminal, the frontier and the best marked. */
  public String text() {
    StringBuilder b = new StringBuilder();
    int width = Math.max(5, outcomes.stream().mapToInt(o -> o.label().length()).max().orElse(5));
    b.append(String.format(Locale.ROOT, "%3s  %-" + width + "s  %5s  %9s  %7s  %9s  %10s  %10s  %8s%n", "#", "point",
        "peak", "replica", "node-h", "cost USD", "attainment", "worst hour", "TTFT p99"));
    b.append(String.format(Locale.ROOT, "%3s  %-" + width + "s  %5s  %9s  %7s  %9s  %10s  %10s  %8s%n", "", "",
        "repl.", "GPU-h", "", "", "", "", "ms"));
    for (int i = 0; i < outcomes.size(); i++) {
      DayOutcome o = outcomes.get(i);
      ObjectNode r = rows.get(i);
      String mark = best != null && best.index() == o.index() ? " best"
          : frontier.contains(o.index()) ? " frontier" : "";
      b.append(String.format(Locale.ROOT, "%3d  %-" + width + "s  %5d  %9s  %7s  %9s  %10s  %10s  %8s%s%n", o.index(),
          o.label(), o.scale().peakReplicas(), r.get("replica_gpu_hours").asText(), r.get("node_hours").asText(),
          r.get("cost_usd").asText(), percent(o.attainment()), percent(r.get("worst_hour_attainment")),
          r.get("ttft_p99_ms").asText(), mark));
    }
    return b.toString();
  }

  private static String percent(JsonNode v) {
    return v == null || v.isNull() ? "-" : percent(v.asDouble());
  }

  private static String percent(double v) {
    return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%.2f%%", 100 * v);
  }
}
