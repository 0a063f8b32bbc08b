package io.blis.engine.validate;

import io.blis.api.Coefficients;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.hipparchus.exception.MathIllegalStateException;
import org.hipparchus.optim.InitialGuess;
import org.hipparchus.optim.MaxEval;
import org.hipparchus.optim.SimpleBounds;
import org.hipparchus.optim.nonlinear.scalar.GoalType;
import org.hipparchus.optim.nonlinear.scalar.ObjectiveFunction;
import org.hipparchus.optim.nonlinear.scalar.noderiv.BOBYQAOptimizer;
import org.hipparchus.optim.nonlinear.scalar.noderiv.CMAESOptimizer;
import org.hipparchus.optim.univariate.BrentOptimizer;
import org.hipparchus.optim.univariate.SearchInterval;
import org.hipparchus.optim.univariate.UnivariateObjectiveFunction;
import org.hipparchus.random.Well19937c;

/**
 * Fits latency-model coefficients by simulation in the loop. Each {@link CalibrationStage} runs a
 * bounded CMA-ES search (seeded) over its free parameters, normalized to [0, 1], and then a
 * BOBYQA polish from the best point; the loss is {@link CalibrationLoss} over the experiments.
 * The experiments of one evaluation are simulated in parallel on a fixed thread pool and their
 * results combined in the experiments' order, so a run is reproducible given the seed. Progress
 * goes to the given stream, one line per evaluation.
 */
public final class Calibrator implements AutoCloseable {

  /**
   * @param seed seed of the CMA-ES random generator
   * @param threads simulations run at once (at least 1)
   * @param populationSize CMA-ES population, 0 for its default 4 + 3 ln(n)
   * @param sigma initial CMA-ES step in normalized units (fraction of each parameter's range)
   */
  public record Settings(long seed, int threads, int populationSize, double sigma) {
    public Settings {
      if (threads < 1) {
        throw new IllegalArgumentException("calibration: threads must be at least 1, got " + threads);
      }
      if (populationSize < 0) {
        throw new IllegalArgumentException("calibration: population must be >= 0, got " + populationSize);
      }
      if (!(sigma > 0 && sigma <= 1)) {
        throw new IllegalArgumentException("calibration: sigma must be in (0, 1], got " + sigma);
      }
    }
  }

  /**
   * Outcome of a fit.
   *
   * @param values best parameter values, in the order of the parameter space
   * @param coefficients the coefficients built from {@code values}
   * @param loss loss of the last stage's objective at {@code values}
   * @param comparisons whole-run comparisons of every experiment at {@code values}
   * @param evaluations objective evaluations used
   */
  public record Result(double[] values, Coefficients coefficients, double loss,
      List<ExperimentComparison> comparisons, int evaluations) {}

  /**
   * Held-out evaluation of one cross-validation fold.
   *
   * @param heldOut the group left out (a model name or a workload name)
   * @param values parameters fitted without it
   * @param comparisons whole-run comparisons of the held-out experiments
   */
  public record Fold(String heldOut, double[] values, List<ExperimentComparison> comparisons) {}

  /**
   * A parameter that no experiment of a training set exercises (for example an MoE-only
   * coefficient when the set has no MoE model): the search leaves it alone and the fit gives it
   * the fitted value of {@code follows}, or {@code value} when {@code follows} is null.
   *
   * @param parameter the parameter not fitted
   * @param follows the parameter whose fitted value it takes, or null
   * @param value its value when {@code follows} is null
   */
  public record Tie(String parameter, String follows, double value) {}

  private final ParameterSpace space;
  private final Settings settings;
  private final PrintStream progress;
  private final ParallelRuns runs;
  private int evaluations;
  private java.util.function.BiConsumer<String, double[]> checkpoint = (stage, values) -> {};
  private Function<List<Experiment>, List<Tie>> unexercised = training -> List.of();

  public Calibrator(RunSimulator simulator, ParameterSpace space, Settings settings, PrintStream progress) {
    this.space = space;
    this.settings = settings;
    this.progress = progress;
    this.runs = new ParallelRuns(simulator, settings.threads());
  }

  /**
   * Called with the stage name and the best values after every stage (for example to write a
   * checkpoint file), so a long calibration that is stopped keeps its progress.
   */
  public void onStageDone(java.util.function.BiConsumer<String, double[]> listener) {
    this.checkpoint = listener;
  }

  /**
   * Sets the rule that names, for a training set, the parameters none of its experiments
   * exercises and what they take instead of a fitted value (default: none). Without it a
   * cross-validation fold that holds out the only MoE model would let the search drift the
   * MoE-only coefficients anywhere in their bounds, since they do not change its loss.
   */
  public void onUnexercised(Function<List<Experiment>, List<Tie>> rule) {
    this.unexercised = rule;
  }

  /** Simulates every experiment with the coefficients and compares with the observations. */
  public List<ExperimentComparison> evaluate(List<Experiment> experiments, Coefficients coefficients,
      int maxRequestsPerStage) {
    return runs.compare(experiments, coefficients, maxRequestsPerStage);
  }

  /** Runs the stages in order from the space's initial point and evaluates the best on full runs. */
  public Result fit(List<Experiment> experiments, List<CalibrationStage> stages) {
    return fit(experiments, stages, space.initial());
  }

  /** Runs the stages in order from {@code start}; the final comparisons use whole runs. */
  public Result fit(List<Experiment> experiments, List<CalibrationStage> stages, double[] start) {
    if (experiments.isEmpty()) {
      throw new IllegalArgumentException("calibration: no experiments to fit");
    }
    double[] best = space.clamp(start);
    double bestLoss = Double.NaN;
    List<Tie> ties = unexercised.apply(experiments);
    Set<String> tied = new HashSet<>();
    for (Tie t : ties) {
      tied.add(t.parameter());
      progress.printf(Locale.ROOT, "calibrate: %s is not searched (fixed, or no training run exercises it);"
              + " it takes %s%n", t.parameter(), t.follows() != null ? "the fitted " + t.follows() : String.format(Locale.ROOT, "%.6g", t.value()));
    }
    for (CalibrationStage stage : stages) {
      List<String> free = stage.freeParameters().stream().filter(n -> !tied.contains(n)).toList();
      if (free.isEmpty()) {
        continue;
      }
      CalibrationStage s = free.size() == stage.freeParameters().size() ? stage
          : new CalibrationStage(stage.name(), free, stage.e2eWeight(), stage.ttftWeight(), stage.decodeWeight(),
              stage.maxRequestsPerStage(), stage.searchEvaluations(), stage.polishEvaluations());
      StageRun run = new StageRun(experiments, s, best);
      run.optimize();
      best = applyTies(run.bestX, ties);
      bestLoss = run.bestLoss;
      checkpoint.accept(stage.name(), best.clone());
    }
    best = applyTies(best, ties);
    Coefficients c = space.coefficients(best);
    List<ExperimentComparison> finalComparisons = evaluate(experiments, c, 0);
    progress.printf(Locale.ROOT, "calibrate: done after %d evaluations; loss %.3f; %s%n", evaluations, bestLoss,
        describe(best));
    return new Result(best, c, bestLoss, finalComparisons, evaluations);
  }

  /**
   * Cross-validation: for each group (by {@code groupOf}: model or workload), fit on the other
   * experiments and evaluate the held-out ones on whole runs.
   */
  public List<Fold> crossValidate(List<Experiment> experiments, Function<Experiment, String> groupOf,
      List<CalibrationStage> stages) {
    return crossValidate(experiments, groupOf, stages, f -> {}, group -> null);
  }

  /**
   * Cross-validation as above. {@code onFold} receives each fold as soon as it is done (for
   * example to write its coefficients, so a long run that is stopped keeps the finished folds);
   * for a group for which {@code done} returns parameter values (a fold finished by an earlier,
   * interrupted run), those are used instead of a refit.
   */
  public List<Fold> crossValidate(List<Experiment> experiments, Function<Experiment, String> groupOf,
      List<CalibrationStage> stages, java.util.function.Consumer<Fold> onFold, Function<String, double[]> done) {
    Map<String, List<Experiment>> groups = new LinkedHashMap<>();
    for (Experiment e : experiments) {
      groups.computeIfAbsent(groupOf.apply(e), g -> new ArrayList<>()).add(e);
    }
    List<Fold> folds = new ArrayList<>();
    for (var g : groups.entrySet()) {
      List<Experiment> train = experiments.stream().filter(e -> !groupOf.apply(e).equals(g.getKey())).toList();
      if (train.isEmpty()) {
        throw new IllegalArgumentException("cross-validation: holding out '" + g.getKey()
            + "' leaves no experiment to fit on");
      }
      double[] earlier = done.apply(g.getKey());
      if (earlier != null) {
        progress.printf(Locale.ROOT, "calibrate: fold holding out %s: done earlier, not refitted%n", g.getKey());
        double[] v = space.clamp(earlier);
        folds.add(new Fold(g.getKey(), v, evaluate(g.getValue(), space.coefficients(v), 0)));
        continue;
      }
      progress.printf(Locale.ROOT, "calibrate: fold holding out %s (%d train, %d held out)%n", g.getKey(),
          train.size(), g.getValue().size());
      Result r = fit(train, stages);
      Fold fold = new Fold(g.getKey(), r.values(), evaluate(g.getValue(), r.coefficients(), 0));
      folds.add(fold);
      onFold.accept(fold);
    }
    return folds;
  }

  private double[] applyTies(double[] x, List<Tie> ties) {
    double[] out = x.clone();
    // a tie may follow a parameter that is tied itself (moe_routing follows decode_memory, which
    // may follow weight_load): settle the chain, at most one pass per tie
    for (int pass = 0; pass < Math.max(1, ties.size()); pass++) {
      for (Tie t : ties) {
        out[space.indexOf(t.parameter())] = t.follows() != null ? out[space.indexOf(t.follows())] : t.value();
      }
    }
    return space.clamp(out);
  }

  /** The parallel simulator the calibration evaluates with (for further comparisons). */
  public ParallelRuns runs() {
    return runs;
  }

  /** Objective evaluations so far. */
  public int evaluations() {
    return evaluations;
  }

  String describe(double[] x) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < x.length; i++) {
      sb.append(i == 0 ? "" : ", ").append(space.names().get(i)).append('=')
          .append(String.format(Locale.ROOT, "%.6g", x[i]));
    }
    return sb.toString();
  }

  @Override
  public void close() {
    runs.close();
  }

  /** One stage: optimizes the free parameters in normalized coordinates, tracking the best point. */
  private final class StageRun {
    final List<Experiment> experiments;
    final CalibrationStage stage;
    final int[] free;
    final double[] base;
    double[] bestX;
    double bestLoss = Double.POSITIVE_INFINITY;
    int stageEvaluations;

    StageRun(List<Experiment> experiments, CalibrationStage stage, double[] start) {
      this.experiments = experiments;
      this.stage = stage;
      this.free = stage.freeParameters().stream().mapToInt(space::indexOf).toArray();
      this.base = start.clone();
      this.bestX = start.clone();
    }

    double[] point(double[] u) {
      double[] full = space.normalize(base);
      for (int j = 0; j < free.length; j++) {
        full[free[j]] = u[j];
      }
      return space.denormalize(full);
    }

    double objective(double[] u) {
      double[] x = point(u);
      List<ExperimentComparison> cs = evaluate(experiments, space.coefficients(x), stage.maxRequestsPerStage());
      double objective = CalibrationLoss.squared(cs, stage.e2eWeight(), stage.ttftWeight(), stage.decodeWeight());
      double loss = Math.sqrt(objective);
      evaluations++;
      stageEvaluations++;
      if (loss < bestLoss) {
        bestLoss = loss;
        bestX = x;
      }
      progress.printf(Locale.ROOT, "calibrate [%s] eval %d: loss %.3f best %.3f (RMSE APE %%: e2e %.2f ttft %.2f"
              + " decode %.2f)%n", stage.name(), stageEvaluations, loss, bestLoss,
          CalibrationLoss.rmse(cs, Metric.E2E_MEAN), CalibrationLoss.rmse(cs, Metric.TTFT_MEAN),
          CalibrationLoss.rmse(cs, Metric.DECODE_MS_PER_TOKEN));
      return objective;
    }

    void optimize() {
      int k = free.length;
      double[] lo = new double[k];
      double[] hi = new double[k];
      Arrays.fill(hi, 1.0);
      objective(u(base));
      if (stage.searchEvaluations() > 0) {
        int lambda = settings.populationSize() > 0 ? settings.populationSize() : 4 + (int) (3 * Math.log(k));
        double[] sigma = new double[k];
        Arrays.fill(sigma, settings.sigma());
        CMAESOptimizer cmaes = new CMAESOptimizer(Integer.MAX_VALUE, 0.0, true, 0, 0,
            new Well19937c(settings.seed()), false, null);
        try {
          cmaes.optimize(new MaxEval(stage.searchEvaluations()), new ObjectiveFunction(this::objective),
              GoalType.MINIMIZE, new InitialGuess(u(bestX)), new SimpleBounds(lo, hi),
              new CMAESOptimizer.Sigma(sigma), new CMAESOptimizer.PopulationSize(lambda));
        } catch (MathIllegalStateException budgetExhausted) {
          // the evaluation budget ran out; the best point seen so far is kept
        }
      }
      if (stage.polishEvaluations() > 0) {
        try {
          if (k == 1) {
            new BrentOptimizer(1e-4, 1e-6).optimize(new MaxEval(stage.polishEvaluations()),
                new UnivariateObjectiveFunction(v -> objective(new double[] {v})), GoalType.MINIMIZE,
                new SearchInterval(0, 1, u(bestX)[0]));
          } else {
            new BOBYQAOptimizer(2 * k + 1, 0.02, 1e-4).optimize(new MaxEval(stage.polishEvaluations()),
                new ObjectiveFunction(this::objective), GoalType.MINIMIZE, new InitialGuess(u(bestX)),
                new SimpleBounds(lo, hi));
          }
        } catch (MathIllegalStateException budgetExhausted) {
          // the polish budget ran out; the best point seen so far is kept
        }
      }
      progress.printf(Locale.ROOT, "calibrate [%s] done: best loss %.3f after %d evaluations; %s%n", stage.name(),
          bestLoss, stageEvaluations, describe(bestX));
    }

    double[] u(double[] x) {
      double[] all = space.normalize(x);
      double[] u = new double[free.length];
      for (int j = 0; j < free.length; j++) {
        u[j] = all[free[j]];
      }
      return u;
    }
  }
}
