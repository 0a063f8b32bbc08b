package io.blis.engine.capacity;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.List;
import java.util.Locale;

/**
 * What a capacity question found, as JSON and as a table: the highest rate meeting the targets,
 * the saturation rate, the interval of the highest rate when an ensemble was simulated, the
 * fewest replicas for a target rate when asked, and every load point simulated.
 *
 * @param deployment the deployment in words
 * @param search the search that was run
 * @param maxRate the highest rate meeting every target
 * @param saturation the highest steady rate
 * @param interval the highest rate's interval, or null
 * @param targetRate the rate the replicas were sized for, or NaN
 * @param replicas the fewest replicas for {@code targetRate}, or null
 */
public record CapacityReport(String deployment, CapacitySearch search, CapacitySearch.Found maxRate, CapacitySearch.Found saturation,
    RateInterval interval, double targetRate, CapacitySearch.Replicas replicas) {

  /**
   * The interval of the highest rate: the searches with each ensemble member's coefficients give
   * the members' spread, to which the ensemble's residual and extrapolation scales of mean E2E
   * are added as for a latency (near capacity the rate moves with the step time as latency does).
   *
   * @param level nominal coverage
   * @param low lower end, req/s
   * @param high upper end, req/s
   * @param memberRates each member's highest rate (NaN where none passed)
   * @param extrapolation why the deployment lies outside the fit, one reason each
   */
  public record RateInterval(double level, double low, double high, double[] memberRates, List<String> extrapolation) {

    /**
     * The interval of {@code search}'s highest rate {@code point}: the search is run again with each
     * ensemble member's coefficients.
     *
     * @param distances how the deployment lies outside the ensemble's fit domain
     * @param level nominal coverage
     */
    public static RateInterval of(CapacitySearch search, double point, io.blis.engine.validate.Ensemble ensemble,
        List<io.blis.engine.validate.Extrapolation> distances, double level) {
      double[] members = ensemble.members().stream().mapToDouble(m -> search.maxRate(m.coefficients()).rateRps()).toArray();
      io.blis.engine.validate.PredictionInterval pi = io.blis.engine.validate.PredictionInterval.of(point, members,
          ensemble.residual(io.blis.engine.validate.Metric.E2E_MEAN),
          ensemble.extrapolationLogSd(distances, io.blis.engine.validate.Metric.E2E_MEAN), distances, level);
      return new RateInterval(pi.level(), pi.low(), pi.high(), members,
          distances.stream().map(io.blis.engine.validate.Extrapolation::reason).toList());
    }

    /**
     * Writes {@code level}, {@code low_rps}, {@code high_rps}, {@code member_rates_rps} (null where a
     * member found none) and {@code extrapolation} into {@code n}, numbers through {@code round}.
     */
    public void writeTo(ObjectNode n, java.util.function.DoubleFunction<BigDecimal> round) {
      n.put("level", round.apply(level));
      n.put("low_rps", round.apply(low));
      n.put("high_rps", round.apply(high));
      ArrayNode m = n.putArray("member_rates_rps");
      for (double v : memberRates) {
        if (Double.isFinite(v)) {
          m.add(round.apply(v));
        } else {
          m.addNull();
        }
      }
      ArrayNode why = n.putArray("extrapolation");
      extrapolation.forEach(why::add);
    }
  }

  private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  /** The report as JSON. */
  public String toJson() {
    ObjectNode root = JSON.createObjectNode();
    root.put("deployment", deployment);
    root.put("workload", search.workload().description());
    root.put("slo", search.slos().describe());
    ObjectNode st = root.putObject("settings");
    CapacitySearch.Settings s = search.settings();
    num(st, "point_duration_s", s.durationS());
    st.put("min_requests_per_point", s.minRequests());
    st.put("max_requests_per_point", s.maxRequests());
    num(st, "warmup_fraction", s.warmup());
    num(st, "tolerance", s.tolerance());
    found(root, "max_rate", maxRate);
    found(root, "saturation_rate", saturation);
    if (interval != null) {
      interval.writeTo(root.putObject("max_rate_interval"), CapacityReport::round);
    }
    if (replicas != null) {
      ObjectNode r = root.putObject("replicas");
      num(r, "target_rate_rps", targetRate);
      if (replicas.instances() > 0) {
        r.put("instances", replicas.instances());
        r.set("at", point(replicas.at()));
      } else {
        r.putNull("instances");
      }
      ArrayNode pts = r.putArray("points");
      replicas.points().forEach(p -> pts.add(point(p)));
    }
    try {
      return JSON.writeValueAsString(root) + "\n";
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException("cannot render the capacity JSON", e);
    }
  }

  private static void found(ObjectNode root, String key, CapacitySearch.Found f) {
    ObjectNode n = root.putObject(key);
    num(n, "rate_rps", f.rateRps());
    n.put("lower_bound", f.atLeast());
    if (f.at() != null) {
      n.set("at", point(f.at()));
    }
    ArrayNode pts = n.putArray("points");
    f.points().forEach(p -> pts.add(point(p)));
  }

  /** One point: its rate, steady state, targets and the usual statistics (ms). */
  static ObjectNode point(CapacitySearch.Point p) {
    ObjectNode n = JSON.createObjectNode();
    num(n, "rate_rps", p.rateRps());
    if (p.instances() > 0) {
      n.put("instances", p.instances());
    }
    n.put("steady", p.metrics().steady());
    n.put("steadiness", p.metrics().steadiness());
    n.put("meets_targets", p.meetsTargets());
    ArrayNode v = n.putArray("violations");
    p.violations().forEach(v::add);
    num(n, "offered_rps", p.metrics().offeredRps());
    num(n, "achieved_rps", p.metrics().achievedRps());
    n.put("measured", p.metrics().measured());
    n.put("completed", p.metrics().completed());
    for (String metric : SloSet.METRICS) {
      for (String stat : List.of("mean", "p50", "p90", "p99")) {
        double us = p.metrics().value(metric + "_" + stat);
        if (Double.isFinite(us)) {
          n.put(metric + "_" + stat + "_ms", round(us / 1000));
        }
      }
    }
    return n;
  }

  private static void num(ObjectNode n, String key, double v) {
    if (Double.isFinite(v)) {
      n.put(key, round(v));
    } else {
      n.putNull(key);
    }
  }

  private static BigDecimal round(double v) {
    BigDecimal d = BigDecimal.valueOf(v).setScale(4, RoundingMode.HALF_EVEN).stripTrailingZeros();
    return d.scale() < 0 ? d.setScale(0) : d;
  }

  /** A few lines for the terminal. */
  public String table() {
    StringBuilder b = new StringBuilder();
    b.append("deployment: ").append(deployment).append('\n');
    b.append("workload:   ").append(search.workload().description()).append('\n');
    b.append("targets:    ").append(search.slos().describe()).append('\n');
    b.append(line("highest rate meeting every target", maxRate));
    if (interval != null) {
      b.append(String.format(Locale.ROOT, "  %.0f%% interval: %.3g - %.3g req/s%s%n", 100 * interval.level(), interval.low(),
          interval.high(), interval.extrapolation().isEmpty() ? "" : " (" + String.join("; ", interval.extrapolation()) + ")"));
    }
    b.append(line("saturation rate (highest steady)", saturation));
    if (replicas != null) {
      b.append(replicas.instances() > 0
          ? String.format(Locale.ROOT, "fewest replicas meeting every target at %.3g req/s: %d%n", targetRate, replicas.instances())
          : String.format(Locale.ROOT, "no replica count tried meets every target at %.3g req/s (%d points)%n", targetRate,
              replicas.points().size()));
    }
    b.append(String.format(Locale.ROOT, "%d load points simulated%n", maxRate.points().size() + saturation.points().size()
        + (replicas == null ? 0 : replicas.points().size())));
    return b.toString();
  }

  private static String line(String what, CapacitySearch.Found f) {
    if (Double.isNaN(f.rateRps())) {
      return String.format(Locale.ROOT, "%s: none, down to the lowest rate tried (%s)%n", what,
          f.points().get(f.points().size() - 1).violations());
    }
    CapacitySearch.Point p = f.at();
    int unfinished = p.metrics().measured() - p.metrics().completed();
    return String.format(Locale.ROOT, "%s: %s%.4g req/s (TTFT p99 %s, E2E p99 %s, %.3g req/s completed%s)%n",
        what, f.atLeast() ? "at least " : "", f.rateRps(), ms(p.metrics().value("ttft_p99")),
        ms(p.metrics().value("e2e_p99")), p.metrics().achievedRps(),
        unfinished == 0 ? "" : String.format(Locale.ROOT, "; %d of %d measured requests did not complete", unfinished,
            p.metrics().measured()));
  }

  private static String ms(double us) {
    return Double.isFinite(us) ? String.format(Locale.ROOT, "%.1f ms", us / 1000) : "unbounded";
  }
}
