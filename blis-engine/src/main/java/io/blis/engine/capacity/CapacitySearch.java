package io.blis.engine.capacity;

import io.blis.api.Coefficients;
import io.blis.engine.Simulation;
import io.blis.engine.result.SimulationResult;
import io.blis.workload.RequestSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Predicate;

/**
 * Finds the highest request rate at which a deployment meets its latency targets, the rate at
 * which it saturates, and the fewest replicas that meet the targets at a given rate, by
 * simulating load points.
 *
 * <p><b>A load point</b> is the workload at one rate for {@link Settings#durationS()} simulated
 * seconds (at least {@link Settings#minRequests()} requests, at most {@link
 * Settings#maxRequests()}), measured as {@link PointMetrics}
 * describes (warm-up left out; steady state checked). Every point uses the same seed, so two
 * points differ only in their rate.
 *
 * <p><b>The search</b> for the highest rate passing a test (the targets, or steady state): an
 * exponential bracket from {@link Settings#startRps()} (doubling while the point passes, halving
 * while it fails), then bisection until the bracket is narrower than {@link
 * Settings#tolerance()} of its upper end. The answer is the highest rate that passed. The search
 * assumes that a rate that fails is not followed by a higher one that passes; it records every
 * point so that a user can see where that did not hold.
 */
public final class CapacitySearch {

  /** Builds the deployment to simulate. */
  @FunctionalInterface
  public interface DeploymentFactory {
    /**
     * The simulation of the deployment without a workload.
     *
     * @param instances the number of instances of its (single) pool, or 0 for as configured
     * @param coefficients other latency coefficients, or null for the configured ones
     */
    Simulation.Builder builder(int instances, Coefficients coefficients);
  }

  /**
   * How the search runs.
   *
   * @param durationS simulated seconds of a load point
   * @param minRequests fewest requests of a load point (longer points at low rates)
   * @param maxRequests most requests of a load point (shorter points at very high rates)
   * @param warmup fraction of a point's arrival span left out at its start
   * @param tolerance relative width of the final bracket
   * @param startRps first rate tried
   * @param maxRps highest rate tried (a deployment passing there is reported as at least it)
   * @param minRps lowest rate tried (a deployment failing there is reported as below it)
   */
  public record Settings(double durationS, long minRequests, long maxRequests, double warmup, double tolerance,
      double startRps, double maxRps, double minRps) {

    /**
     * 300 s points of 1,000 to 200,000 requests, 20% warm-up, 1% bracket, rates from 0.001 to
     * 100,000 req/s starting at 1.
     */
    public static Settings defaults() {
      return new Settings(300, 1000, 200_000, 0.2, 0.01, 1, 100_000, 0.001);
    }

    public Settings {
      if (!(durationS > 0) || !Double.isFinite(durationS) || durationS > 86_400) {
        throw new IllegalArgumentException("point duration must be in (0, 86400] s, got " + durationS);
      }
      if (minRequests < 10 || minRequests > maxRequests || maxRequests > 10_000_000) {
        throw new IllegalArgumentException("points need 10 <= fewest <= most <= 10,000,000 requests, got "
            + minRequests + " and " + maxRequests);
      }
      if (!(warmup >= 0 && warmup < 0.9)) {
        throw new IllegalArgumentException("warm-up must be in [0, 0.9), got " + warmup);
      }
      if (!(tolerance >= 0.001 && tolerance <= 0.5)) {
        throw new IllegalArgumentException("tolerance must be in [0.001, 0.5], got " + tolerance);
      }
      if (!(minRps > 0 && minRps <= startRps && startRps <= maxRps && maxRps <= 1e6)) {
        throw new IllegalArgumentException("rates must satisfy 0 < min <= start <= max <= 1,000,000 req/s, got "
            + minRps + ", " + startRps + ", " + maxRps);
      }
    }
  }

  /** One simulated load point. */
  public record Point(double rateRps, int instances, PointMetrics metrics, List<String> violations) {
    /** Whether every target held at a steady state. */
    public boolean meetsTargets() {
      return metrics.steady() && violations.isEmpty();
    }
  }

  /**
   * The highest rate passing a test.
   *
   * @param rateRps the highest rate that passed (NaN when none did, down to the lowest rate)
   * @param atLeast true when even the highest rate tried passed: the answer is a lower bound
   * @param at the point at that rate, or null
   * @param points every point simulated, in the order simulated
   */
  public record Found(double rateRps, boolean atLeast, Point at, List<Point> points) {}

  /**
   * The fewest replicas meeting the targets at a rate.
   *
   * @param instances the count found, or -1 when even the largest count tried fails
   * @param at its point, or null
   * @param points every point simulated
   */
  public record Replicas(int instances, Point at, List<Point> points) {}

  private final DeploymentFactory deployment;
  private final RateWorkload workload;
  private final SloSet slos;
  private final Settings settings;

  /** @param slos the targets, or null to simulate points without any (their violations are empty) */
  public CapacitySearch(DeploymentFactory deployment, RateWorkload workload, SloSet slos, Settings settings) {
    this.deployment = deployment;
    this.workload = workload;
    this.slos = slos;
    this.settings = settings;
  }

  /** Simulates one load point. */
  public Point evaluate(double rateRps, int instances, Coefficients coefficients) {
    double duration = Math.min(Math.max(settings.durationS(), settings.minRequests() / rateRps),
        settings.maxRequests() / rateRps);
    SimulationResult result;
    Simulation.Builder b = deployment.builder(instances, coefficients);
    java.util.Map<String, io.blis.engine.SloTarget> classes = b.sloTargets();
    if (slos != null && slos.classTargets() && classes.isEmpty()) {
      throw new IllegalArgumentException("goodput without per-request targets counts each request against its SLO"
          + " class's targets, and the deployment sets none: give them in a policy bundle's slo: section, or"
          + " write the targets, for example goodput=99%,ttft=500ms,e2e=20s");
    }
    try (RequestSource source = workload.at(rateRps, duration)) {
      result = b.source(source).recordRequests(true).streamingMetrics(true).build().run();
    }
    io.blis.engine.result.MetricsSummary o = result.overall();
    if (o.injectedRequests() > 0 && o.completedRequests() == 0 && o.rejectedRequests() == o.injectedRequests()) {
      // nothing to search: the deployment refuses the workload itself, at any rate
      throw new IllegalArgumentException("the deployment rejects every request of the workload (" + o.injectedRequests()
          + " of " + o.injectedRequests() + " at " + rateRps + " req/s: " + o.rejectedByReason() + "), at any rate;"
          + " check --max-model-len, --total-kv-blocks and the workload's lengths");
    }
    PointMetrics m = PointMetrics.of(result.requests(), settings.warmup());
    List<String> v = new ArrayList<>(slos == null ? List.of() : slos.violations(m, classes));
    if (!m.steady()) {
      v.add(0, "not steady: " + m.steadiness());
    }
    return new Point(rateRps, instances, m, v);
  }

  /** The highest rate meeting every target (with the configured or the given coefficients). */
  public Found maxRate(Coefficients coefficients) {
    return highest(p -> p.meetsTargets(), coefficients);
  }

  /** The saturation rate: the highest at which the server still keeps up (steady state). */
  public Found saturationRate(Coefficients coefficients) {
    return highest(p -> p.metrics().steady(), coefficients);
  }

  private Found highest(Predicate<Point> passes, Coefficients coefficients) {
    List<Point> points = new ArrayList<>();
    double lo = Double.NaN;
    double hi = Double.NaN;
    Point best = null;
    double r = settings.startRps();
    Point p = record(points, evaluate(r, 0, coefficients));
    if (passes.test(p)) {
      lo = r;
      best = p;
      while (r < settings.maxRps()) {
        r = Math.min(settings.maxRps(), r * 2);
        p = record(points, evaluate(r, 0, coefficients));
        if (!passes.test(p)) {
          hi = r;
          break;
        }
        lo = r;
        best = p;
      }
      if (Double.isNaN(hi)) {
        return new Found(lo, true, best, points);
      }
    } else {
      hi = r;
      while (r > settings.minRps()) {
        r = Math.max(settings.minRps(), r / 2);
        p = record(points, evaluate(r, 0, coefficients));
        if (passes.test(p)) {
          lo = r;
          best = p;
          break;
        }
        hi = r;
      }
      if (Double.isNaN(lo)) {
        return new Found(Double.NaN, false, null, points);
      }
    }
    while (hi - lo > settings.tolerance() * hi) {
      double mid = (lo + hi) / 2;
      p = record(points, evaluate(mid, 0, coefficients));
      if (passes.test(p)) {
        lo = mid;
        best = p;
      } else {
        hi = mid;
      }
    }
    return new Found(lo, false, best, points);
  }

  private static Point record(List<Point> points, Point p) {
    points.add(p);
    return p;
  }

  /**
   * The fewest instances (of the deployment's single pool) that meet every target at {@code
   * rateRps}: doubling from one until a count passes, then bisection between the last failing and
   * the first passing count.
   *
   * @param maxInstances the largest count tried
   */
  public Replicas replicasFor(double rateRps, int maxInstances, Coefficients coefficients) {
    List<Point> points = new ArrayList<>();
    int lo = 0; // known to fail (0: none tried)
    int hi = -1;
    Point best = null;
    for (int n = 1; ; n = Math.min(maxInstances, n * 2)) {
      Point p = record(points, evaluate(rateRps, n, coefficients));
      if (p.meetsTargets()) {
        hi = n;
        best = p;
        break;
      }
      lo = n;
      if (n >= maxInstances) {
        return new Replicas(-1, null, points);
      }
    }
    while (hi - lo > 1) {
      int mid = (lo + hi) / 2;
      Point p = record(points, evaluate(rateRps, mid, coefficients));
      if (p.meetsTargets()) {
        hi = mid;
        best = p;
      } else {
        lo = mid;
      }
    }
    return new Replicas(hi, best, points);
  }

  /** The targets. */
  public SloSet slos() {
    return slos;
  }

  /** The workload. */
  public RateWorkload workload() {
    return workload;
  }

  public Settings settings() {
    return settings;
  }

  @Override
  public String toString() {
    return String.format(Locale.ROOT, "CapacitySearch[%s, %s]", workload.description(), slos.describe());
  }
}
