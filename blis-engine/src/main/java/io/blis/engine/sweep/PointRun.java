package io.blis.engine.sweep;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.blis.engine.capacity.CapacityReport;
import io.blis.engine.capacity.CapacitySearch;
import io.blis.engine.capacity.PointMetrics;
import io.blis.engine.capacity.SloSet;
import io.blis.engine.result.RequestRecord;
import io.blis.latency.catalog.GpuCatalog;
import io.blis.engine.result.SimulationResult;
import io.blis.workload.RequestOutcome;
import io.blis.workload.RequestSource;
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

  /** A simulated load point with the token counts the capacity search does not keep. */
  record Measured(CapacitySearch.Point point, double meanInputTokens, double meanOutputTokens) {}

  /** The record of one configuration (without the fingerprint and key, which the caller adds). */
  static ObjectNode run(SweepGrid grid, SweepConfig c) {
    ObjectNode out = NODES.objectNode();
    CapacitySearch.DeploymentFactory factory = grid.deployment().factory(c);
    String gpuName;
    try {
      factory.builder(0, null); // resolves the model, GPU, TP split, memory fit and policies
      gpuName = GpuCatalog.resolve(absolute(grid, c.gpu())).name();
    } catch (IllegalArgumentException e) {
      out.put("status", "skipped");
      out.put("reason", e.getMessage());
      return out;
    }
    out.put("status", "ok");
    out.put("gpu_name", gpuName);
    CapacitySearch search = new CapacitySearch(factory, grid.workload(), grid.slo(), grid.settings());
    if (grid.question() == SweepGrid.Question.RATES) {
      ArrayNode rates = out.putArray("rates");
      for (double r : grid.rates()) {
        rates.add(point(measure(grid, factory, r), grid.slo()));
      }
      return out;
    }
    CapacitySearch.Found max = search.maxRate(null);
    ObjectNode cap = out.putObject("capacity");
    num(cap, "rate_rps", max.rateRps());
    cap.put("lower_bound", max.atLeast());
    cap.put("points_simulated", max.points().size());
    cap.set("points", curve(max.points()));
    if (max.at() != null) {
      Measured m = measure(grid, factory, max.at().rateRps());
      check(max.at(), m.point(), c);
      cap.set("at", point(m, grid.slo()));
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
      CapacitySearch.Found sat = search.saturationRate(null);
      ObjectNode s = out.putObject("saturation");
      num(s, "rate_rps", sat.rateRps());
      s.put("lower_bound", sat.atLeast());
      s.put("points_simulated", sat.points().size());
      s.set("points", curve(sat.points()));
    }
    return out;
  }

  private static String absolute(SweepGrid grid, String gpu) {
    return SweepGrid.looksLikePath(gpu) ? grid.deployment().baseDir().resolve(gpu).toString() : gpu;
  }

  /**
   * Simulates one load point as {@link CapacitySearch#evaluate} does (same duration, same window,
   * same targets) and also counts the measured requests' tokens.
   */
  static Measured measure(SweepGrid grid, CapacitySearch.DeploymentFactory factory, double rateRps) {
    CapacitySearch.Settings s = grid.settings();
    double duration = Math.min(Math.max(s.durationS(), s.minRequests() / rateRps), s.maxRequests() / rateRps);
    SimulationResult result;
    try (RequestSource source = grid.workload().at(rateRps, duration)) {
      result = factory.builder(0, null).source(source).recordRequests(true).build().run();
    }
    List<RequestRecord> records = result.requests();
    PointMetrics m = PointMetrics.of(records, s.warmup());
    List<String> v = new ArrayList<>(grid.slo() == null ? List.of() : grid.slo().violations(m));
    if (!m.steady()) {
      v.add(0, "not steady: " + m.steadiness());
    }
    // the window PointMetrics measures: arrivals from the end of the warm-up on
    long first = Long.MAX_VALUE;
    long last = Long.MIN_VALUE;
    for (RequestRecord r : records) {
      first = Math.min(first, r.arrivalUs());
      last = Math.max(last, r.arrivalUs());
    }
    long w0 = first + (long) Math.floor((last - first) * s.warmup());
    long in = 0;
    long outTokens = 0;
    int done = 0;
    for (RequestRecord r : records) {
      if (r.arrivalUs() >= w0 && r.outcome() == RequestOutcome.COMPLETED) {
        done++;
        in += r.inputTokens();
        outTokens += r.outputTokens();
      }
    }
    if (done != m.completed()) {
      throw new IllegalStateException("token count window disagrees with PointMetrics: " + done + " != " + m.completed());
    }
    return new Measured(new CapacitySearch.Point(rateRps, 0, m, v), done == 0 ? Double.NaN : (double) in / done,
        done == 0 ? Double.NaN : (double) outTokens / done);
  }

  /** The capacity point simulated again must be the one the search found. */
  private static void check(CapacitySearch.Point found, CapacitySearch.Point again, SweepConfig c) {
    PointMetrics a = found.metrics();
    PointMetrics b = again.metrics();
    if (a.measured() != b.measured() || a.completed() != b.completed() || a.achievedRps() != b.achievedRps()
        || Double.compare(a.value("e2e_p99"), b.value("e2e_p99")) != 0 || !found.violations().equals(again.violations())) {
      throw new IllegalStateException(c.key() + ": simulating the capacity point again gave other results"
          + " (the simulation is not deterministic)");
    }
  }

  /**
   * A point's violations in a fixed order: "not steady" first, then the missed targets sorted (the
   * targets' map keeps no order from one JVM run to the next, and a resumed sweep mixes records of
   * several runs).
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
  static ObjectNode point(Measured x, SloSet slo) {
    CapacitySearch.Point p = x.point();
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
    num(n, "mean_input_tokens", x.meanInputTokens());
    num(n, "mean_output_tokens", x.meanOutputTokens());
    num(n, "output_tokens_per_s", m.achievedRps() * x.meanOutputTokens());
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
