package io.blis.cli.plan;

import static io.blis.cli.report.VegaLite.array;
import static io.blis.cli.report.VegaLite.chart;
import static io.blis.cli.report.VegaLite.dataset;
import static io.blis.cli.report.VegaLite.field;
import static io.blis.cli.report.VegaLite.filter;
import static io.blis.cli.report.VegaLite.mark;
import static io.blis.cli.report.VegaLite.num;
import static io.blis.cli.report.VegaLite.object;
import static io.blis.cli.report.VegaLite.strings;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.blis.cli.report.ChartPage;
import io.blis.cli.report.VegaLite;
import io.blis.engine.result.AutoscaleReport;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The HTML report of a day plan: the best point, cost against SLO attainment with the frontier,
 * the ready replicas over the day and the attainment by hour of the points drawn, and the table.
 */
public final class DayPlanReport {

  /** Most points whose replicas and hours are drawn as lines (the best and the frontier first). */
  static final int MAX_LINES = 12;

  static final String BEST = "best";
  static final String FRONTIER = "frontier";
  static final String DOMINATED = "dominated";

  private DayPlanReport() {}

  /** The page. */
  public static String html(DayPlanTable table) {
    DayPlan plan = table.plan();
    ChartPage page = new ChartPage("BLIS day plan: " + plan.points().size() + " points");
    page.highlight(bestSentence(table));
    page.paragraph("Plan " + plan.source() + ". Every point runs blis run " + String.join(" ", plan.base())
        + " with its own flags; cost is the node-hours of the node pool at the node's price, attainment the"
        + " share of finished requests (rejected and timed out count as missed) that completed within their SLO"
        + " class's TTFT and E2E targets.");
    if (table.outcomes().stream().anyMatch(DayOutcome::examplePrice)) {
      page.note("Costs use the bundled EXAMPLE GPU prices, which are illustrative, not quotes; give the node's"
          + " price with --node-cost-per-hour.");
    }
    page.heading("Cost against SLO attainment");
    page.note("One point per scaler configuration. The frontier (orange) joins the points that no other beats on"
        + " both axes: none cheaper attains as much. Up and to the left is better."
        + (plan.attainmentTarget() != null ? " Dashed: the attainment target; the best is the cheapest point"
            + " above it." : ""));
    page.chart("Cost (USD) against SLO attainment, the frontier joined", frontierChart(table));
    List<DayOutcome> drawn = drawn(table);
    String which = drawn.size() < table.outcomes().size()
        ? " Drawn: the best and the frontier first, then the plan's order, " + drawn.size() + " of "
            + table.outcomes().size() + " points."
        : "";
    page.heading("Ready replicas over the day");
    page.note("Replicas taking requests at every scaling tick (a step at each change)." + which);
    page.chart("Ready replicas against hours since the start, per point", replicasChart(drawn));
    page.heading("SLO attainment by hour");
    page.note("Per hour of arrival: requests completed within their targets over requests finished." + which);
    page.chart("SLO attainment by hour of arrival, per point", hoursChart(drawn, plan.attainmentTarget()));
    page.heading("Points");
    List<List<String>> rows = new ArrayList<>();
    for (ObjectNode r : table.rows()) {
      rows.add(List.of(r.get("index").asText(), r.get("label").asText(), r.get("scaler").asText(),
          r.get("peak_replicas").asText(), text(r.get("replica_gpu_hours")), text(r.get("node_hours")),
          text(r.get("cost_usd")), percent(r.get("attainment")), percent(r.get("worst_hour_attainment")),
          text(r.get("ttft_p99_ms")), text(r.get("e2e_p99_ms")), r.get("arrivals_while_short").asText(),
          r.get("best").asBoolean() ? BEST : r.get("frontier").asBoolean() ? FRONTIER : ""));
    }
    page.table(List.of("#", "point", "scaler", "peak replicas", "replica GPU-h", "node-h", "cost, USD",
        "attainment", "worst hour", "TTFT p99, ms", "E2E p99, ms", "arrivals while short", "role"), rows);
    return page.html();
  }

  private static String bestSentence(DayPlanTable table) {
    Double target = table.plan().attainmentTarget();
    DayOutcome best = table.best();
    if (target == null) {
      return "No attainment target (attainment_target in the plan): the frontier below has "
          + table.frontier().size() + " of " + table.outcomes().size() + " points.";
    }
    if (best == null) {
      return String.format(Locale.ROOT, "No point attains %s of its requests within the SLO.", pct(target));
    }
    return String.format(Locale.ROOT, "Best: #%d %s, the cheapest point attaining %s: %s USD (%s node-hours, %s"
        + " replica GPU-hours), attainment %s, worst hour %s, at most %d replicas.", best.index(), best.label(),
        pct(target), DayPlanTable.fixed(best.scale().cost(), 2).asText(),
        DayPlanTable.fixed(best.scale().nodeHours(), 3).asText(),
        DayPlanTable.fixed(best.scale().replicaGpuHours(), 3).asText(), pct(best.attainment()),
        best.worstHour() == null ? "-" : pct(best.worstHour().attainment()), best.scale().peakReplicas());
  }

  /** The points drawn as lines: the best, the frontier, then the rest in plan order, at most {@link #MAX_LINES}. */
  static List<DayOutcome> drawn(DayPlanTable table) {
    List<DayOutcome> out = new ArrayList<>();
    if (table.best() != null) {
      out.add(table.best());
    }
    for (DayOutcome o : table.outcomes()) {
      if (table.frontier().contains(o.index()) && !out.contains(o)) {
        out.add(o);
      }
    }
    for (DayOutcome o : table.outcomes()) {
      if (!out.contains(o)) {
        out.add(o);
      }
    }
    return out.subList(0, Math.min(MAX_LINES, out.size())).stream()
        .sorted(java.util.Comparator.comparingInt(DayOutcome::index)).toList();
  }

  private static String name(DayOutcome o) {
    return "#" + o.index() + " " + o.label();
  }

  static ObjectNode frontierChart(DayPlanTable table) {
    ObjectNode spec = chart(720, 340);
    ArrayNode rows = array();
    for (DayOutcome o : table.outcomes()) {
      if (Double.isNaN(o.attainment())) {
        continue;
      }
      ObjectNode r = rows.addObject();
      r.put("point", name(o));
      r.set("cost_usd", num(o.scale().cost()));
      r.set("attainment_pct", num(100 * o.attainment()));
      r.set("node_hours", num(o.scale().nodeHours()));
      r.put("peak_replicas", o.scale().peakReplicas());
      r.put("role", table.best() != null && table.best().index() == o.index() ? BEST
          : table.frontier().contains(o.index()) ? FRONTIER : DOMINATED);
    }
    ObjectNode data = dataset(spec, "points", rows);
    ArrayNode layers = spec.putArray("layer");
    ObjectNode line = layers.addObject();
    line.set("data", data);
    line.putArray("transform").add(filter("datum.role !== '" + DOMINATED + "'"));
    line.set("mark", mark("line").put("color", "#ff7f0e").put("strokeWidth", 1.5).put("interpolate", "step-after"));
    ObjectNode le = line.putObject("encoding");
    le.set("x", costAxis());
    le.set("y", attainmentAxis());
    le.set("order", field("cost_usd", "quantitative", "cost, USD"));
    ObjectNode dots = layers.addObject();
    dots.set("data", data);
    dots.set("mark", mark("point").put("filled", true).put("opacity", 0.9));
    ObjectNode de = dots.putObject("encoding");
    de.set("x", costAxis());
    de.set("y", attainmentAxis());
    VegaLite.byRole(de, rows, List.of(BEST, FRONTIER, DOMINATED), List.of("#d62728", "#ff7f0e", "#1f77b4"), BEST,
        80);
    ArrayNode tip = de.putArray("tooltip");
    tip.add(field("point", "nominal", "point"));
    tip.add(field("cost_usd", "quantitative", "cost, USD"));
    tip.add(field("attainment_pct", "quantitative", "attainment, %"));
    tip.add(field("node_hours", "quantitative", "node-hours"));
    tip.add(field("peak_replicas", "quantitative", "peak replicas"));
    tip.add(field("role", "nominal", "role"));
    ObjectNode label = layers.addObject();
    label.set("data", data);
    label.putArray("transform").add(filter("datum.role !== '" + DOMINATED + "'"));
    label.set("mark", mark("text").put("align", "left").put("dx", 8).put("dy", -8).put("fontSize", 11));
    ObjectNode te = label.putObject("encoding");
    te.set("x", costAxis());
    te.set("y", attainmentAxis());
    te.set("text", field("point", "nominal", "point"));
    targetRule(layers, table.plan().attainmentTarget());
    return spec;
  }

  /** A dashed line at the attainment target, when there is one. */
  private static void targetRule(ArrayNode layers, Double target) {
    if (target == null) {
      return;
    }
    ObjectNode rule = layers.addObject();
    ArrayNode v = array();
    v.addObject().set("attainment_pct", num(100 * target));
    rule.set("data", object().set("values", v));
    ObjectNode rm = mark("rule").put("color", "#d62728").put("strokeWidth", 1.2);
    rm.putArray("strokeDash").add(6).add(4);
    rule.set("mark", rm);
    rule.putObject("encoding").set("y", attainmentAxis());
  }

  private static ObjectNode costAxis() {
    ObjectNode x = field("cost_usd", "quantitative", "cost of the node pool, USD");
    x.putObject("scale").put("zero", false);
    return x;
  }

  private static ObjectNode attainmentAxis() {
    ObjectNode y = field("attainment_pct", "quantitative", "SLO attainment, %");
    y.putObject("scale").put("zero", false);
    return y;
  }

  /** Ready replicas per point: a row at the start, at every change, and at the end (drawn as steps). */
  static ObjectNode replicasChart(List<DayOutcome> drawn) {
    ObjectNode spec = chart(720, 300);
    ArrayNode rows = array();
    for (DayOutcome o : drawn) {
      List<AutoscaleReport.Sample> line = o.scale().timeline();
      for (int i = 0; i < line.size(); i++) {
        AutoscaleReport.Sample s = line.get(i);
        boolean changed = i == 0 || i == line.size() - 1 || s.ready() != line.get(i - 1).ready();
        if (changed) {
          ObjectNode r = rows.addObject();
          r.put("point", name(o));
          r.set("hour", num(s.atUs() / 3.6e9));
          r.put("ready", s.ready());
        }
      }
    }
    ObjectNode layer = spec;
    layer.set("data", dataset(spec, "replicas", rows));
    layer.set("mark", mark("line").put("interpolate", "step-after").put("strokeWidth", 1.5));
    ObjectNode e = layer.putObject("encoding");
    e.set("x", field("hour", "quantitative", "hours since the start"));
    e.set("y", field("ready", "quantitative", "ready replicas"));
    e.set("color", pointColor(drawn));
    ArrayNode tip = e.putArray("tooltip");
    tip.add(field("point", "nominal", "point"));
    tip.add(field("hour", "quantitative", "hour"));
    tip.add(field("ready", "quantitative", "ready replicas"));
    return spec;
  }

  /** Attainment per hour of arrival per point, with the target dashed. */
  static ObjectNode hoursChart(List<DayOutcome> drawn, Double target) {
    ObjectNode spec = chart(720, 260);
    ArrayNode rows = array();
    for (DayOutcome o : drawn) {
      for (AutoscaleReport.Hour h : o.scale().hours()) {
        if (h.finished() == 0) {
          continue;
        }
        ObjectNode r = rows.addObject();
        r.put("point", name(o));
        r.put("hour", h.hour());
        r.set("attainment_pct", num(100 * h.attainment()));
        r.put("finished", h.finished());
      }
    }
    ObjectNode data = dataset(spec, "hours", rows);
    ArrayNode layers = spec.putArray("layer");
    ObjectNode line = layers.addObject();
    line.set("data", data);
    line.set("mark", mark("line").put("point", true).put("strokeWidth", 1.5));
    ObjectNode e = line.putObject("encoding");
    ObjectNode x = field("hour", "quantitative", "hour of arrival (hours since the start)");
    x.putObject("axis").put("tickMinStep", 1).put("format", "d");
    e.set("x", x);
    e.set("y", attainmentAxis());
    e.set("color", pointColor(drawn));
    ArrayNode tip = e.putArray("tooltip");
    tip.add(field("point", "nominal", "point"));
    tip.add(field("hour", "quantitative", "hour"));
    tip.add(field("attainment_pct", "quantitative", "attainment, %"));
    tip.add(field("finished", "quantitative", "finished requests"));
    targetRule(layers, target);
    return spec;
  }

  private static ObjectNode pointColor(List<DayOutcome> drawn) {
    ObjectNode color = field("point", "nominal", "point");
    color.set("sort", strings(drawn.stream().map(DayPlanReport::name).toList()));
    color.putObject("legend").put("orient", "bottom").put("columns", 2).put("labelLimit", 420);
    if (drawn.size() > 10) {
      color.putObject("scale").put("scheme", "tableau20");
    }
    return color;
  }

  private static String text(JsonNode v) {
    return v == null || v.isNull() ? "" : v.isBigDecimal() ? v.decimalValue().toPlainString() : v.asText();
  }

  private static String percent(JsonNode v) {
    return v == null || v.isNull() ? "" : pct(v.asDouble());
  }

  private static String pct(double v) {
    return String.format(Locale.ROOT, "%.2f%%", 100 * v);
  }
}
