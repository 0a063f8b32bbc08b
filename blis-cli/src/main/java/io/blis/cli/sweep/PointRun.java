package io.blis.cli.sweep;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.blis.engine.capacity.CapacityReport;
import io.blis.engine.capacity.CapacitySearch;
import io.blis.engine.capacity.PointMetrics;
import io.blis.engine.capacity.SloSet;
import io.blis.latency.catalog.GpuCatalog;
import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Answers a sweep's question for one configuration and records the answer as the JSON object
 * that {@code points.jsonl} holds (documented in docs/capacity.md, Sweeps). Numbers are rounded to
 * 6 significant digits here, once: the tables are computed from this record only, so a resumed
 * sweep and an uninterrupted one write the same bytes.
 */
final class PointRun {

  private static final JsonNodeFactory NODES = JsonNodeFactory.withExactBigDecimals(true);
  private static final MathContext DIGITS = new MathContext(6, RoundingMode.HALF_EVEN);

  private PointRun() {}

  /** The record of one configuration (without the fingerprint and key, which the caller adds). */
  static ObjectNode run(SweepGrid grid, SweepConfig c) {
    ObjectNode out = header(grid, c);
    if (!out.path("status").asText().equals("ok")) {
      return out;
    }
    CapacitySearch search = new CapacitySearch(grid.deployment().factory(c), grid.workload(), grid.slo(), grid.settings());
    if (grid.question() == SweepGrid.Question.RATES) {
      ArrayNode rates = out.putArray("rates");
      for (double r : grid.rates()) {
        rates.add(point(search.evaluate(r, 0, null), grid.slo()));
      }
      return out;
    }
    CapacitySearch.Found max = search.maxRate(null);
    ObjectNode cap = search(out, "capacity", max);
    if (max.at() != null) {
      cap.set("at", point(max.at(), grid.slo()));
    } else {
      ArrayNode v = cap.putArray("violations_at_lowest_rate");
      ordered(max.points().get(max.points().size() - 1).violations()).forEach(v::add);
    }
    if (grid.intervals() != null && Double.isFinite(max.rateRps())) {
      SweepGrid.Intervals iv = grid.intervals();
      var pd = grid.deployment().resolved(c);
      CapacityReport.RateInterval ri = CapacityReport.RateInterval.of(search, max.rateRps(), iv.ensemble(),
          iv.ensemble().distances(pd.model(), pd.gpu(), pd.layout()), iv.level());
      ri.writeTo(cap.putObject("interval"), PointRun::round);
    }
    if (grid.saturation()) {
      search(out, "saturation", search.saturationRate(null));
    }
    return out;
  }

  /**
   * The start of a configuration's record, before anything is simulated: {@code status: skipped}
   * with its {@code reason} when the configuration cannot be deployed (the model, GPU, TP split,
   * memory fit and policies are resolved), else {@code status: ok} and its {@code gpu_name}.
   */
  static ObjectNode header(SweepGrid grid, SweepConfig c) {
    ObjectNode out = NODES.objectNode();
    CapacitySearch.DeploymentFactory factory = grid.deployment().factory(c);
    String gpuName;
    try {
      factory.builder(0, null); // resolves the model, GPU, TP split, memory fit and policies
      gpuName = GpuCatalog.resolve(grid.deployment().resolve(c.gpu())).name();
    } catch (IllegalArgumentException e) {
      out.put("status", "skipped");
      out.put("reason", e.getMessage());
      return out;
    }
    out.put("status", "ok");
    out.put("gpu_name", gpuName);
    return out;
  }

  /**
   * The POINT of the {@code i}-th rate of question rates for a configuration that {@link #header}
   * found deployable: the same, whether the rates run one after another ({@link #run}) or each on
   * its own (a sweep that checkpoints each rate).
   */
  static ObjectNode ratePoint(SweepGrid grid, SweepConfig c, int i) {
    CapacitySearch search = new CapacitySearch(grid.deployment().factory(c), grid.workload(), grid.slo(), grid.settings());
    return point(search.evaluate(grid.rates().get(i), 0, null), grid.slo());
  }

  /** A search's answer under {@code key}: its rate, whether it is a lower bound, and its load points. */
  private static ObjectNode search(ObjectNode out, String key, CapacitySearch.Found f) {
    ObjectNode n = out.putObject(key);
    num(n, "rate_rps", f.rateRps());
    n.put("lower_bound", f.atLeast());
    n.put("points_simulated", f.points().size());
    n.set("points", curve(f.points()));
    return n;
  }

  /**
   * A point's violations in a fixed order: "not steady" first, then the missed targets sorted, so
   * that targets given in another order give the same records and the same bytes.
   */
  static List<String> ordered(List<String> violations) {
    List<String> out = new ArrayList<>(violations);
    out.sort(Comparator.comparing((String x) -> !x.startsWith("not steady")).thenComparing(Comparator.naturalOrder()));
    return out;
  }

  /**
   * A search's load points in the order simulated, each with its rate, steady state, whether it
   * met the targets, its offered and achieved rates and its latency statistics (ms; null where a
   * measured request did not complete): the latency-throughput curve of the report.
   */
  static ArrayNode curve(List<CapacitySearch.Point> points) {
    ArrayNode out = NODES.arrayNode();
    for (CapacitySearch.Point p : points) {
      PointMetrics m = p.metrics();
      ObjectNode n = out.addObject();
      num(n, "rate_rps", p.rateRps());
      n.put("steady", m.steady());
      n.put("meets_slo", p.meetsTargets());
      num(n, "offered_rps", m.offeredRps());
      num(n, "achieved_rps", m.achievedRps());
      latencies(n, m);
    }
    return out;
  }

  private static void latencies(ObjectNode n, PointMetrics m) {
    for (String metric : SloSet.METRICS) {
      for (String stat : SweepTable.STATS) {
        num(n, metric + "_" + stat + "_ms", m.value(metric + "_" + stat) / 1000);
      }
    }
  }

  /** One load point's fields. */
  static ObjectNode point(CapacitySearch.Point p, SloSet slo) {
    PointMetrics m = p.metrics();
    ObjectNode n = NODES.objectNode();
    num(n, "rate_rps", p.rateRps());
    n.put("steady", m.steady());
    if (slo != null) {
      n.put("meets_slo", p.meetsTargets());
    } else {
      n.putNull("meets_slo");
    }
    ArrayNode v = n.putArray("violations");
    ordered(p.violations()).forEach(v::add);
    num(n, "offered_rps", m.offeredRps());
    num(n, "achieved_rps", m.achievedRps());
    n.put("measured", m.measured());
    n.put("completed", m.completed());
    num(n, "mean_input_tokens", m.meanInputTokens());
    num(n, "mean_output_tokens", m.meanOutputTokens());
    num(n, "output_tokens_per_s", m.achievedRps() * m.meanOutputTokens());
    latencies(n, m);
    return n;
  }

  /** A number rounded to 6 significant digits, or null when it is not finite. */
  static void num(ObjectNode n, String key, double v) {
    if (Double.isFinite(v)) {
      n.put(key, round(v));
    } else {
      n.putNull(key);
    }
  }

  static BigDecimal round(double v) {
    BigDecimal b = BigDecimal.valueOf(v).round(DIGITS).stripTrailingZeros();
    return b.scale() < 0 ? b.setScale(0) : b;
  }
}
