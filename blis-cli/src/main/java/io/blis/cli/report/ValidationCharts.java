package io.blis.cli.report;

import static io.blis.cli.report.VegaLite.array;
import static io.blis.cli.report.VegaLite.chart;
import static io.blis.cli.report.VegaLite.dataset;
import static io.blis.cli.report.VegaLite.field;
import static io.blis.cli.report.VegaLite.filter;
import static io.blis.cli.report.VegaLite.logField;
import static io.blis.cli.report.VegaLite.mark;
import static io.blis.cli.report.VegaLite.num;
import static io.blis.cli.report.VegaLite.object;
import static io.blis.cli.report.VegaLite.scale;
import static io.blis.cli.report.VegaLite.strings;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.blis.engine.validate.Ensemble;
import io.blis.engine.validate.EnsembleRuns;
import io.blis.engine.validate.ExperimentComparison;
import io.blis.engine.validate.LatencyProfile;
import io.blis.engine.validate.Metric;
import io.blis.engine.validate.PredictionInterval;
import io.blis.engine.validate.RunStats;
import io.blis.engine.validate.RunSummary;
import io.blis.engine.validate.ValidationReport;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The HTML page of a {@link ValidationReport}: predicted against observed across the runs (with
 * the y = x line and the prediction intervals), then per run the latency CDFs (E2E, TTFT, per
 * output token) and the mean latencies over the run's time with its load stages, then the text
 * table. Charts are Vega-Lite ({@link ChartPage}).
 */
public final class ValidationCharts {

  /** The whole-run metrics of the across-runs chart, with their panel titles. */
  private static final Map<Metric, String> ACROSS = across();

  private static final List<String> SIDES = List.of("observed", "predicted");
  private static final String[] CDF_TITLES = {"E2E, ms", "TTFT, ms", "per output token, ms"};
  private static final String NOT_SATURATED = "not saturated";
  private static final String SATURATED = "saturated";

  private ValidationCharts() {}

  private static Map<Metric, String> across() {
    Map<Metric, String> m = new LinkedHashMap<>();
    m.put(Metric.E2E_MEAN, "E2E mean, ms");
    m.put(Metric.E2E_P99, "E2E p99, ms");
    m.put(Metric.TTFT_MEAN, "TTFT mean, ms");
    m.put(Metric.TTFT_P99, "TTFT p99, ms");
    m.put(Metric.DECODE_MS_PER_TOKEN, "decode time per output token, ms");
    m.put(Metric.THROUGHPUT, "throughput, completed req/s");
    return m;
  }

  /**
   * A self-contained HTML page (Vega-Lite charts, their libraries inlined) of {@code report}:
   * predicted against observed across runs with the y = x line and the prediction intervals, per
   * run the latency CDFs and the latency over the run's time with its load stages, then its text table.
   */
  public static String html(ValidationReport report) {
    List<ExperimentComparison> runs = report.comparisons();
    ValidationReport.Intervals intervals = report.intervals();
    long saturated = runs.stream().filter(ExperimentComparison::saturated).count();
    ChartPage page = new ChartPage("BLIS validation: predicted against observed");
    page.paragraph(String.format(Locale.ROOT, "%d experiment%s (%d saturated); workload mode: %s; coefficients: %s.",
        runs.size(), runs.size() == 1 ? "" : "s", saturated, report.mode(), report.coefficients()));
    if (runs.isEmpty()) {
      return page.preformatted(report.table()).html();
    }
    page.heading("Predicted against observed, across runs");
    page.note("One point per run; both axes on log scales. On the dashed line y = x the prediction equals the"
        + " observation; above it the simulator predicts too high." + (intervals == null ? ""
        : String.format(Locale.ROOT, " Vertical bars: the %.0f%% prediction intervals (%s).", 100 * intervals.level(),
            String.join(", ", Ensemble.METRICS.stream().map(ACROSS::get).toList()))));
    page.chart("Whole-run statistics, predicted (y) against observed (x), one point per run", acrossRuns(report));
    page.heading("Per run");
    page.note("First: the distribution (CDF) of each request's latency, on a log scale, over the successful requests;"
        + " per output token is (E2E - TTFT) / (output tokens - 1). Below: over the run, the mean latency of the"
        + " requests arriving in each time bin that completed, and the percentage of them that completed (failed"
        + " requests, timed out, are in no latency); shaded bands are the load stages (first to last arrival)."
        + " Curves hold at most " + LatencyProfile.MAX_CDF_POINTS + " points (denser in the top 2%) and "
        + LatencyProfile.MAX_BINS + " bins.");
    for (ExperimentComparison c : runs) {
      page.subheading(c.id() + (c.saturated() ? " (saturated)" : ""));
      page.paragraph(summaryLine(c));
      LatencyProfile obs = c.observed().profile();
      LatencyProfile pred = c.predicted().profile();
      if (obs.isEmpty() && pred.isEmpty()) {
        page.note("No per-request data on either side.");
        continue;
      }
      if (obs.isEmpty()) {
        page.note("The observation has no per-request trace: its distribution is shown by the summary percentiles"
            + " (p50, p90, p99) only, and it has no timeline.");
      }
      page.chart("Latency CDFs of " + c.id() + ", observed and predicted", cdfs(c));
      page.chart("Mean latency over the run of " + c.id() + " and the share of requests that completed, with its"
          + " load stages", timeline(c));
    }
    page.heading("Table");
    page.preformatted(report.table());
    return page.html();
  }

  private static String summaryLine(ExperimentComparison c) {
    RunStats o = c.observed().overall();
    RunStats p = c.predicted().overall();
    return String.format(Locale.ROOT, "E2E mean %s ms observed, %s ms predicted (APE %s); TTFT mean %s ms, %s ms"
        + " (APE %s); decode %s ms/token, %s ms/token; failed %s, %s.", fmt(o.e2eMeanMs()),
        fmt(p.e2eMeanMs()), pct(c.ape(Metric.E2E_MEAN)), fmt(o.ttftMeanMs()), fmt(p.ttftMeanMs()),
        pct(c.ape(Metric.TTFT_MEAN)), fmt(o.decodeMsPerToken()), fmt(p.decodeMsPerToken()),
        pct(100 * o.failureFraction()), pct(100 * p.failureFraction()));
  }

  private static String pct(double v) {
    return Double.isFinite(v) ? fmt(v) + "%" : "n/a";
  }

  private static String fmt(double v) {
    return !Double.isFinite(v) ? "n/a" : Math.abs(v) >= 100 ? String.format(Locale.ROOT, "%.0f", v)
        : String.format(Locale.ROOT, "%.3g", v);
  }

  /** One panel per metric: runs as points, intervals as bars, y = x dashed; equal log scales on both axes. */
  static ObjectNode acrossRuns(ValidationReport report) {
    ValidationReport.Intervals intervals = report.intervals();
    ObjectNode spec = object();
    ArrayNode rows = array();
    ObjectNode data = dataset(spec, "runs", rows);
    ArrayNode panels = spec.putArray("concat");
    spec.put("columns", 3);
    for (Map.Entry<Metric, String> m : ACROSS.entrySet()) {
      double lo = Double.POSITIVE_INFINITY;
      double hi = 0;
      int n = 0;
      boolean bars = false;
      for (int i = 0; i < report.comparisons().size(); i++) {
        ExperimentComparison c = report.comparisons().get(i);
        double o = m.getKey().of(c.observed().overall());
        double p = m.getKey().of(c.predicted().overall());
        if (!(o > 0 && p > 0 && Double.isFinite(o) && Double.isFinite(p))) {
          continue;
        }
        ObjectNode r = rows.addObject();
        r.put("metric", m.getValue());
        r.put("run", c.id());
        r.put("group", c.saturated() ? SATURATED : NOT_SATURATED);
        r.set("observed", num(o));
        r.set("predicted", num(p));
        r.set("ape_pct", num(c.ape(m.getKey())));
        lo = Math.min(lo, Math.min(o, p));
        hi = Math.max(hi, Math.max(o, p));
        PredictionInterval pi = intervals == null ? null : intervals.perRun().get(i).get(m.getKey());
        if (pi != null && pi.low() > 0 && Double.isFinite(pi.high())) {
          r.set("low", num(pi.low()));
          r.set("high", num(pi.high()));
          r.put("observed_inside", pi.contains(o) ? "yes" : "no");
          lo = Math.min(lo, pi.low());
          hi = Math.max(hi, pi.high());
          bars = true;
        }
        n++;
      }
      if (n == 0) {
        continue;
      }
      // a tenth of a decade (at least) around the values, the same on both axes so that y = x is the diagonal
      double pad = Math.max(Math.pow(10, 0.1), Math.pow(hi / lo, 0.08));
      double[] domain = {lo / pad, hi * pad};
      String mine = "datum.metric === '" + m.getValue() + "'";
      ObjectNode panel = chart(250, 230).put("title", m.getValue());
      ArrayNode layers = panel.putArray("layer");
      ObjectNode diagonal = layers.addObject();
      ArrayNode line = array();
      for (double v : domain) {
        line.addObject().set("v", num(v));
      }
      diagonal.set("data", object().set("values", line));
      ObjectNode dashed = mark("line").put("color", "#888888").put("strokeWidth", 1).put("clip", true);
      dashed.putArray("strokeDash").add(5).add(4);
      diagonal.set("mark", dashed);
      ObjectNode de = diagonal.putObject("encoding");
      de.set("x", logAxis("v", "observed", domain));
      de.set("y", logAxis("v", "predicted", domain));
      if (bars) {
        ObjectNode rule = layers.addObject();
        rule.set("data", data);
        rule.putArray("transform").add(filter(mine + " && isValid(datum.low)"));
        rule.set("mark", mark("rule").put("strokeWidth", 2).put("opacity", 0.5).put("clip", true));
        ObjectNode be = rule.putObject("encoding");
        be.set("x", logAxis("observed", "observed", domain));
        be.set("y", logAxis("low", "predicted", domain));
        be.set("y2", object().put("field", "high"));
        be.set("color", groupColor(report.comparisons()));
      }
      ObjectNode points = layers.addObject();
      points.set("data", data);
      points.putArray("transform").add(filter(mine));
      points.set("mark", mark("point").put("filled", true).put("size", 55).put("opacity", 0.9));
      ObjectNode pe = points.putObject("encoding");
      pe.set("x", logAxis("observed", "observed", domain));
      pe.set("y", logAxis("predicted", "predicted", domain));
      pe.set("color", groupColor(report.comparisons()));
      ArrayNode tip = pe.putArray("tooltip");
      tip.add(field("run", "nominal", "run"));
      tip.add(field("observed", "quantitative", "observed"));
      tip.add(field("predicted", "quantitative", "predicted"));
      tip.add(field("ape_pct", "quantitative", "APE, %"));
      if (bars) {
        tip.add(field("low", "quantitative", "interval low"));
        tip.add(field("high", "quantitative", "interval high"));
        tip.add(field("observed_inside", "nominal", "observed inside"));
      }
      panels.add(panel);
    }
    return spec;
  }

  /** A log-scale channel with a fixed domain (no rounding out to whole decades, which squeezes the data). */
  private static ObjectNode logAxis(String field, String title, double[] domain) {
    ObjectNode f = logField(field, title);
    ObjectNode scale = (ObjectNode) f.get("scale");
    scale.set("domain", array().add(num(domain[0])).add(num(domain[1])));
    scale.put("nice", false);
    f.putObject("axis").put("tickCount", 5).put("labelOverlap", "greedy");
    return f;
  }

  /** Colours of the runs by whether they were saturated; the legend lists the groups present only. */
  private static ObjectNode groupColor(List<ExperimentComparison> runs) {
    List<String> domain = new ArrayList<>();
    List<String> range = new ArrayList<>();
    if (runs.stream().anyMatch(c -> !c.saturated())) {
      domain.add(NOT_SATURATED);
      range.add(VegaLite.PREDICTED_COLOR);
    }
    if (runs.stream().anyMatch(ExperimentComparison::saturated)) {
      domain.add(SATURATED);
      range.add("#d62728");
    }
    ObjectNode c = field("group", "nominal", "measured run");
    c.set("scale", scale(domain, range));
    return c;
  }

  private static ObjectNode sideColor() {
    ObjectNode c = field("side", "nominal", null);
    c.putObject("legend").put("orient", "top");
    c.set("scale", scale(SIDES, List.of(VegaLite.OBSERVED_COLOR, VegaLite.PREDICTED_COLOR)));
    return c;
  }

  /** The three CDFs of a run side by side, observed and predicted in each. */
  static ObjectNode cdfs(ExperimentComparison c) {
    ArrayNode rows = array();
    for (int s = 0; s < 2; s++) {
      LatencyProfile p = s == 0 ? c.observed().profile() : c.predicted().profile();
      LatencyProfile.Cdf[] cdfs = {p.e2e(), p.ttft(), p.perToken()};
      for (int m = 0; m < cdfs.length; m++) {
        List<LatencyProfile.CdfPoint> pts = cdfs[m].points().stream().filter(x -> x.valueMs() > 0).toList();
        if (!pts.isEmpty()) {
          rows.add(cdfRow("cdf", CDF_TITLES[m], SIDES.get(s), pts));
        }
      }
    }
    if (c.observed().profile().isEmpty()) {
      RunStats o = c.observed().overall();
      double[][] summary = {{o.e2eP50Ms(), o.e2eP90Ms(), o.e2eP99Ms()}, {o.ttftP50Ms(), o.ttftP90Ms(), o.ttftP99Ms()}};
      double[] fractions = {0.5, 0.9, 0.99};
      for (int m = 0; m < summary.length; m++) {
        List<LatencyProfile.CdfPoint> pts = new ArrayList<>();
        for (int i = 0; i < fractions.length; i++) {
          if (summary[m][i] > 0 && Double.isFinite(summary[m][i])) {
            pts.add(new LatencyProfile.CdfPoint(summary[m][i], fractions[i]));
          }
        }
        if (!pts.isEmpty()) {
          rows.add(cdfRow("percentiles", CDF_TITLES[m], "observed", pts));
        }
      }
    }
    ObjectNode spec = object();
    ObjectNode data = dataset(spec, "cdf", rows);
    ArrayNode panels = spec.putArray("hconcat");
    for (String metric : CDF_TITLES) {
      ObjectNode panel = chart(290, 190).put("title", metric);
      ArrayNode layers = panel.putArray("layer");
      for (String kind : List.of("cdf", "percentiles")) {
        boolean present = false;
        for (var r : rows) {
          present |= r.get("metric").asText().equals(metric) && r.get("kind").asText().equals(kind);
        }
        if (!present) {
          continue;
        }
        ObjectNode layer = layers.addObject();
        layer.set("data", data);
        ArrayNode tr = layer.putArray("transform");
        tr.add(filter("datum.metric === '" + metric + "' && datum.kind === '" + kind + "'"));
        tr.addObject().set("flatten", strings(List.of("ms", "fraction")));
        ObjectNode e = cdfEncoding();
        if (kind.equals("cdf")) {
          layer.set("mark", mark("line").put("interpolate", "step-after").put("strokeWidth", 1.6));
        } else {
          layer.set("mark", mark("point").put("filled", true).put("size", 50).put("shape", "diamond"));
          ArrayNode tip = e.putArray("tooltip");
          tip.add(field("fraction", "quantitative", "percentile (fraction)"));
          tip.add(field("ms", "quantitative", "latency, ms"));
        }
        layer.set("encoding", e);
      }
      if (!layers.isEmpty()) {
        panels.add(panel);
      }
    }
    return spec;
  }

  private static ObjectNode cdfRow(String kind, String metric, String side, List<LatencyProfile.CdfPoint> pts) {
    ObjectNode r = object();
    r.put("kind", kind);
    r.put("metric", metric);
    r.put("side", side);
    ArrayNode ms = r.putArray("ms");
    ArrayNode f = r.putArray("fraction");
    for (LatencyProfile.CdfPoint p : pts) {
      ms.add(num(p.valueMs()));
      f.add(num(p.fraction()));
    }
    return r;
  }

  private static ObjectNode cdfEncoding() {
    ObjectNode e = object();
    ObjectNode x = logField("ms", "latency, ms (log scale)");
    ((ObjectNode) x.get("scale")).put("nice", false);
    x.putObject("axis").put("labelOverlap", "greedy").put("labelSeparation", 6);
    e.set("x", x);
    ObjectNode y = field("fraction", "quantitative", "fraction of requests \u2264 x");
    y.putObject("scale").set("domain", array().add(0).add(1));
    e.set("y", y);
    e.set("color", sideColor());
    return e;
  }

  /**
   * Per arrival time bin, stacked over the stage bands: mean E2E and mean TTFT of the requests that
   * completed, and the percentage of arrivals that completed (what the means leave out).
   */
  static ObjectNode timeline(ExperimentComparison c) {
    ObjectNode spec = object();
    ArrayNode series = array();
    for (int s = 0; s < 2; s++) {
      LatencyProfile p = s == 0 ? c.observed().profile() : c.predicted().profile();
      if (p.timeline().isEmpty()) {
        continue;
      }
      for (String metric : List.of("e2e", "ttft", "completed")) {
        ObjectNode r = series.addObject();
        r.put("metric", metric);
        r.put("side", SIDES.get(s));
        ArrayNode t = r.putArray("t");
        ArrayNode v = r.putArray("v");
        for (LatencyProfile.TimeBin b : p.timeline()) {
          t.add(num(b.startS() + b.widthS() / 2));
          v.add(num(switch (metric) {
            case "e2e" -> b.e2eMeanMs();
            case "ttft" -> b.ttftMeanMs();
            default -> 100.0 * b.completed() / b.arrivals();
          }));
        }
      }
    }
    LatencyProfile staged = c.observed().profile().stages().isEmpty() ? c.predicted().profile()
        : c.observed().profile();
    ArrayNode stages = array();
    for (LatencyProfile.StageSpan st : staged.stages()) {
      ObjectNode r = stages.addObject();
      r.put("stage", String.format(Locale.ROOT, "stage %d: %s req/s", st.stage(), fmt(st.arrivalRps())));
      r.set("start", num(st.firstArrivalS()));
      r.set("end", num(st.lastArrivalS()));
      r.put("shade", stages.size() % 2);
    }
    ObjectNode seriesData = dataset(spec, "timeline", series);
    ObjectNode stageData = dataset(spec, "stages", stages);
    ArrayNode charts = spec.putArray("vconcat");
    charts.add(timelinePanel("e2e", "mean E2E, ms", seriesData, stageData, true, false));
    charts.add(timelinePanel("ttft", "mean TTFT, ms", seriesData, stageData, false, false));
    charts.add(timelinePanel("completed", "completed, % of arrivals", seriesData, stageData, false, true));
    spec.putObject("resolve").putObject("scale").put("x", "shared").put("color", "shared");
    return spec;
  }

  /**
   * One panel of the timeline: the stage bands (labelled in the first panel), the metric's two
   * lines; the time axis titled under the last panel only.
   */
  private static ObjectNode timelinePanel(String metric, String title, ObjectNode seriesData, ObjectNode stageData,
      boolean first, boolean last) {
    String time = last ? "time since the run started, s" : null;
    ObjectNode panel = chart(960, 120);
    ArrayNode layers = panel.putArray("layer");
    ObjectNode bands = layers.addObject();
    bands.set("data", stageData);
    bands.set("mark", mark("rect").put("color", "#9e9e9e"));
    ObjectNode be = bands.putObject("encoding");
    be.set("x", field("start", "quantitative", time));
    be.set("x2", object().put("field", "end"));
    ObjectNode opacity = object();
    opacity.putObject("condition").put("test", "datum.shade === 1").put("value", 0.16);
    opacity.put("value", 0.07);
    be.set("opacity", opacity);
    if (first) {
      ObjectNode text = layers.addObject();
      text.set("data", stageData);
      text.set("mark", mark("text").put("align", "left").put("baseline", "bottom").put("dx", 2)
          .put("fontSize", 11).put("color", "#444444"));
      ObjectNode te = text.putObject("encoding");
      te.set("x", field("start", "quantitative", time));
      te.set("y", object().put("value", -2));
      te.set("text", object().put("field", "stage"));
    }
    ObjectNode line = layers.addObject();
    line.set("data", seriesData);
    ArrayNode tr = line.putArray("transform");
    tr.add(filter("datum.metric === '" + metric + "'"));
    tr.addObject().set("flatten", strings(List.of("t", "v")));
    line.set("mark", mark("line").put("strokeWidth", 1.4).put("interpolate", "monotone"));
    ObjectNode le = line.putObject("encoding");
    le.set("x", field("t", "quantitative", time));
    le.set("y", field("v", "quantitative", title));
    le.set("color", sideColor());
    return panel;
  }
}
