package io.blis.engine.validate;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * Estimates the scales of a prediction interval from runs that no fit saw: the residual inside
 * the fitted family and one scale per kind of {@link Extrapolation}.
 *
 * <p>Per metric, with {@code e} a run's log error ({@code ln observed / predicted}) and {@code
 * s_m} its members' log spread:
 *
 * <ul>
 *   <li>residual: the root of the mean over the runs with no extrapolation of {@code max(0, e^2 -
 *       s_m^2)}, as {@link EnsembleRuns#residualLogSd} does for held-out folds;
 *   <li>a kind that is the only distance of some runs: the mean over those runs of {@code max(0,
 *       e^2 - s_m^2 - residual^2)}. Runs that carry it with other kinds do not set it: on them the
 *       error cannot be told apart between the kinds, and one of them would otherwise widen every
 *       interval of the kind (a Qwen3 run on an L40S, say, the intervals of every Qwen3 run on
 *       H100);
 *   <li>the kinds that never occur alone: non-negative least squares of {@code max(0, e^2 - s_m^2
 *       - residual^2 - the known kinds' variances) = sum over the run's other kinds of v_k}. Kinds
 *       that only ever occur together are not separable; their sum is what the runs determine, and
 *       the split between them is whatever the least squares chose.
 * </ul>
 *
 * <p>Coverage is reported twice: in sample (every run judged with the scales estimated from all,
 * itself included) and leave one run out (each run judged with scales estimated without it), the
 * honest measure of how the method covers a run it has not seen.
 */
public final class IntervalScales {

  private IntervalScales() {}

  /**
   * One run no fit saw.
   *
   * @param id the run
   * @param kinds how its prediction extrapolates (empty: inside the family)
   * @param logError per metric, {@code ln observed / predicted}
   * @param memberLogSd per metric, the ensemble members' log spread of its prediction
   */
  public record Run(String id, Set<Extrapolation.Kind> kinds, Map<Metric, Double> logError,
      Map<Metric, Double> memberLogSd) {
    public Run {
      kinds = kinds.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(kinds));
      logError = Map.copyOf(logError);
      memberLogSd = Map.copyOf(memberLogSd);
    }

    /** The group of runs with the same kinds, as a label ({@code in family}, {@code gpu+family}). */
    public String group() {
      return kinds.isEmpty() ? "in family"
          : kinds.stream().sorted().map(Extrapolation.Kind::key).collect(Collectors.joining("+"));
    }
  }

  /**
   * The scales of one metric.
   *
   * @param residualLogSd inside the family
   * @param kindLogSd per kind that occurs in the runs
   */
  public record Scales(double residualLogSd, Map<Extrapolation.Kind, Double> kindLogSd) {

    /**
     * The log standard deviation of a run with these kinds, besides its members' spread; a kind
     * without a scale takes the largest, as {@link Ensemble#extrapolationLogSd} does.
     */
    public double logSd(Set<Extrapolation.Kind> kinds) {
      double largest = kindLogSd.values().stream().mapToDouble(Double::doubleValue).max().orElse(0);
      double v = residualLogSd * residualLogSd;
      for (Extrapolation.Kind k : kinds) {
        double s = kindLogSd.getOrDefault(k, largest);
        for (Extrapolation.Kind f = Extrapolation.floorOf(k); f != null; f = Extrapolation.floorOf(f)) {
          s = Math.max(s, kindLogSd.getOrDefault(f, largest));
        }
        v += s * s;
      }
      return Math.sqrt(v);
    }
  }

  /** Per interval metric, the residual and extrapolation scales an ensemble holds (to keep them, {@link #estimate}). */
  public static Map<Metric, Scales> scalesOf(Ensemble e) {
    Map<Metric, Scales> out = new LinkedHashMap<>();
    for (Metric m : Ensemble.METRICS) {
      Map<Extrapolation.Kind, Double> sd = new EnumMap<>(Extrapolation.Kind.class);
      e.extrapolation().forEach((kind, scale) -> sd.put(kind, scale.of(m)));
      out.put(m, new Scales(e.residual(m), sd));
    }
    return out;
  }

  /** How many runs of a group the intervals covered. */
  public record Coverage(int runs, int inside) {}

  /**
   * The estimate: scales and coverage per metric, and the ids of the runs it was estimated from
   * (those with a finite log error of some metric), in the order given.
   */
  public record Result(Map<Metric, Scales> scales, Map<Extrapolation.Kind, Integer> runsPerKind,
      Map<Metric, Map<String, Coverage>> inSample, Map<Metric, Map<String, Coverage>> leaveOneOut,
      List<String> runs) {
    public Result {
      runs = List.copyOf(runs);
    }
  }

  /**
   * Estimates the scales of {@code metrics} from {@code runs} and measures their coverage at
   * {@code level}.
   *
   * @throws IllegalArgumentException when no run lies inside the family
   */
  public static Result estimate(List<Run> runs, List<Metric> metrics, double level) {
    return estimate(runs, metrics, level, Run::id);
  }

  /**
   * The group of a run whose id is {@code source/point} (a corpus point): its source; any other
   * run is a group of its own.
   */
  public static String sourceOf(Run r) {
    int slash = r.id().indexOf('/');
    return slash < 0 ? r.id() : r.id().substring(0, slash);
  }

  /**
   * As {@link #estimate(List, List, double)}, with the coverage "left out" measured by leaving
   * out every run of a run's group (for example all the points of a published source, {@link
   * #sourceOf}) from the scales it is judged with.
   */
  public static Result estimate(List<Run> runs, List<Metric> metrics, double level,
      java.util.function.Function<Run, String> groupOf) {
    return estimate(runs, metrics, level, groupOf, Map.of());
  }

  /**
   * As {@link #estimate(List, List, double, java.util.function.Function)}, keeping some scales as
   * they are: per metric, the residual and the kinds that {@code kept} holds (for example the scales
   * an earlier estimate set from other runs); only the other kinds are estimated, from the runs'
   * error beyond what the kept scales explain.
   */
  public static Result estimate(List<Run> runs, List<Metric> metrics, double level,
      java.util.function.Function<Run, String> groupOf, Map<Metric, Scales> kept) {
    Map<Metric, Scales> scales = new LinkedHashMap<>();
    Map<Metric, Map<String, Coverage>> inSample = new LinkedHashMap<>();
    Map<Metric, Map<String, Coverage>> loo = new LinkedHashMap<>();
    double z = PredictionInterval.z(level);
    for (Metric m : metrics) {
      List<Run> usable = runs.stream().filter(r -> Double.isFinite(r.logError().getOrDefault(m, Double.NaN))).toList();
      Scales all = scales(usable, m, kept.get(m));
      scales.put(m, all);
      Map<String, int[]> in = new TreeMap<>();
      Map<String, int[]> out = new TreeMap<>();
      for (int i = 0; i < usable.size(); i++) {
        Run r = usable.get(i);
        in.computeIfAbsent(r.group(), g -> new int[2])[0]++;
        out.computeIfAbsent(r.group(), g -> new int[2])[0]++;
        if (covered(r, m, all, z)) {
          in.get(r.group())[1]++;
        }
        String g = groupOf.apply(r);
        List<Run> others = usable.stream().filter(x -> !groupOf.apply(x).equals(g)).toList();
        Scales without;
        try {
          without = scales(others, m, kept.get(m));
        } catch (IllegalArgumentException noFamilyRun) {
          continue;
        }
        if (covered(r, m, without, z)) {
          out.get(r.group())[1]++;
        }
      }
      inSample.put(m, coverage(in));
      loo.put(m, coverage(out));
    }
    Map<Extrapolation.Kind, Integer> perKind = new EnumMap<>(Extrapolation.Kind.class);
    for (Run r : runs) {
      r.kinds().forEach(k -> perKind.merge(k, 1, Integer::sum));
    }
    List<String> used = runs.stream()
        .filter(r -> metrics.stream().anyMatch(m -> Double.isFinite(r.logError().getOrDefault(m, Double.NaN))))
        .map(Run::id).toList();
    return new Result(scales, perKind, inSample, loo, used);
  }

  private static Map<String, Coverage> coverage(Map<String, int[]> counts) {
    Map<String, Coverage> out = new LinkedHashMap<>();
    int runs = 0;
    int inside = 0;
    for (var e : counts.entrySet()) {
      out.put(e.getKey(), new Coverage(e.getValue()[0], e.getValue()[1]));
      runs += e.getValue()[0];
      inside += e.getValue()[1];
    }
    out.put("all", new Coverage(runs, inside));
    return out;
  }

  private static boolean covered(Run r, Metric m, Scales s, double z) {
    double sm = r.memberLogSd().getOrDefault(m, 0.0);
    double sd = s.logSd(r.kinds());
    return Math.abs(r.logError().get(m)) <= z * Math.sqrt(sm * sm + sd * sd);
  }

  /** The scales of metric {@code m} from {@code runs}. */
  static Scales scales(List<Run> runs, Metric m) {
    return scales(runs, m, null);
  }

  /** As above, the residual and the kinds of {@code kept} (when not null) taken as they are. */
  static Scales scales(List<Run> runs, Metric m, Scales kept) {
    double residual;
    if (kept != null) {
      residual = kept.residualLogSd();
    } else {
      double sum = 0;
      int n = 0;
      for (Run r : runs) {
        if (r.kinds().isEmpty()) {
          sum += excess(r, m, 0);
          n++;
        }
      }
      if (n == 0) {
        throw new IllegalArgumentException("no run inside the fitted family to estimate the residual from");
      }
      residual = Math.sqrt(sum / n);
    }
    List<Run> outside = runs.stream().filter(r -> !r.kinds().isEmpty()).toList();
    Map<Extrapolation.Kind, Double> variance = new EnumMap<>(Extrapolation.Kind.class);
    if (kept != null) {
      kept.kindLogSd().forEach((k, sd) -> variance.put(k, sd * sd));
    }
    // a kind that is some run's only distance: from those runs alone
    Map<Extrapolation.Kind, double[]> alone = new EnumMap<>(Extrapolation.Kind.class);
    for (Run r : outside) {
      if (r.kinds().size() == 1 && !variance.containsKey(r.kinds().iterator().next())) {
        double[] acc = alone.computeIfAbsent(r.kinds().iterator().next(), k -> new double[2]);
        acc[0] += excess(r, m, residual * residual);
        acc[1]++;
      }
    }
    alone.forEach((k, acc) -> variance.put(k, acc[0] / acc[1]));
    // the others: least squares over the runs that carry them, given the kinds already known
    List<Extrapolation.Kind> kinds = outside.stream().flatMap(r -> r.kinds().stream()).distinct().sorted()
        .filter(k -> !variance.containsKey(k)).toList();
    List<Run> carrying = outside.stream().filter(r -> r.kinds().stream().anyMatch(kinds::contains)).toList();
    double[] y = new double[carrying.size()];
    boolean[][] a = new boolean[carrying.size()][kinds.size()];
    for (int i = 0; i < carrying.size(); i++) {
      Run r = carrying.get(i);
      double known = r.kinds().stream().filter(variance::containsKey).mapToDouble(variance::get).sum();
      y[i] = excess(r, m, residual * residual + known);
      for (int k = 0; k < kinds.size(); k++) {
        a[i][k] = r.kinds().contains(kinds.get(k));
      }
    }
    double[] v = nonNegativeLeastSquares(a, y, kinds.size());
    for (int k = 0; k < kinds.size(); k++) {
      variance.put(kinds.get(k), v[k]);
    }
    Map<Extrapolation.Kind, Double> perKind = new EnumMap<>(Extrapolation.Kind.class);
    variance.forEach((k, x) -> perKind.put(k, Math.sqrt(x)));
    return new Scales(residual, perKind);
  }

  /** {@code max(0, e^2 - s_m^2 - base)}: the squared error left beyond the members and the base. */
  private static double excess(Run r, Metric m, double base) {
    double e = r.logError().get(m);
    double sm = r.memberLogSd().getOrDefault(m, 0.0);
    return Math.max(0, e * e - sm * sm - base);
  }

  /**
   * Minimizes {@code sum_i (y_i - sum_k a_ik x_k)^2} over {@code x >= 0} for a 0/1 design {@code
   * a}, by cyclic coordinate descent (each step exact, projected on {@code x_k >= 0}); the problem
   * is convex, so this converges to its minimum.
   */
  static double[] nonNegativeLeastSquares(boolean[][] a, double[] y, int k) {
    double[] x = new double[k];
    double[] residual = y.clone();
    for (int sweep = 0; sweep < 10_000; sweep++) {
      double change = 0;
      for (int j = 0; j < k; j++) {
        int count = 0;
        double s = 0;
        for (int i = 0; i < y.length; i++) {
          if (a[i][j]) {
            count++;
            s += residual[i] + x[j];
          }
        }
        double next = count == 0 ? 0 : Math.max(0, s / count);
        double d = next - x[j];
        if (d != 0) {
          for (int i = 0; i < y.length; i++) {
            if (a[i][j]) {
              residual[i] -= d;
            }
          }
          x[j] = next;
          change = Math.max(change, Math.abs(d));
        }
      }
      if (change < 1e-15) {
        break;
      }
    }
    return x;
  }

  /**
   * The ensemble {@code base} with these scales (residual and one per kind, with their run counts)
   * and the ids of the runs they were estimated from.
   */
  public static Ensemble apply(Ensemble base, Result result) {
    if (base.domain() == null) {
      throw new IllegalArgumentException(base.source() + " has no fit_domain: the distances of its predictions"
          + " cannot be told, so extrapolation scales would never apply");
    }
    Map<Metric, Double> residual = new LinkedHashMap<>();
    Map<Extrapolation.Kind, Map<Metric, Double>> perKind = new EnumMap<>(Extrapolation.Kind.class);
    for (var e : result.scales().entrySet()) {
      residual.put(e.getKey(), e.getValue().residualLogSd());
      for (var k : e.getValue().kindLogSd().entrySet()) {
        perKind.computeIfAbsent(k.getKey(), x -> new LinkedHashMap<>()).put(e.getKey(), k.getValue());
      }
    }
    for (Metric m : Ensemble.METRICS) {
      residual.putIfAbsent(m, base.residual(m));
    }
    // a kind measured in one metric but no run of the other: the other takes its largest scale, as a
    // kind no run measured does
    for (Map<Metric, Double> v : perKind.values()) {
      for (Metric m : Ensemble.METRICS) {
        if (!v.containsKey(m)) {
          double largest = 0;
          for (Map<Metric, Double> w : perKind.values()) {
            largest = Math.max(largest, w.getOrDefault(m, 0.0));
          }
          v.put(m, largest);
        }
      }
    }
    Map<Extrapolation.Kind, Ensemble.Scale> scales = new EnumMap<>(Extrapolation.Kind.class);
    perKind.forEach((k, v) -> scales.put(k, new Ensemble.Scale(v, result.runsPerKind().getOrDefault(k, 0))));
    return base.withScales(base.domain(), residual, scales, result.runs());
  }

  /** A run's log errors and spreads from arrays (metric order of {@code metrics}), for tests. */
  static Run run(String id, Set<Extrapolation.Kind> kinds, List<Metric> metrics, double[] logError, double[] memberLogSd) {
    Map<Metric, Double> e = new LinkedHashMap<>();
    Map<Metric, Double> s = new LinkedHashMap<>();
    for (int i = 0; i < metrics.size(); i++) {
      e.put(metrics.get(i), logError[i]);
      s.put(metrics.get(i), memberLogSd[i]);
    }
    return new Run(id, kinds, e, s);
  }
}
