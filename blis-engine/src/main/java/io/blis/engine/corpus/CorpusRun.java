package io.blis.engine.corpus;

import io.blis.api.Coefficients;
import io.blis.engine.validate.Ensemble;
import io.blis.engine.validate.Extrapolation;
import io.blis.engine.validate.Metric;
import io.blis.engine.validate.PredictionInterval;
import io.blis.engine.validate.RunDistances;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Replays corpus points, each with the point coefficients and, when an ensemble is given, with
 * every member for a prediction interval of the point's headline statistic, on a fixed thread pool;
 * results come back in the points' order whatever the number of threads.
 */
public final class CorpusRun {

  /**
   * One replayed point.
   *
   * @param point the point
   * @param predicted the replay's value of each statistic the point measured
   * @param interval the interval of the headline statistic, or null without an ensemble
   * @param distances how the point lies outside what the coefficients were fitted on
   * @param problem why the point could not be replayed, or null
   * @param moe whether the point's model routes to experts (false when it could not be read)
   */
  public record PointResult(CorpusPoint point, Map<Measured, Double> predicted, PredictionInterval interval,
      List<Extrapolation> distances, String problem, boolean moe) {

    /** The published headline statistic. */
    public double observed() {
      return point.measured().get(point.headline());
    }

    /** The replay's headline statistic (NaN when the replay failed). */
    public double prediction() {
      return predicted == null ? Double.NaN : predicted.getOrDefault(point.headline(), Double.NaN);
    }

    /**
     * The signed error of the headline statistic as a time: predicted time / measured time - 1
     * (for a rate, measured rate / predicted rate - 1); negative: the replay is too fast.
     */
    public double signedError() {
      return signedError(point.headline());
    }

    /** The signed error of statistic {@code m} as a time, NaN when it was not measured or replayed. */
    public double signedError(Measured m) {
      Double obs = point.measured().get(m);
      Double pred = predicted == null ? null : predicted.get(m);
      if (obs == null || pred == null || !(pred > 0) || !Double.isFinite(pred)) {
        return Double.NaN;
      }
      return m.rate() ? obs / pred - 1 : pred / obs - 1;
    }

    /** Whether the headline interval holds the measurement (false without one). */
    public boolean covered() {
      return interval != null && interval.contains(observed());
    }
  }

  private CorpusRun() {}

  /**
   * Replays {@code points}.
   *
   * @param ensemble the interval ensemble, or null for no intervals
   * @param level the intervals' nominal coverage
   */
  public static List<PointResult> run(List<CorpusPoint> points, CorpusReplay replay, Coefficients coefficients,
      Ensemble ensemble, double level, int threads) {
    ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, threads), r -> {
      Thread t = new Thread(r, "blis-corpus");
      t.setDaemon(true);
      return t;
    });
    try {
      List<Future<PointResult>> futures = new ArrayList<>();
      for (CorpusPoint p : points) {
        futures.add(pool.submit(() -> one(p, replay, coefficients, ensemble, level)));
      }
      List<PointResult> out = new ArrayList<>();
      for (Future<PointResult> f : futures) {
        try {
          out.add(f.get());
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException("interrupted", e);
        } catch (ExecutionException e) {
          throw e.getCause() instanceof RuntimeException re ? re : new IllegalStateException(e.getCause());
        }
      }
      return out;
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * How the point's run lies outside the fitted runs beyond its model, GPU and layout: the engine
   * generation, an extreme mean batch, a burst of arrivals, an overloaded prediction.
   */
  static List<Extrapolation> runDistances(CorpusPoint p, CorpusReplay.Setup setup, CorpusReplay.Predicted point) {
    List<Extrapolation> out = new ArrayList<>();
    RunDistances.engine(p.version(), p.v1(), setup.limits().asyncScheduling())
        .ifPresent(out::add);
    RunDistances.batch(point.meanBatch()).ifPresent(out::add);
    CorpusPoint.Workload w = p.workload();
    long atOnce = p.benchmark() == Benchmark.LATENCY ? 0
        : w.allAtOnce() ? (w.maxConcurrency() > 0 ? Math.min(w.maxConcurrency(), w.numPrompts()) : w.numPrompts())
        : 1;
    if (p.benchmark() == Benchmark.THROUGHPUT) {
      atOnce = w.numPrompts();
    }
    RunDistances.burst(atOnce).ifPresent(out::add);
    if (Extrapolation.saturated(point.ttftMeanMs(), point.failedFraction())) {
      out.add(Extrapolation.saturatedRun(point.ttftMeanMs(), point.failedFraction()));
    }
    return out;
  }

  static PointResult one(CorpusPoint p, CorpusReplay replay, Coefficients coefficients, Ensemble ensemble,
      double level) {
    CorpusReplay.Predicted point;
    CorpusReplay.Setup setup;
    try {
      setup = CorpusReplay.setup(p);
      point = replay.simulate(p, setup, coefficients);
    } catch (IllegalArgumentException | IllegalStateException e) {
      boolean moe;
      try {
        moe = CorpusReplay.model(p).isMoe();
      } catch (IllegalArgumentException unreadable) {
        moe = false;
      }
      return new PointResult(p, null, null, List.of(), e.getMessage(), moe);
    }
    List<Extrapolation> distances = new ArrayList<>();
    if (ensemble != null) {
      distances.addAll(ensemble.distances(setup.model(), setup.gpu(), setup.layout()));
      if (ensemble.domain() != null) {
        distances.addAll(runDistances(p, setup, point));
      }
    }
    PredictionInterval interval = null;
    Measured h = p.headline();
    double value = point.values().getOrDefault(h, Double.NaN);
    if (ensemble != null && value > 0 && Double.isFinite(value)) {
      double[] members = new double[ensemble.members().size()];
      for (int i = 0; i < members.length; i++) {
        members[i] = replay.simulate(p, setup, ensemble.members().get(i).coefficients()).values()
            .getOrDefault(h, Double.NaN);
      }
      Metric metric = h.kind() == Measured.Kind.TTFT ? Metric.TTFT_MEAN : Metric.E2E_MEAN;
      interval = PredictionInterval.of(value, members, ensemble.residual(metric),
          ensemble.extrapolationLogSd(distances, metric), distances, level);
    }
    return new PointResult(p, point.values(), interval, distances, null, setup.model().isMoe());
  }
}
