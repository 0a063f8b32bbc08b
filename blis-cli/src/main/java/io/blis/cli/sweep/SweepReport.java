package io.blis.cli.sweep;

import static io.blis.cli.report.VegaLite.array;
import static io.blis.cli.report.VegaLite.chart;
import static io.blis.cli.report.VegaLite.dataset;
import static io.blis.cli.report.VegaLite.field;
import static io.blis.cli.report.VegaLite.filter;
import static io.blis.cli.report.VegaLite.logField;
import static io.blis.cli.report.VegaLite.mark;
import static io.blis.cli.report.VegaLite.num;
import static io.blis.cli.report.VegaLite.object;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.blis.cli.report.ChartPage;
import io.blis.cli.report.VegaLite;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * The sweep's HTML page ({@code DIR/report.html}), computed like the tables from the recorded
 * points only: the best configuration in words, each configuration's latency against throughput
 * over the load points it simulated, the Pareto frontier of throughput per dollar against the
 * Pareto latency, and the table. Charts are Vega-Lite ({@link ChartPage}).
 */
final class SweepReport {

  /** Above this many configurations with curves, colour by model and GPU instead of by configuration. */
  static final int MAX_COLORED_CONFIGS = 20;

  static final String MEETS = "meets the SLO";
  static final String MISSES = "misses the SLO";
  static final String NOT_STEADY = "not steady";
  static final String STEADY = "steady";
  static final String BEST = "best";
  static final String FRONTIER = "Pareto frontier";
  static final String DOMINATED = "meets the SLO, dominated";
  static final String NOT_CANDIDATE = "not a candidate";

  private SweepReport() {}

  /** The page, from the table and its configurations' records. */
  static String html(SweepTable table) {
    SweepGrid grid = table.grid();
    ObjectNode summary = table.summary();
    String latency = grid.paretoLatency() + "_ms";
    Map<Integer, String> labels = labels(grid.configs());
    ChartPage page = new ChartPage("BLIS sweep: " + grid.configs().size() + " configurations, question "
        + grid.question().key());
    page.highlight(best(grid, summary.get("best"), latency, labels));
    page.paragraph(String.format(Locale.ROOT, "Grid %s. SLO: %s. Workload: %s. %d configurations, %d skipped;"
        + " %d rows meet the SLO. Load points of %s s (%d to %d requests, first %s%% left out as warm-up).",
        grid.source(), grid.slo() == null ? "none" : SweepGrid.describe(grid.slo()), grid.workload().description(),
        grid.configs().size(), summary.path("skipped").asInt(), summary.path("rows_meeting_slo").asInt(),
        plain(grid.settings().durationS()), grid.settings().minRequests(), grid.settings().maxRequests(),
        plain(100 * grid.settings().warmup())));
    if (grid.configs().stream().anyMatch(SweepConfig::lora)) {
      page.note("LoRA adapters: each instance holds max_loras of them on its GPUs (the configuration's key and,"
          + " where it differs, its name give it), " + (grid.deployment().loraConfig() != null
              ? "with the other settings of " + grid.deployment().loraConfig() + "."
              : "at vLLM's defaults otherwise (max_cpu_loras = max_loras, rank 16, any adapter name)."));
    }
    if (summary.path("example_prices_used").asBoolean()) {
      page.note("Costs use the bundled EXAMPLE GPU prices, which are illustrative, not quotes; give real ones with"
          + " --prices FILE.");
    }
    ObjectNode curves = curves(grid, table, labels, latency);
    page.heading("Latency against throughput");
    page.note(String.format(Locale.ROOT, "Every load point each configuration's %s simulated: completed requests per"
        + " second against %s (log scale), the line joining them by offered rate. Past saturation (not steady)"
        + " the latency grows with the length of the run; points where a measured request never completed have"
        + " no latency and are not drawn.%s%s", grid.question() == SweepGrid.Question.CAPACITY
            ? "capacity search (and saturation search)" : "rates", grid.paretoLatency(),
        grid.question() == SweepGrid.Question.CAPACITY ? " Black rings: each configuration's capacity, the highest"
            + " rate meeting the SLO." : "", sloTargetMs(grid) > 0 ? " Dashed: the SLO's target." : ""));
    if (curves.path("datasets").path("points").isEmpty()) {
      page.note("No load point has a finite latency to draw.");
    } else {
      page.chart("Latency (" + grid.paretoLatency() + ") against completed requests per second, per configuration",
          curves);
    }
    page.heading("Throughput per dollar against latency");
    ObjectNode frontier = frontier(grid, table, labels, latency);
    page.note("One point per " + (grid.question() == SweepGrid.Question.CAPACITY ? "configuration"
        : "configuration and rate") + " with a price: requests per second per USD-hour of GPUs against "
        + grid.paretoLatency() + ". Candidates meet the SLO" + (grid.question() == SweepGrid.Question.RATES
            ? " (and are steady)" : "") + "; the Pareto frontier holds those that no other candidate beats on both"
        + " axes (up and to the left is better); the best has the most requests per second per USD-hour.");
    if (frontier.path("datasets").path("rows").isEmpty()) {
      page.note("No row has both a cost and the latency to draw.");
    } else {
      page.chart("Requests per second per USD-hour against " + grid.paretoLatency() + "; the Pareto frontier"
          + " and the best configuration marked", frontier);
    }
    page.heading("Configurations");
    page.table(tableHeader(grid), tableRows(grid, table, labels, latency));
    return page.html();
  }

  /** The sentence about the best configuration. */
  private static String best(SweepGrid grid, JsonNode best, String latency, Map<Integer, String> labels) {
    if (best == null || best.isNull()) {
      return "Best configuration: none; no configuration meets the SLO with a known price.";
    }
    String rate = grid.question() == SweepGrid.Question.CAPACITY
        ? "capacity " + text(best.get("capacity_rps")) + " req/s"
        : text(best.get("achieved_rps")) + " req/s completed at " + text(best.get("rate_rps")) + " req/s offered";
    return String.format(Locale.ROOT, "Best configuration: %s (%s): %s req/s per USD-hour; %s, %s %s ms,"
        + " %s USD/h, %s USD per million output tokens%s.", labels.get(best.get("index").asInt()),
        best.get("key").asText(), text(best.get("rps_per_usd_hour")), rate, grid.paretoLatency(),
        text(best.get(latency)), text(best.get("cost_per_hour_usd")), text(best.get("usd_per_million_output_tokens")),
        best.path("example_price").asBoolean() ? " (example price)" : "");
  }

  /**
   * Short names of the configurations: {@code #INDEX} and the fields that differ between them
   * ({@code #3 gpu=A100-80GB tp=2}); model and GPU when none differs. The layout is one field:
   * {@code tp=T} followed by {@code pp=P}, {@code dp=D} and {@code ep=E} where they are not 1
   * ({@code #5 tp=2 dp=2 ep=4}). Prefill/decode splits are {@code pd=...} ({@link #split}), LoRA
   * slots {@code max_loras=N} or {@code max_loras=off} ({@link #lora}).
   */
  static Map<Integer, String> labels(List<SweepConfig> configs) {
    List<Function<SweepConfig, String>> fields = List.of(c -> "model=" + c.model(), c -> "gpu=" + c.gpu(),
        SweepReport::layout, c -> "replicas=" + c.replicas(), c -> "max_num_seqs=" + c.maxNumSeqs(),
        c -> "max_num_batched_tokens=" + c.maxNumBatchedTokens(), c -> "router=" + c.router(),
        c -> "scheduler=" + c.scheduler(), SweepReport::split, SweepReport::lora);
    List<Function<SweepConfig, String>> varying = new ArrayList<>();
    for (Function<SweepConfig, String> f : fields) {
      if (configs.stream().map(f).distinct().count() > 1) {
        varying.add(f);
      }
    }
    if (varying.isEmpty()) {
      varying = fields.subList(0, 2);
    }
    Map<Integer, String> out = new LinkedHashMap<>();
    for (int i = 0; i < configs.size(); i++) {
      StringBuilder b = new StringBuilder("#").append(i);
      for (Function<SweepConfig, String> f : varying) {
        b.append(' ').append(f.apply(configs.get(i)));
      }
      out.put(i, b.toString());
    }
    return out;
  }

  /** {@code pd=P+D} (prefill and decode replicas) and the decider, or {@code pd=none}. */
  static String split(SweepConfig c) {
    return c.disaggregated() || !c.pdDecider().equals("never")
        ? "pd=" + c.prefillReplicas() + "+" + c.decodeReplicas() + " " + c.pdDecider() : "pd=none";
  }

  /** {@code max_loras=N} (LoRA GPU slots per instance), or {@code max_loras=off}. */
  static String lora(SweepConfig c) {
    return "max_loras=" + (c.lora() ? String.valueOf(c.maxLoras()) : "off");
  }

  /** {@code tp=T}, then {@code pp=P}, {@code dp=D} and {@code ep=E} where they are not 1. */
  static String layout(SweepConfig c) {
    return "tp=" + c.tp() + (c.pp() != 1 ? " pp=" + c.pp() : "") + (c.dp() != 1 ? " dp=" + c.dp() : "")
        + (c.ep() != 1 ? " ep=" + c.ep() : "");
  }

  /** The SLO's target on the Pareto latency, ms, or 0 when it has none. */
  private static double sloTargetMs(SweepGrid grid) {
    if (grid.slo() == null) {
      return 0;
    }
    Double us = grid.slo().aggregate().get(grid.paretoLatency());
    return us == null ? 0 : us / 1000;
  }

  /** Latency against achieved rate, one line per configuration, rings at the capacities, the SLO's target dashed. */
  static ObjectNode curves(SweepGrid grid, SweepTable table, Map<Integer, String> labels, String latency) {
    List<JsonNode> records = table.records();
    ObjectNode spec = chart(720, 380);
    ArrayNode points = array();
    Set<String> drawn = new LinkedHashSet<>();
    for (int i = 0; i < records.size(); i++) {
      JsonNode r = records.get(i);
      if (!r.path("status").asText().equals("ok")) {
        continue;
      }
      TreeMap<BigDecimal, JsonNode> byRate = new TreeMap<>();
      if (grid.question() == SweepGrid.Question.CAPACITY) {
        r.path("capacity").path("points").forEach(p -> byRate.putIfAbsent(p.get("rate_rps").decimalValue(), p));
        r.path("saturation").path("points").forEach(p -> byRate.putIfAbsent(p.get("rate_rps").decimalValue(), p));
      } else {
        r.path("rates").forEach(p -> byRate.putIfAbsent(p.get("rate_rps").decimalValue(), p));
      }
      for (JsonNode p : byRate.values()) {
        JsonNode y = p.get(latency);
        JsonNode x = p.get("achieved_rps");
        if (y == null || !y.isNumber() || !(y.asDouble() > 0) || x == null || !x.isNumber()) {
          continue;
        }
        ObjectNode row = points.addObject();
        row.put("config", labels.get(i));
        row.put("group", grid.configs().get(i).model() + " on " + grid.configs().get(i).gpu());
        row.set("rate_rps", p.get("rate_rps"));
        row.set("achieved_rps", x);
        row.set("latency_ms", y);
        row.put("point", status(p));
        drawn.add(labels.get(i));
      }
    }
    boolean byConfig = drawn.size() <= MAX_COLORED_CONFIGS;
    ObjectNode data = dataset(spec, "points", points);
    ArrayNode layers = spec.putArray("layer");
    ObjectNode color = byConfig ? field("config", "nominal", "configuration")
        : field("group", "nominal", "model on GPU (one line per configuration)");
    color.putObject("legend").put("symbolLimit", 60);
    if (byConfig) {
      color.set("sort", VegaLite.strings(new ArrayList<>(drawn)));
    }
    if (!byConfig || drawn.size() > 10) {
      color.putObject("scale").put("scheme", "tableau20");
    }
    ObjectNode line = layers.addObject();
    line.set("data", data);
    line.set("mark", mark("line").put("strokeWidth", 1.5).put("opacity", 0.8));
    ObjectNode le = line.putObject("encoding");
    le.set("x", field("achieved_rps", "quantitative", "completed requests per second"));
    le.set("y", latencyAxis(grid, "latency_ms"));
    le.set("color", color);
    le.set("detail", field("config", "nominal", "configuration"));
    le.set("order", field("rate_rps", "quantitative", "offered rate, req/s"));
    ObjectNode dots = layers.addObject();
    dots.set("data", data);
    dots.set("mark", mark("point").put("filled", true).put("size", 45).put("opacity", 0.95));
    ObjectNode de = dots.putObject("encoding");
    de.set("x", field("achieved_rps", "quantitative", "completed requests per second"));
    de.set("y", latencyAxis(grid, "latency_ms"));
    de.set("color", color);
    ObjectNode shape = field("point", "nominal", "load point");
    shape.set("scale", VegaLite.present(points, "point", List.of(MEETS, MISSES, STEADY, NOT_STEADY),
        List.of("circle", "triangle-down", "square", "cross")));
    de.set("shape", shape);
    ArrayNode tip = de.putArray("tooltip");
    tip.add(field("config", "nominal", "configuration"));
    tip.add(field("rate_rps", "quantitative", "offered rate, req/s"));
    tip.add(field("achieved_rps", "quantitative", "completed, req/s"));
    tip.add(field("latency_ms", "quantitative", grid.paretoLatency() + ", ms"));
    tip.add(field("point", "nominal", "load point"));
    if (grid.question() == SweepGrid.Question.CAPACITY) {
      ArrayNode rings = array();
      for (ObjectNode row : table.rows()) {
        if (row.path("achieved_rps").isNumber() && row.path(latency).isNumber() && row.path(latency).asDouble() > 0
            && row.path("capacity_rps").isNumber()) {
          ObjectNode ring = rings.addObject();
          ring.put("config", labels.get(row.get("index").asInt()));
          ring.set("capacity_rps", row.get("capacity_rps"));
          ring.set("achieved_rps", row.get("achieved_rps"));
          ring.set("latency_ms", row.get(latency));
        }
      }
      if (!rings.isEmpty()) {
        ObjectNode cap = layers.addObject();
        cap.set("data", dataset(spec, "capacities", rings));
        cap.set("mark", mark("point").put("filled", false).put("size", 230).put("strokeWidth", 1.6)
            .put("color", "#111111"));
        ObjectNode ce = cap.putObject("encoding");
        ce.set("x", field("achieved_rps", "quantitative", "completed requests per second"));
        ce.set("y", latencyAxis(grid, "latency_ms"));
        ArrayNode ct = ce.putArray("tooltip");
        ct.add(field("config", "nominal", "configuration"));
        ct.add(field("capacity_rps", "quantitative", "capacity, req/s"));
        ct.add(field("latency_ms", "quantitative", grid.paretoLatency() + " at capacity, ms"));
      }
    }
    double target = sloTargetMs(grid);
    if (target > 0) {
      ObjectNode rule = layers.addObject();
      ArrayNode v = array();
      v.addObject().set("target_ms", num(target));
      rule.set("data", object().set("values", v));
      ObjectNode rm = mark("rule").put("color", "#d62728").put("strokeWidth", 1.2);
      rm.putArray("strokeDash").add(6).add(4);
      rule.set("mark", rm);
      rule.putObject("encoding").set("y", latencyAxis(grid, "target_ms"));
      ObjectNode label = layers.addObject();
      label.set("data", object().set("values", v.deepCopy()));
      label.set("mark", mark("text").put("align", "left").put("baseline", "bottom").put("dx", 4).put("dy", -2)
          .put("color", "#d62728").put("fontSize", 11));
      ObjectNode te = label.putObject("encoding");
      te.set("y", latencyAxis(grid, "target_ms"));
      te.set("x", object().put("value", 0));
      te.set("text", object().put("value", "SLO " + grid.paretoLatency() + " target"));
    }
    return spec;
  }

  private static ObjectNode latencyAxis(SweepGrid grid, String field) {
    ObjectNode y = logField(field, grid.paretoLatency() + ", ms (log scale)");
    y.putObject("axis").put("labelOverlap", "greedy");
    return y;
  }

  /** How a load point fared. */
  static String status(JsonNode p) {
    if (!p.path("steady").asBoolean()) {
      return NOT_STEADY;
    }
    JsonNode meets = p.get("meets_slo");
    if (meets == null || meets.isNull()) {
      return STEADY;
    }
    return meets.asBoolean() ? MEETS : MISSES;
  }

  /** Requests per second per USD-hour against the Pareto latency; the frontier joined, the best named. */
  static ObjectNode frontier(SweepGrid grid, SweepTable table, Map<Integer, String> labels, String latency) {
    ObjectNode spec = chart(720, 340);
    ArrayNode rows = array();
    boolean rates = grid.question() == SweepGrid.Question.RATES;
    for (ObjectNode row : table.rows()) {
      if (!row.path("rps_per_usd_hour").isNumber() || !row.path(latency).isNumber()) {
        continue;
      }
      ObjectNode r = rows.addObject();
      String label = labels.get(row.get("index").asInt());
      r.put("config", rates ? label + " @ " + text(row.get("rate_rps")) + " req/s" : label);
      r.set("latency_ms", row.get(latency));
      r.set("rps_per_usd_hour", row.get("rps_per_usd_hour"));
      r.set("cost_per_hour_usd", row.get("cost_per_hour_usd"));
      r.set("usd_per_million_output_tokens", row.get("usd_per_million_output_tokens"));
      r.put("role", row.path("best").asBoolean() ? BEST : row.path("pareto").asBoolean() ? FRONTIER
          : SweepTable.answersQuestion(grid, row) ? DOMINATED : NOT_CANDIDATE);
    }
    ObjectNode data = dataset(spec, "rows", rows);
    ArrayNode layers = spec.putArray("layer");
    ObjectNode line = layers.addObject();
    line.set("data", data);
    line.putArray("transform").add(filter("datum.role === '" + BEST + "' || datum.role === '" + FRONTIER + "'"));
    line.set("mark", mark("line").put("color", "#ff7f0e").put("strokeWidth", 1.5).put("interpolate", "step-after"));
    ObjectNode le = line.putObject("encoding");
    le.set("x", field("latency_ms", "quantitative", grid.paretoLatency() + ", ms"));
    le.set("y", field("rps_per_usd_hour", "quantitative", "requests per second per USD-hour"));
    le.set("order", field("latency_ms", "quantitative", grid.paretoLatency() + ", ms"));
    ObjectNode dots = layers.addObject();
    dots.set("data", data);
    dots.set("mark", mark("point").put("filled", true).put("opacity", 0.9));
    ObjectNode de = dots.putObject("encoding");
    ObjectNode x = field("latency_ms", "quantitative", grid.paretoLatency() + ", ms");
    x.putObject("scale").put("zero", false);
    de.set("x", x);
    ObjectNode y = field("rps_per_usd_hour", "quantitative", "requests per second per USD-hour");
    y.putObject("scale").put("zero", false);
    de.set("y", y);
    VegaLite.byRole(de, rows, List.of(BEST, FRONTIER, DOMINATED, NOT_CANDIDATE),
        List.of("#d62728", "#ff7f0e", "#1f77b4", "#b0b0b0"), BEST, 70);
    ArrayNode tip = de.putArray("tooltip");
    tip.add(field("config", "nominal", "configuration"));
    tip.add(field("latency_ms", "quantitative", grid.paretoLatency() + ", ms"));
    tip.add(field("rps_per_usd_hour", "quantitative", "req/s per USD-hour"));
    tip.add(field("cost_per_hour_usd", "quantitative", "USD per hour"));
    tip.add(field("usd_per_million_output_tokens", "quantitative", "USD per million output tokens"));
    tip.add(field("role", "nominal", "role"));
    ObjectNode label = layers.addObject();
    label.set("data", data);
    label.putArray("transform").add(filter("datum.role === '" + BEST + "'"));
    label.set("mark", mark("text").put("align", "left").put("dx", 10).put("dy", -8).put("fontSize", 12)
        .put("fontWeight", "bold").put("color", "#d62728"));
    ObjectNode te = label.putObject("encoding");
    te.set("x", field("latency_ms", "quantitative", grid.paretoLatency() + ", ms"));
    te.set("y", field("rps_per_usd_hour", "quantitative", "requests per second per USD-hour"));
    te.set("text", field("config", "nominal", "configuration"));
    return spec;
  }

  /** Whether a row competes for the frontier, as {@link SweepTable} decides. */
  private static List<String> tableHeader(SweepGrid grid) {
    return List.of("configuration", "status", grid.question() == SweepGrid.Question.CAPACITY ? "capacity, req/s"
        : "rate, req/s", "completed, req/s", grid.paretoLatency() + ", ms", "USD per hour", "req/s per USD-hour",
        "USD per million output tokens", "Pareto", "best", "note");
  }

  private static List<List<String>> tableRows(SweepGrid grid, SweepTable table, Map<Integer, String> labels,
      String latency) {
    List<List<String>> out = new ArrayList<>();
    for (ObjectNode row : table.rows()) {
      boolean ok = row.path("status").asText().equals("ok");
      String note = ok ? text(row.get("note")) : text(row.get("reason"));
      String violations = text(row.get("violations"));
      if (ok && !violations.isEmpty() && !row.path("meets_slo").asBoolean()) {
        note = note.isEmpty() ? violations : note + "; " + violations;
      }
      out.add(List.of(labels.get(row.get("index").asInt()), row.path("status").asText(),
          text(row.get(grid.question() == SweepGrid.Question.CAPACITY ? "capacity_rps" : "rate_rps"))
              + (row.path("capacity_lower_bound").asBoolean() ? " (at least)" : ""),
          text(row.get("achieved_rps")), text(row.get(latency)), text(row.get("cost_per_hour_usd")),
          text(row.get("rps_per_usd_hour")), text(row.get("usd_per_million_output_tokens")),
          row.path("pareto").asBoolean() ? "yes" : "", row.path("best").asBoolean() ? "best" : "", note));
    }
    return out;
  }

  private static String text(JsonNode v) {
    if (v == null || v.isNull()) {
      return "";
    }
    return v.isBigDecimal() ? v.decimalValue().toPlainString() : v.asText();
  }

  private static String plain(double v) {
    return PointRun.round(v).toPlainString();
  }
}
