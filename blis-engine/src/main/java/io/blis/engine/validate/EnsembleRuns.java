package io.blis.engine.validate;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Every member of an ensemble simulated on the same experiments, with what follows from it: the
 * interval of each run around a point prediction, and, for runs whose model one member was fitted
 * without, the held-out prediction and its error. That held-out analysis both sets the ensemble's
 * residual spread ({@link #residualLogSd}) and measures how often the intervals cover held-out
 * runs ({@link #heldOutCoverage}), each group's runs judged with a residual estimated from the
 * other groups alone.
 *
 * @param members the ensemble's members
 * @param experiments the experiments, in order
 * @param runs {@code runs.get(k).get(i)}: member k's comparison of experiment i
 */
public record EnsembleRuns(List<Ensemble.Member> members, List<Experiment> experiments,
    List<List<ExperimentComparison>> runs) {

  /**
   * A run held out from one member's fit.
   *
   * @param id experiment id
   * @param group the group (model) it belongs to
   * @param saturated whether the measured run was overloaded
   * @param observed the measured statistic
   * @param predicted the held-out member's prediction
   * @param memberLogSd all members' log spread around {@code predicted}
   */
  public record HeldOutRun(String id, String group, boolean saturated, double observed, double predicted,
      double memberLogSd) {

    /** ln(observed / predicted), NaN when undefined. */
    public double logError() {
      return observed > 0 && predicted > 0 ? Math.log(observed / predicted) : Double.NaN;
    }
  }

  /**
   * How many runs the intervals covered.
   *
   * @param level nominal coverage
   * @param runs runs with an interval and an observation
   * @param inside runs whose observation is inside
   */
  public record Coverage(double level, int runs, int inside) {
    /** inside / runs, NaN without runs. */
    public double fraction() {
      return runs == 0 ? Double.NaN : (double) inside / runs;
    }
  }

  public EnsembleRuns {
    members = List.copyOf(members);
    experiments = List.copyOf(experiments);
    runs = runs.stream().map(List::copyOf).toList();
    if (runs.size() != members.size()) {
      throw new IllegalArgumentException("one list of runs per member expected");
    }
  }

  /** Simulates every member on every experiment (whole runs). */
  public static EnsembleRuns simulate(ParallelRuns parallel, List<Experiment> experiments,
      List<Ensemble.Member> members) {
    return simulate(parallel, experiments, members, 0);
  }

  /** As above, on the first {@code maxRequestsPerStage} requests of each load stage (0 = all). */
  public static EnsembleRuns simulate(ParallelRuns parallel, List<Experiment> experiments,
      List<Ensemble.Member> members, int maxRequestsPerStage) {
    List<List<ExperimentComparison>> out = new ArrayList<>();
    for (Ensemble.Member m : members) {
      out.add(parallel.compare(experiments, m.coefficients(), maxRequestsPerStage));
    }
    return new EnsembleRuns(members, experiments, out);
  }

  /** The members' predictions of a metric for experiment {@code i}. */
  public double[] predictions(int i, Metric m) {
    double[] v = new double[members.size()];
    for (int k = 0; k < v.length; k++) {
      v[k] = m.of(runs.get(k).get(i).predicted().overall());
    }
    return v;
  }

  /** The interval of experiment {@code i} around a point prediction. */
  public PredictionInterval interval(int i, Metric m, double point, double residualLogSd, double level) {
    return PredictionInterval.of(point, predictions(i, m), residualLogSd, level);
  }

  /**
   * The runs whose model is exactly one member's held-out group, with that member's prediction;
   * other runs are skipped.
   */
  public List<HeldOutRun> heldOut(Metric m) {
    List<HeldOutRun> out = new ArrayList<>();
    for (int i = 0; i < experiments.size(); i++) {
      Experiment e = experiments.get(i);
      int holder = -1;
      int count = 0;
      for (int k = 0; k < members.size(); k++) {
        if (members.get(k).heldOut().equals(e.model())) {
          holder = k;
          count++;
        }
      }
      if (count != 1) {
        continue;
      }
      ExperimentComparison c = runs.get(holder).get(i);
      double predicted = m.of(c.predicted().overall());
      out.add(new HeldOutRun(e.id(), e.model(), e.saturated(), m.of(c.observed().overall()), predicted,
          PredictionInterval.memberLogSd(predicted, predictions(i, m))));
    }
    return out;
  }

  /**
   * The residual log standard deviation: per run, the part of its squared held-out log error that
   * the members' spread for that run does not account for, {@code max(0, e^2 - s_members^2)},
   * averaged over the non-saturated runs given, square-rooted. Taken run by run, so that a run on
   * which the members disagree widely (its own interval is wide anyway) cannot cancel the errors
   * of runs on which they agree.
   */
  public static double residualLogSd(List<HeldOutRun> heldOut) {
    double sum = 0;
    int n = 0;
    for (HeldOutRun r : heldOut) {
      double e = r.logError();
      if (r.saturated() || !Double.isFinite(e)) {
        continue;
      }
      sum += Math.max(0, e * e - r.memberLogSd() * r.memberLogSd());
      n++;
    }
    if (n == 0) {
      throw new IllegalArgumentException("no non-saturated held-out run to estimate the residual spread from");
    }
    return Math.sqrt(sum / n);
  }

  /**
   * Coverage on held-out runs, honest about the residual: each group's non-saturated runs get an
   * interval around their held-out prediction whose residual spread is estimated from the other
   * groups' runs only.
   */
  public static Coverage heldOutCoverage(List<HeldOutRun> heldOut, double level) {
    Map<String, List<HeldOutRun>> byGroup = new LinkedHashMap<>();
    for (HeldOutRun r : heldOut) {
      if (!r.saturated() && Double.isFinite(r.logError())) {
        byGroup.computeIfAbsent(r.group(), g -> new ArrayList<>()).add(r);
      }
    }
    int runs = 0;
    int inside = 0;
    for (var g : byGroup.entrySet()) {
      List<HeldOutRun> others = byGroup.entrySet().stream().filter(x -> !x.getKey().equals(g.getKey()))
          .flatMap(x -> x.getValue().stream()).toList();
      if (others.isEmpty()) {
        continue;
      }
      double residual = residualLogSd(others);
      for (HeldOutRun r : g.getValue()) {
        runs++;
        if (Math.abs(r.logError()) <= PredictionInterval.logHalfWidth(r.memberLogSd(), residual, level)) {
          inside++;
        }
      }
    }
    return new Coverage(level, runs, inside);
  }

  /** The fit domain of coefficients fitted on {@code fitted}. */
  public static FitDomain fitDomain(List<Experiment> fitted) {
    return FitDomain.of(fitted.stream().map(e -> new FitDomain.Fitted(EngineRunSimulator.loadModel(e),
        EngineRunSimulator.gpu(e), e.tp())).toList());
  }

  /**
   * The ensemble these runs define, with residuals estimated from their held-out runs (whose ids it
   * records) and the fit domain of its experiments (every member was fitted on all of them but one
   * group).
   */
  public Ensemble toEnsemble(String latencyModel, String source) {
    Map<Metric, Double> residual = new LinkedHashMap<>();
    java.util.Set<String> used = new java.util.LinkedHashSet<>();
    for (Metric m : Ensemble.METRICS) {
      List<HeldOutRun> held = heldOut(m);
      residual.put(m, residualLogSd(held));
      held.stream().filter(r -> !r.saturated() && Double.isFinite(r.logError())).forEach(r -> used.add(r.id()));
    }
    List<String> ids = experiments.stream().map(Experiment::id).filter(used::contains).distinct().toList();
    return new Ensemble(latencyModel, members, residual, fitDomain(experiments), Map.of(), ids, source);
  }
}
