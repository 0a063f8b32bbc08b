package io.blis.engine.corpus;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.blis.engine.validate.Extrapolation;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Predicate;

/**
 * The corpus replayed: a table per point, a table per source (with its half), and the summary of
 * each half and of the axes the corpus is meant to cover (MoE, TP 4 and more or expert
 * parallelism, batch 1-4 latency, the V1 engine, bursts and closed loops). Errors are signed and
 * in time: negative means the replay is too fast.
 */
public final class CorpusReport {

  private final List<CorpusRun.PointResult> results;
  private final String coefficients;

  public CorpusReport(List<CorpusRun.PointResult> results, String coefficients) {
    this.results = List.copyOf(results);
    this.coefficients = coefficients;
  }

  public List<CorpusRun.PointResult> results() {
    return results;
  }

  /** Statistics of a group of replayed points. */
  public record Summary(String group, int points, int failed, double medianApe, double meanApe, double maxApe,
      int over15, int withInterval, int covered) {

    /** Coverage of the intervals, NaN without any. */
    public double coverage() {
      return withInterval == 0 ? Double.NaN : (double) covered / withInterval;
    }
  }

  /** The summary of the points that {@code filter} keeps. */
  public Summary summary(String group, Predicate<CorpusRun.PointResult> filter) {
    List<CorpusRun.PointResult> in = results.stream().filter(filter).toList();
    double[] ape = in.stream().filter(r -> r.problem() == null && Double.isFinite(r.signedError()))
        .mapToDouble(r -> 100 * Math.abs(r.signedError())).sorted().toArray();
    int failed = (int) in.stream().filter(r -> r.problem() != null || !Double.isFinite(r.signedError())).count();
    int withInterval = (int) in.stream().filter(r -> r.interval() != null).count();
    int covered = (int) in.stream().filter(CorpusRun.PointResult::covered).count();
    return new Summary(group, in.size(), failed, CorpusReplay.percentile(ape, 50), CorpusReplay.mean(ape),
        ape.length == 0 ? Double.NaN : ape[ape.length - 1], (int) Arrays.stream(ape).filter(a -> a > 15).count(),
        withInterval, covered);
  }

  /** The groups the README reports: each half, and the axes of the corpus within it. */
  public List<Summary> summaries() {
    List<Summary> out = new ArrayList<>();
    for (CorpusHalf h : CorpusHalf.values()) {
      Predicate<CorpusRun.PointResult> half = r -> r.point().half() == h;
      out.add(summary(h.key(), half));
      for (var axis : axes().entrySet()) {
        out.add(summary(h.key() + ": " + axis.getKey(), half.and(axis.getValue())));
      }
    }
    out.add(summary("all", r -> true));
    return out;
  }

  /** The axes of the corpus, by name. */
  public static Map<String, Predicate<CorpusRun.PointResult>> axes() {
    Map<String, Predicate<CorpusRun.PointResult>> m = new LinkedHashMap<>();
    m.put("MoE", CorpusRun.PointResult::moe);
    m.put("TP >= 4 or EP", r -> r.point().tp() >= 4 || r.point().expertParallel());
    m.put("latency, batch <= 4", r -> r.point().benchmark() == Benchmark.LATENCY && r.point().workload().batch() <= 4);
    m.put("V1 engine", r -> r.point().v1());
    m.put("bursts and closed loops", r -> r.point().benchmark().online()
        && (r.point().workload().allAtOnce() || r.point().workload().maxConcurrency() > 0));
    return m;
  }

  /** The per-source table, the per-point table and the summaries, as text. */
  public String table() {
    StringBuilder sb = new StringBuilder();
    sb.append("coefficients: ").append(coefficients).append('\n');
    sb.append("error = predicted time / measured time - 1 (rates inverted): negative is too fast\n\n");
    sb.append(String.format(Locale.ROOT, "%-44s %-9s %6s %9s %9s %9s %8s%n", "source", "half", "points",
        "median", "max |e|", "signed", "covered"));
    Map<String, List<CorpusRun.PointResult>> bySource = new LinkedHashMap<>();
    results.forEach(r -> bySource.computeIfAbsent(r.point().source(), k -> new ArrayList<>()).add(r));
    for (var e : bySource.entrySet()) {
      Summary s = summary(e.getKey(), r -> r.point().source().equals(e.getKey()));
      double[] signed = e.getValue().stream().mapToDouble(CorpusRun.PointResult::signedError)
          .filter(Double::isFinite).toArray();
      sb.append(String.format(Locale.ROOT, "%-44s %-9s %6d %8.1f%% %8.1f%% %+8.1f%% %8s%n", e.getKey(),
          e.getValue().get(0).point().half().key(), s.points(), s.medianApe(), s.maxApe(),
          100 * CorpusReplay.percentile(signed, 50), s.withInterval() == 0 ? "-" : s.covered() + "/" + s.withInterval()));
    }
    sb.append('\n');
    sb.append(String.format(Locale.ROOT, "%-60s %-9s %-22s %12s %12s %8s %s%n", "point", "half", "statistic",
        "measured", "predicted", "error", "90% interval"));
    for (CorpusRun.PointResult r : results) {
      String iv = r.interval() == null ? "" : String.format(Locale.ROOT, "%.4g - %.4g%s", r.interval().low(),
          r.interval().high(), r.covered() ? "" : " (outside)");
      if (r.problem() != null) {
        sb.append(String.format(Locale.ROOT, "%-60s %-9s not replayed: %s%n", r.point().key(), r.point().half().key(),
            r.problem()));
        continue;
      }
      sb.append(String.format(Locale.ROOT, "%-60s %-9s %-22s %12.5g %12.5g %+7.1f%% %s%n", r.point().key(),
          r.point().half().key(), r.point().headline().key(), r.observed(), r.prediction(), 100 * r.signedError(), iv));
    }
    sb.append('\n');
    sb.append(String.format(Locale.ROOT, "%-40s %6s %6s %8s %8s %8s %6s %10s%n", "group", "points", "failed",
        "median", "mean", "max", ">15%", "covered"));
    for (Summary s : summaries()) {
      if (s.points() == 0) {
        continue;
      }
      sb.append(String.format(Locale.ROOT, "%-40s %6d %6d %7.1f%% %7.1f%% %7.1f%% %6d %10s%n", s.group(), s.points(),
          s.failed(), s.medianApe(), s.meanApe(), s.maxApe(), s.over15(),
          s.withInterval() == 0 ? "-" : String.format(Locale.ROOT, "%d/%d", s.covered(), s.withInterval())));
    }
    return sb.toString();
  }

  /** Every point with its statistics, prediction, error and interval, as JSON. */
  public String toJson() {
    ObjectNode root = JsonNodeFactory.instance.objectNode();
    root.put("coefficients", coefficients);
    ArrayNode points = root.putArray("points");
    for (CorpusRun.PointResult r : results) {
      ObjectNode n = points.addObject();
      CorpusPoint p = r.point();
      n.put("source", p.source());
      n.put("id", p.id());
      n.put("half", p.half().key());
      n.put("model", p.model());
      n.put("gpu", p.gpu());
      n.put("tp", p.tp());
      n.put("benchmark", p.benchmark().key());
      n.put("vllm", p.version().number());
      n.put("engine", p.v1() ? "v1" : "v0");
      n.put("headline", p.headline().key());
      ObjectNode w = n.putObject("workload");
      CorpusPoint.Workload wl = p.workload();
      if (wl.batch() > 0) {
        w.put("batch", wl.batch());
      } else {
        w.put("num_prompts", wl.numPrompts());
        if (wl.allAtOnce()) {
          w.put("request_rate", "inf");
        } else {
          put(w, "request_rate", wl.requestRate());
        }
        w.put("max_concurrency", wl.maxConcurrency());
      }
      if (r.problem() != null) {
        n.put("problem", r.problem());
        continue;
      }
      ObjectNode stats = n.putObject("statistics");
      for (var e : p.measured().entrySet()) {
        ObjectNode s = stats.putObject(e.getKey().key());
        put(s, "measured", e.getValue());
        put(s, "predicted", r.predicted().getOrDefault(e.getKey(), Double.NaN));
        put(s, "error", r.signedError(e.getKey()));
      }
      if (r.interval() != null) {
        ObjectNode iv = n.putObject("interval");
        put(iv, "low", r.interval().low());
        put(iv, "high", r.interval().high());
        iv.put("covered", r.covered());
        put(iv, "member_log_sd", r.interval().memberLogSd());
        put(iv, "extrapolation_log_sd", r.interval().extrapolationLogSd());
      }
      ArrayNode why = n.putArray("extrapolation");
      r.distances().stream().map(Extrapolation::reason).forEach(why::add);
    }
    // the points with an interval as validation experiments, for blis interval-scales: the headline's
    // log error as a time, keyed by the interval metric whose scales it takes
    ArrayNode exps = root.putArray("experiments");
    for (CorpusRun.PointResult r : results) {
      if (r.problem() != null || r.interval() == null || !Double.isFinite(r.signedError())) {
        continue;
      }
      String metric = r.point().headline().kind() == Measured.Kind.TTFT ? "ttft_mean" : "e2e_mean";
      ObjectNode e = exps.addObject();
      e.put("id", r.point().key());
      put(e.putObject("observed"), metric, 1.0);
      put(e.putObject("predicted"), metric, 1.0 + r.signedError());
      ObjectNode iv = e.putObject("interval").putObject(metric);
      put(iv, "member_log_sd", r.interval().memberLogSd());
      ArrayNode kinds = iv.putArray("extrapolation_kinds");
      r.distances().stream().map(x -> x.kind().key()).distinct().forEach(kinds::add);
    }
    ArrayNode sums = root.putArray("summaries");
    for (Summary s : summaries()) {
      ObjectNode n = sums.addObject();
      n.put("group", s.group());
      n.put("points", s.points());
      n.put("failed", s.failed());
      put(n, "median_ape_pct", s.medianApe());
      put(n, "mean_ape_pct", s.meanApe());
      put(n, "max_ape_pct", s.maxApe());
      n.put("over_15_pct", s.over15());
      n.put("with_interval", s.withInterval());
      n.put("covered", s.covered());
    }
    return root.toPrettyString() + "\n";
  }

  private static void put(ObjectNode n, String key, double v) {
    if (Double.isFinite(v)) {
      n.put(key, BigDecimal.valueOf(v).round(new java.math.MathContext(6, RoundingMode.HALF_EVEN)).stripTrailingZeros());
    } else {
      n.putNull(key);
    }
  }
}
