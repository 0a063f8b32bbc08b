package io.blis.engine.validate;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The outcome of {@code blis validate}: one {@link ExperimentComparison} per experiment and a
 * summary of absolute percentage errors (APE, percent) over the non-saturated experiments and,
 * separately, the saturated ones. Renders as JSON (latencies in ms, errors in percent, fields in
 * a fixed order, values rounded to 3 decimals) and as a plain-text table; blis-cli draws its HTML
 * page of charts.
 */
public final class ValidationReport {

  /** Metrics whose APE the JSON lists per experiment and the summary aggregates. */
  public static final List<Metric> REPORTED = List.of(
      Metric.E2E_MEAN, Metric.E2E_P50, Metric.E2E_P90, Metric.E2E_P99, Metric.TTFT_MEAN,
      Metric.TTFT_P90, Metric.TTFT_P99, Metric.DECODE_MS_PER_TOKEN, Metric.THROUGHPUT,
      Metric.SUCCESS_COUNT);

  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  private final List<ExperimentComparison> comparisons;
  private final String mode;
  private final String coefficients;
  private final Intervals intervals;

  /**
   * Prediction intervals of the experiments (see {@link PredictionInterval}).
   *
   * @param level nominal coverage
   * @param ensemble where the ensemble came from
   * @param perRun one map per experiment, in the order of the comparisons, interval per metric
   * @param heldOut coverage on the runs held out of an ensemble member's fit, each judged with a
   *     residual estimated without its group; empty when no run's model was held out
   * @param scaleRuns the ids of the runs the ensemble's residual and extrapolation scales were
   *     estimated from ({@link Ensemble#scaleRuns}); empty when the ensemble does not say
   */
  public record Intervals(double level, String ensemble, List<Map<Metric, PredictionInterval>> perRun,
      Map<Metric, EnsembleRuns.Coverage> heldOut, Set<String> scaleRuns) {
    public Intervals {
      perRun = List.copyOf(perRun);
      heldOut = Map.copyOf(heldOut);
      scaleRuns = Set.copyOf(scaleRuns);
    }

    /**
     * Intervals around the point predictions of {@code point} from the ensemble's members' runs
     * (same experiments, same order), each widened by the scales of the ways its experiment lies
     * outside the ensemble's fit domain ({@link Ensemble#distances}, and an overloaded prediction).
     */
    public static Intervals of(List<ExperimentComparison> point, List<Experiment> experiments, Ensemble ensemble,
        EnsembleRuns members, double level) {
      if (experiments.size() != point.size()) {
        throw new IllegalArgumentException("one experiment per comparison expected");
      }
      List<Map<Metric, PredictionInterval>> per = new ArrayList<>();
      for (int i = 0; i < point.size(); i++) {
        List<Extrapolation> distances = distances(experiments.get(i), point.get(i).predicted().overall(), ensemble);
        Map<Metric, PredictionInterval> m = new LinkedHashMap<>();
        for (Metric metric : Ensemble.METRICS) {
          m.put(metric, PredictionInterval.of(metric.of(point.get(i).predicted().overall()),
              members.predictions(i, metric), ensemble.residual(metric),
              ensemble.extrapolationLogSd(distances, metric), distances, level));
        }
        per.add(m);
      }
      Map<Metric, EnsembleRuns.Coverage> held = new LinkedHashMap<>();
      for (Metric metric : Ensemble.METRICS) {
        List<EnsembleRuns.HeldOutRun> runs = members.heldOut(metric);
        if (runs.stream().map(EnsembleRuns.HeldOutRun::group).distinct().count() >= 2) {
          held.put(metric, EnsembleRuns.heldOutCoverage(runs, level));
        }
      }
      return new Intervals(level, ensemble.source(), per, held, Set.copyOf(ensemble.scaleRuns()));
    }

    /** How far experiment {@code e}, predicted as {@code predicted}, lies outside the fit. */
    public static List<Extrapolation> distances(Experiment e, RunStats predicted, Ensemble ensemble) {
      List<Extrapolation> out = new ArrayList<>(ensemble.distances(EngineRunSimulator.loadModel(e),
          EngineRunSimulator.gpu(e), e.layout()));
      if (ensemble.domain() != null
          && Extrapolation.saturated(predicted.ttftMeanMs(), predicted.failureFraction())) {
        out.add(Extrapolation.saturatedRun(predicted.ttftMeanMs(), predicted.failureFraction()));
      }
      return out;
    }
  }

  /**
   * @param comparisons one per experiment, in the order of the experiments file
   * @param mode how the workload was driven ({@code replay} or {@code synthetic})
   * @param coefficients where the latency coefficients came from
   */
  public ValidationReport(List<ExperimentComparison> comparisons, String mode, String coefficients) {
    this(comparisons, mode, coefficients, null);
  }

  /** As above, with prediction intervals (null for none). */
  public ValidationReport(List<ExperimentComparison> comparisons, String mode, String coefficients,
      Intervals intervals) {
    this.comparisons = List.copyOf(comparisons);
    this.mode = mode;
    this.coefficients = coefficients;
    this.intervals = intervals;
    if (intervals != null && intervals.perRun().size() != comparisons.size()) {
      throw new IllegalArgumentException("one interval set per experiment expected");
    }
  }

  /** The prediction intervals, or null. */
  public Intervals intervals() {
    return intervals;
  }

  /** How many of the saturated or non-saturated experiments' observations fall in their interval. */
  public EnsembleRuns.Coverage coverage(Metric m, boolean saturated) {
    int inside = 0;
    List<Integer> counted = counted(m, saturated);
    for (int i : counted) {
      inside += intervals.perRun().get(i).get(m).contains(m.of(comparisons.get(i).observed().overall())) ? 1 : 0;
    }
    return new EnsembleRuns.Coverage(intervals.level(), counted.size(), inside);
  }

  /**
   * How many of the runs {@link #coverage} counts are among the runs the ensemble's scales were
   * estimated from (their coverage is in sample), or -1 when the ensemble does not record them.
   */
  public int inSample(Metric m, boolean saturated) {
    if (intervals == null) {
      throw new IllegalStateException("this report has no intervals");
    }
    if (intervals.scaleRuns().isEmpty()) {
      return -1;
    }
    return (int) counted(m, saturated).stream()
        .filter(i -> intervals.scaleRuns().contains(comparisons.get(i).id())).count();
  }

  /** The experiments with an interval and an observation of {@code m}, saturated or not. */
  private List<Integer> counted(Metric m, boolean saturated) {
    if (intervals == null) {
      throw new IllegalStateException("this report has no intervals");
    }
    List<Integer> out = new ArrayList<>();
    for (int i = 0; i < comparisons.size(); i++) {
      ExperimentComparison c = comparisons.get(i);
      double observed = m.of(c.observed().overall());
      PredictionInterval pi = intervals.perRun().get(i).get(m);
      if (c.saturated() == saturated && pi != null && Double.isFinite(observed) && Double.isFinite(pi.low())) {
        out.add(i);
      }
    }
    return out;
  }

  /** The note after a coverage line when some of its runs set the scales: empty when none did. */
  private String inSampleNote(Metric m, boolean saturated, int runs) {
    int k = inSample(m, saturated);
    if (k <= 0) {
      return "";
    }
    return k == runs ? " (in sample: scales estimated on these runs)"
        : " (in sample: scales estimated on " + k + " of these runs)";
  }

  /** The per-experiment comparisons. */
  public List<ExperimentComparison> comparisons() {
    return comparisons;
  }

  /** Median, mean and max of the finite values (NaN each when there are none). */
  public record Aggregate(int count, double median, double mean, double max) {
    static Aggregate of(double[] values) {
      double[] v = Arrays.stream(values).filter(Double::isFinite).sorted().toArray();
      if (v.length == 0) {
        return new Aggregate(0, Double.NaN, Double.NaN, Double.NaN);
      }
      return new Aggregate(v.length, RunStatsCalculator.percentile(v, 50),
          Arrays.stream(v).average().orElse(Double.NaN), v[v.length - 1]);
    }
  }

  /** Aggregate APE of a metric over the saturated or the non-saturated experiments. */
  public Aggregate aggregate(Metric m, boolean saturated) {
    return Aggregate.of(select(c -> c.saturated() == saturated).stream().mapToDouble(c -> c.ape(m)).toArray());
  }

  /** Aggregate failure-fraction difference (percentage points) over a group. */
  public Aggregate failureDiff(boolean saturated) {
    return Aggregate.of(select(c -> c.saturated() == saturated).stream()
        .mapToDouble(ExperimentComparison::failureFractionDiffPp).toArray());
  }

  private List<ExperimentComparison> select(Predicate<ExperimentComparison> p) {
    return comparisons.stream().filter(p).toList();
  }

  /** The JSON document (see docs/validation.md for the keys). */
  public String toJson() {
    ObjectNode root = NODES.objectNode();
    root.put("mode", mode);
    root.put("coefficients", coefficients);
    ArrayNode exps = root.putArray("experiments");
    for (int i = 0; i < comparisons.size(); i++) {
      ExperimentComparison c = comparisons.get(i);
      ObjectNode e = exps.addObject();
      e.put("id", c.id());
      e.put("model", c.model());
      e.put("workload", c.workload());
      e.put("saturated", c.saturated());
      e.set("observed", statsJson(c.observed().overall()));
      e.set("predicted", statsJson(c.predicted().overall()));
      e.set("ape_pct", apeJson(c.predicted().overall(), c.observed().overall()));
      put(e, "failure_fraction_diff_pp", c.failureFractionDiffPp());
      if (intervals != null) {
        ObjectNode iv = e.putObject("interval");
        put(iv, "level", intervals.level());
        for (var entry : intervals.perRun().get(i).entrySet()) {
          iv.set(entry.getKey().key(), intervalJson(entry.getValue(), entry.getKey().of(c.observed().overall())));
        }
      }
      ArrayNode stages = e.putArray("stages");
      for (RunStats[] pair : c.stagePairs()) {
        ObjectNode s = stages.addObject();
        s.put("stage", pair[0].stage());
        s.set("observed", statsJson(pair[0]));
        s.set("predicted", statsJson(pair[1]));
        s.set("ape_pct", apeJson(pair[1], pair[0]));
      }
    }
    ObjectNode summary = root.putObject("summary");
    summary.set("non_saturated", summaryJson(false));
    summary.set("saturated", summaryJson(true));
    if (intervals != null) {
      ObjectNode cov = summary.putObject("interval_coverage");
      put(cov, "level", intervals.level());
      cov.put("ensemble", intervals.ensemble());
      for (boolean sat : new boolean[] {false, true}) {
        ObjectNode g = cov.putObject(sat ? "saturated" : "non_saturated");
        for (Metric m : Ensemble.METRICS) {
          ObjectNode c = coverageJson(coverage(m, sat));
          int k = inSample(m, sat);
          if (k >= 0) {
            c.put("scales_estimated_on", k);
          } else {
            c.putNull("scales_estimated_on");
          }
          g.set(m.key(), c);
        }
      }
      ObjectNode held = cov.putObject("held_out");
      for (var entry : intervals.heldOut().entrySet().stream()
          .sorted(java.util.Map.Entry.comparingByKey()).toList()) {
        held.set(entry.getKey().key(), coverageJson(entry.getValue()));
      }
    }
    try {
      return new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(root) + "\n";
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot render validation JSON", e);
    }
  }

  private ObjectNode summaryJson(boolean saturated) {
    ObjectNode s = NODES.objectNode();
    s.put("experiments", select(c -> c.saturated() == saturated).size());
    ObjectNode ape = s.putObject("ape_pct");
    for (Metric m : REPORTED) {
      ape.set(m.key(), aggregateJson(aggregate(m, saturated)));
    }
    s.set("failure_fraction_diff_pp", aggregateJson(failureDiff(saturated)));
    return s;
  }

  /** Interval JSON: low, high, the two spreads and whether the observation is inside. */
  private static ObjectNode intervalJson(PredictionInterval pi, double observed) {
    ObjectNode n = NODES.objectNode();
    put(n, "low", pi.low());
    put(n, "high", pi.high());
    n.put("member_log_sd", BigDecimal.valueOf(pi.memberLogSd()).setScale(5, RoundingMode.HALF_EVEN).stripTrailingZeros());
    n.put("residual_log_sd", BigDecimal.valueOf(pi.residualLogSd()).setScale(5, RoundingMode.HALF_EVEN).stripTrailingZeros());
    n.put("extrapolation_log_sd", BigDecimal.valueOf(pi.extrapolationLogSd()).setScale(5, RoundingMode.HALF_EVEN).stripTrailingZeros());
    ArrayNode why = n.putArray("extrapolation");
    pi.extrapolation().forEach(x -> why.add(x.reason()));
    ArrayNode kinds = n.putArray("extrapolation_kinds");
    pi.extrapolation().stream().map(x -> x.kind().key()).distinct().forEach(kinds::add);
    if (Double.isFinite(observed) && Double.isFinite(pi.low())) {
      n.put("observed_inside", pi.contains(observed));
    }
    return n;
  }

  private static ObjectNode coverageJson(EnsembleRuns.Coverage c) {
    ObjectNode n = NODES.objectNode();
    n.put("runs", c.runs());
    n.put("inside", c.inside());
    put(n, "fraction", c.fraction());
    return n;
  }

  private static ObjectNode aggregateJson(Aggregate a) {
    ObjectNode n = NODES.objectNode();
    n.put("count", a.count());
    put(n, "median", a.median());
    put(n, "mean", a.mean());
    put(n, "max", a.max());
    return n;
  }

  private static ObjectNode statsJson(RunStats s) {
    ObjectNode n = NODES.objectNode();
    putCount(n, "count_success", s.countSuccess());
    putCount(n, "count_failed", s.countFailed());
    put(n, "failure_fraction", s.failureFraction());
    put(n, "e2e_mean", s.e2eMeanMs());
    put(n, "e2e_p50", s.e2eP50Ms());
    put(n, "e2e_p90", s.e2eP90Ms());
    put(n, "e2e_p99", s.e2eP99Ms());
    put(n, "ttft_mean", s.ttftMeanMs());
    put(n, "ttft_p50", s.ttftP50Ms());
    put(n, "ttft_p90", s.ttftP90Ms());
    put(n, "ttft_p99", s.ttftP99Ms());
    put(n, "decode_ms_per_token", s.decodeMsPerToken());
    put(n, "throughput_rps", s.throughputRps());
    return n;
  }

  private static ObjectNode apeJson(RunStats predicted, RunStats observed) {
    ObjectNode n = NODES.objectNode();
    for (Metric m : REPORTED) {
      put(n, m.key(), m.ape(predicted, observed));
    }
    return n;
  }

  private static void putCount(ObjectNode n, String key, long count) {
    if (count >= 0) {
      n.put(key, count);
    } else {
      n.putNull(key);
    }
  }

  private static void put(ObjectNode n, String key, double v) {
    if (Double.isFinite(v)) {
      n.put(key, BigDecimal.valueOf(v).setScale(3, RoundingMode.HALF_EVEN).stripTrailingZeros());
    } else {
      n.putNull(key);
    }
  }

  /** A fixed-width text table: observed, predicted and APE of the main metrics per experiment. */
  public String table() {
    StringBuilder sb = new StringBuilder();
    sb.append(String.format(Locale.ROOT, "%-48s %3s | %-25s | %-25s | %-23s | %-21s | %s%n",
        "experiment", "sat", "E2E mean ms obs/pred/APE", "TTFT mean ms obs/pred/APE",
        "decode ms/tok obs/pred", "p90/p99 E2E APE %", "fail % obs/pred"));
    for (ExperimentComparison c : comparisons) {
      RunStats o = c.observed().overall();
      RunStats p = c.predicted().overall();
      sb.append(String.format(Locale.ROOT,
          "%-48s %3s | %8.1f %8.1f %6.1f%% | %8.1f %8.1f %6.1f%% | %6.2f %6.2f %6.1f%% | %9.1f %9.1f | %5.1f %5.1f%n",
          c.id(), c.saturated() ? "yes" : "no", o.e2eMeanMs(), p.e2eMeanMs(), c.ape(Metric.E2E_MEAN),
          o.ttftMeanMs(), p.ttftMeanMs(), c.ape(Metric.TTFT_MEAN), o.decodeMsPerToken(),
          p.decodeMsPerToken(), c.ape(Metric.DECODE_MS_PER_TOKEN), c.ape(Metric.E2E_P90),
          c.ape(Metric.E2E_P99), 100 * o.failureFraction(), 100 * p.failureFraction()));
    }
    if (intervals != null) {
      sb.append(String.format(Locale.ROOT, "%n%-48s | %-32s | %-32s%n", "experiment",
          String.format(Locale.ROOT, "E2E mean %.0f%% interval ms", 100 * intervals.level()),
          String.format(Locale.ROOT, "TTFT mean %.0f%% interval ms", 100 * intervals.level())));
      for (int i = 0; i < comparisons.size(); i++) {
        ExperimentComparison c = comparisons.get(i);
        sb.append(String.format(Locale.ROOT, "%-48s", c.id()));
        for (Metric m : Ensemble.METRICS) {
          PredictionInterval pi = intervals.perRun().get(i).get(m);
          double o = m.of(c.observed().overall());
          sb.append(String.format(Locale.ROOT, " | %9.1f - %9.1f obs %s", pi.low(), pi.high(),
              !Double.isFinite(o) ? "n/a" : pi.contains(o) ? "in " : "OUT"));
        }
        sb.append('\n');
      }
    }
    for (boolean sat : new boolean[] {false, true}) {
      if (select(c -> c.saturated() == sat).isEmpty()) {
        continue;
      }
      sb.append(String.format(Locale.ROOT, "%n%s experiments: APE %% median / mean / max%n",
          sat ? "saturated" : "non-saturated"));
      for (Metric m : REPORTED) {
        Aggregate a = aggregate(m, sat);
        sb.append(String.format(Locale.ROOT, "  %-22s %7.2f %7.2f %7.2f%n", m.key(), a.median(), a.mean(), a.max()));
      }
      Aggregate f = failureDiff(sat);
      sb.append(String.format(Locale.ROOT, "  %-22s %7.2f %7.2f %7.2f (percentage points)%n",
          "failure_fraction_diff", f.median(), f.mean(), f.max()));
      if (intervals != null) {
        for (Metric m : Ensemble.METRICS) {
          EnsembleRuns.Coverage cv = coverage(m, sat);
          sb.append(String.format(Locale.ROOT, "  %.0f%% interval of %s covers %d of %d runs%s%n",
              100 * intervals.level(), m.key(), cv.inside(), cv.runs(), inSampleNote(m, sat, cv.runs())));
        }
      }
    }
    if (intervals != null && !intervals.heldOut().isEmpty()) {
      sb.append(String.format(Locale.ROOT, "%nHeld-out coverage (runs whose model an ensemble member was fitted without):%n"));
      for (Metric m : Ensemble.METRICS) {
        EnsembleRuns.Coverage cv = intervals.heldOut().get(m);
        if (cv != null) {
          sb.append(String.format(Locale.ROOT, "  %.0f%% interval of %s covers %d of %d held-out runs%n",
              100 * intervals.level(), m.key(), cv.inside(), cv.runs()));
        }
      }
    }
    return sb.toString();
  }

  /** How the workload was driven ({@code replay} or {@code synthetic}). */
  public String mode() {
    return mode;
  }

  /** Where the latency coefficients came from. */
  public String coefficients() {
    return coefficients;
  }

  /** Ids of experiments whose metric APE is at or above the threshold, for reports and tests. */
  public List<String> above(Metric m, double thresholdPct, boolean saturated) {
    List<String> out = new ArrayList<>();
    for (ExperimentComparison c : select(x -> x.saturated() == saturated)) {
      if (!(c.ape(m) < thresholdPct)) {
        out.add(c.id());
      }
    }
    return out;
  }
}
