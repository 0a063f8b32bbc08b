package io.blis.engine.capacity;

import io.blis.engine.result.RequestRecord;
import io.blis.workload.RequestOutcome;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The latencies of one simulated load point over its measurement window, and whether the point
 * was in steady state.
 *
 * <p><b>Window.</b> Of the span from the first to the last arrival, the first {@code warmup}
 * fraction is warm-up (the server starts empty and its prefix cache cold); the requests arriving
 * after it are measured. A measured request that did not complete (timed out, rejected, still
 * running when the run ended) counts against every target.
 *
 * <p><b>Steady state.</b> The server keeps up with the offered load when nothing grows over the
 * window: split its arrivals into thirds; both must hold:
 *
 * <ul>
 *   <li>the mean number of requests in the system (arrived, not finished) seen by the last
 *       third's arrivals is at most 1.5 times that seen by the first third's, plus 5;
 *   <li>the mean TTFT of the last third is at most 1.5 times the first third's, plus 5 ms.
 * </ul>
 *
 * Past saturation the backlog grows with time, so the last third sees about twice what the first
 * does and more; below it both stay level, with the fluctuations of the arrival process.
 *
 * A point that is not steady is past saturation: its latencies depend on how long it ran, not on
 * the rate, so no target counts as met there.
 */
public final class PointMetrics {

  /** How much the window's last third may exceed its first third (requests in the system, TTFT). */
  public static final double GROWTH_FACTOR = 1.5;
  /** Slack of the requests-in-system comparison, requests. */
  public static final double IN_SYSTEM_SLACK = 5;
  /** Slack of the TTFT comparison, microseconds. */
  public static final double TTFT_SLACK_US = 5000;

  /** Requests in the system (arrived, not finished) at any time, by binary search. */
  private static final class InSystem {
    private final long[] arrivals;
    private final long[] ends;

    InSystem(List<RequestRecord> records) {
      arrivals = records.stream().mapToLong(RequestRecord::arrivalUs).sorted().toArray();
      ends = records.stream().mapToLong(r -> r.e2eUs() >= 0 && r.outcome() == RequestOutcome.COMPLETED
          ? r.arrivalUs() + r.e2eUs() : Long.MAX_VALUE).sorted().toArray();
    }

    /** Requests arrived at or before {@code t} and not finished by it. */
    long at(long t) {
      return upper(arrivals, t) - upper(ends, t);
    }

    double meanAtArrivals(List<RequestRecord> rs) {
      if (rs.isEmpty()) {
        return 0;
      }
      double sum = 0;
      for (RequestRecord r : rs) {
        sum += at(r.arrivalUs());
      }
      return sum / rs.size();
    }

    /** How many values are <= t. */
    private static int upper(long[] sorted, long t) {
      int lo = 0;
      int hi = sorted.length;
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        if (sorted[mid] <= t) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      return lo;
    }
  }

  private final int measured;
  private final int completed;
  private final double offeredRps;
  private final double achievedRps;
  private final boolean steady;
  private final String steadiness;
  private final double[] ttft;
  private final double[] e2e;
  private final double[] tpot;
  private final List<RequestRecord> window;

  private PointMetrics(int measured, int completed, double offeredRps, double achievedRps, boolean steady,
      String steadiness, double[] ttft, double[] e2e, double[] tpot, List<RequestRecord> window) {
    this.measured = measured;
    this.completed = completed;
    this.offeredRps = offeredRps;
    this.achievedRps = achievedRps;
    this.steady = steady;
    this.steadiness = steadiness;
    this.ttft = ttft;
    this.e2e = e2e;
    this.tpot = tpot;
    this.window = window;
  }

  /**
   * The metrics of a run's requests.
   *
   * @param records every request of the run
   * @param warmup fraction of the arrival span left out at its start, in [0, 1)
   */
  public static PointMetrics of(List<RequestRecord> records, double warmup) {
    if (records.isEmpty()) {
      throw new IllegalArgumentException("a load point needs requests");
    }
    long first = Long.MAX_VALUE;
    long last = Long.MIN_VALUE;
    for (RequestRecord r : records) {
      first = Math.min(first, r.arrivalUs());
      last = Math.max(last, r.arrivalUs());
    }
    long w0 = first + (long) Math.floor((last - first) * warmup);
    List<RequestRecord> window = new ArrayList<>();
    for (RequestRecord r : records) {
      if (r.arrivalUs() >= w0) {
        window.add(r);
      }
    }
    window.sort(java.util.Comparator.comparingLong(RequestRecord::arrivalUs).thenComparingLong(RequestRecord::id));
    List<Double> t = new ArrayList<>();
    List<Double> e = new ArrayList<>();
    List<Double> p = new ArrayList<>();
    int completed = 0;
    for (RequestRecord r : window) {
      if (r.outcome() == RequestOutcome.COMPLETED) {
        completed++;
        t.add((double) r.ttftUs());
        e.add((double) r.e2eUs());
        if (r.outputTokens() >= 2) {
          p.add((double) (r.e2eUs() - r.ttftUs()) / (r.outputTokens() - 1));
        }
      }
    }
    double[] ttft = sorted(t);
    double[] e2e = sorted(e);
    double spanS = Math.max(1, last - w0) / 1e6;
    double offered = window.size() / spanS;
    int doneInWindow = 0;
    for (RequestRecord r : records) {
      if (r.outcome() == RequestOutcome.COMPLETED && r.arrivalUs() + r.e2eUs() >= w0 && r.arrivalUs() + r.e2eUs() <= last) {
        doneInWindow++;
      }
    }
    double achieved = doneInWindow / spanS;
    // growth from the window's first third to its last: requests in the system and TTFT
    int n = window.size();
    List<RequestRecord> firstThird = window.subList(0, n / 3);
    List<RequestRecord> lastThird = window.subList(2 * n / 3, n);
    InSystem inSystem = new InSystem(records);
    double n1 = inSystem.meanAtArrivals(firstThird);
    double n3 = inSystem.meanAtArrivals(lastThird);
    double t1 = meanTtft(firstThird);
    double t3 = meanTtft(lastThird);
    boolean queueFlat = n3 <= GROWTH_FACTOR * n1 + IN_SYSTEM_SLACK;
    boolean ttftFlat = t3 <= GROWTH_FACTOR * t1 + TTFT_SLACK_US;
    List<String> why = new ArrayList<>();
    if (!queueFlat) {
      why.add(String.format(Locale.ROOT, "requests in the system growing (%.1f -> %.1f)", n1, n3));
    }
    if (!ttftFlat) {
      why.add(String.format(Locale.ROOT, "TTFT growing (%.1f ms -> %.1f ms)", t1 / 1000, t3 / 1000));
    }
    boolean steady = queueFlat && ttftFlat;
    return new PointMetrics(n, completed, offered, achieved, steady, steady ? "steady" : String.join("; ", why),
        ttft, e2e, sorted(p),
        List.copyOf(window));
  }

  /** Mean TTFT of completed requests; a request without a first token counts as the run's longest wait. */
  private static double meanTtft(List<RequestRecord> rs) {
    if (rs.isEmpty()) {
      return 0;
    }
    double sum = 0;
    double worst = 0;
    for (RequestRecord r : rs) {
      if (r.ttftUs() >= 0) {
        worst = Math.max(worst, r.ttftUs());
      }
    }
    for (RequestRecord r : rs) {
      sum += r.ttftUs() >= 0 ? r.ttftUs() : Math.max(worst, r.e2eUs());
    }
    return sum / rs.size();
  }

  private static double[] sorted(List<Double> v) {
    double[] a = v.stream().mapToDouble(Double::doubleValue).toArray();
    Arrays.sort(a);
    return a;
  }

  /** Mean prompt tokens of the measured requests that completed; NaN when none did. */
  public double meanInputTokens() {
    return meanCompleted(RequestRecord::inputTokens);
  }

  /** Mean output tokens of the measured requests that completed; NaN when none did. */
  public double meanOutputTokens() {
    return meanCompleted(RequestRecord::outputTokens);
  }

  private double meanCompleted(java.util.function.ToLongFunction<RequestRecord> tokens) {
    long sum = 0;
    int done = 0;
    for (RequestRecord r : window) {
      if (r.outcome() == RequestOutcome.COMPLETED) {
        done++;
        sum += tokens.applyAsLong(r);
      }
    }
    return done == 0 ? Double.NaN : (double) sum / done;
  }

  /**
   * A statistic in microseconds: {@code ttft_p99}, {@code e2e_mean}, {@code tpot_p50}, ... Every
   * measured request that did not complete makes the statistic infinite: a target cannot hold
   * when requests fail.
   */
  public double value(String key) {
    int us = key.indexOf('_');
    if (us < 0) {
      throw new IllegalArgumentException("expected METRIC_STAT, got " + key);
    }
    if (completed < measured) {
      return Double.POSITIVE_INFINITY;
    }
    double[] v = switch (key.substring(0, us)) {
      case "ttft" -> ttft;
      case "e2e" -> e2e;
      case "tpot", "itl" -> tpot;
      default -> throw new IllegalArgumentException("unknown metric in " + key);
    };
    String stat = key.substring(us + 1);
    if (stat.equals("mean")) {
      return v.length == 0 ? Double.NaN : Arrays.stream(v).average().orElse(Double.NaN);
    }
    if (!stat.startsWith("p")) {
      throw new IllegalArgumentException("unknown statistic in " + key);
    }
    double p = stat.equals("p999") ? 99.9 : Double.parseDouble(stat.substring(1));
    return io.blis.engine.validate.RunStatsCalculator.percentile(v, p);
  }

  /**
   * The fraction of measured requests that completed within their SLO class's targets (a class
   * without targets: every completed request of it counts).
   */
  public double goodFractionByClass(Map<String, io.blis.engine.SloTarget> classTargets) {
    if (measured == 0) {
      return Double.NaN;
    }
    int good = 0;
    for (RequestRecord r : window) {
      if (r.outcome() == RequestOutcome.COMPLETED
          && classTargets.getOrDefault(r.sloClass(), io.blis.engine.SloTarget.NONE).met(r.ttftUs(), r.e2eUs())) {
        good++;
      }
    }
    return (double) good / measured;
  }

  /** The fraction of measured requests that completed with every per-request target met. */
  public double goodFraction(Map<String, Double> perRequest) {
    if (measured == 0) {
      return Double.NaN;
    }
    int good = 0;
    for (RequestRecord r : window) {
      if (r.outcome() != RequestOutcome.COMPLETED) {
        continue;
      }
      boolean ok = true;
      for (var e : perRequest.entrySet()) {
        double v = switch (e.getKey()) {
          case "ttft" -> r.ttftUs();
          case "e2e" -> r.e2eUs();
          default -> r.outputTokens() >= 2 ? (double) (r.e2eUs() - r.ttftUs()) / (r.outputTokens() - 1) : 0;
        };
        ok &= v <= e.getValue();
      }
      if (ok) {
        good++;
      }
    }
    return (double) good / measured;
  }

  public int measured() {
    return measured;
  }

  public int completed() {
    return completed;
  }

  /** Arrivals per second in the window. */
  public double offeredRps() {
    return offeredRps;
  }

  /** Completions per second in the window. */
  public double achievedRps() {
    return achievedRps;
  }

  public boolean steady() {
    return steady;
  }

  /** {@code steady}, or what showed that the point is not. */
  public String steadiness() {
    return steadiness;
  }
}
