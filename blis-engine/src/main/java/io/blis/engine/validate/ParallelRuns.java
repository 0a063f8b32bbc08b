package io.blis.engine.validate;

import io.blis.api.Coefficients;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Simulates a list of experiments on a fixed thread pool and compares each with its observation.
 * Results come back in the order of the list, whatever order the simulations finish in, so the
 * outcome does not depend on the number of threads.
 */
public final class ParallelRuns implements AutoCloseable {

  private final RunSimulator simulator;
  private final ExecutorService pool;
  private final Map<String, RunSummary> observedCache = new ConcurrentHashMap<>();

  /** @param threads simulations run at once (at least 1) */
  public ParallelRuns(RunSimulator simulator, int threads) {
    if (threads < 1) {
      throw new IllegalArgumentException("threads must be at least 1, got " + threads);
    }
    this.simulator = simulator;
    this.pool = Executors.newFixedThreadPool(threads, r -> {
      Thread t = new Thread(r, "blis-validate");
      t.setDaemon(true);
      return t;
    });
  }

  /**
   * Simulates every experiment with the coefficients and compares with the observations over the
   * same requests.
   *
   * @param maxRequestsPerStage first requests of each load stage to simulate, 0 = all
   */
  public List<ExperimentComparison> compare(List<Experiment> experiments, Coefficients coefficients,
      int maxRequestsPerStage) {
    List<Future<RunSummary>> futures = new ArrayList<>();
    for (Experiment e : experiments) {
      futures.add(pool.submit(() -> simulator.simulate(e, coefficients, maxRequestsPerStage)));
    }
    List<ExperimentComparison> out = new ArrayList<>();
    for (int i = 0; i < experiments.size(); i++) {
      Experiment e = experiments.get(i);
      RunSummary predicted;
      try {
        predicted = futures.get(i).get();
      } catch (InterruptedException ex) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while simulating " + e.id(), ex);
      } catch (ExecutionException ex) {
        for (Future<RunSummary> f : futures) {
          f.cancel(true);
        }
        Throwable cause = ex.getCause();
        if (cause instanceof RuntimeException re) {
          throw re;
        }
        throw new IllegalStateException("experiment '" + e.id() + "': simulation failed: " + cause, cause);
      }
      RunSummary observed = observedCache.computeIfAbsent(e.id() + "#" + maxRequestsPerStage,
          k -> simulator.observed(e, maxRequestsPerStage));
      out.add(new ExperimentComparison(e.id(), e.model(), e.workloadName(), e.saturated(), observed, predicted));
    }
    return out;
  }

  @Override
  public void close() {
    pool.shutdownNow();
  }
}
