package io.blis.engine.validate;

import io.blis.engine.result.RequestRecord;
import io.blis.workload.RequestOutcome;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Computes the statistics inference-perf reports from per-request outcomes: latency means and
 * linear-interpolation percentiles over successful requests (numpy's default), decode time per
 * output token from the configured output length, and throughput as successes over the span
 * from the first send to the last response of the stage.
 */
public final class RunStatsCalculator {

  private RunStatsCalculator() {}

  /**
   * Statistics of a simulated (or replayed) run.
   *
   * @param records per-request outcomes; any order
   * @param outputLen configured output length of every request (tokens), or 0 when lengths vary
   *     (decode time per token is then averaged request by request)
   * @return overall statistics and one entry per stage present in {@code records}, in stage
   *     order, with their {@link LatencyProfile}
   */
  public static RunSummary summarize(List<RequestRecord> records, int outputLen) {
    TreeMap<Integer, List<RequestRecord>> byStage = new TreeMap<>();
    for (RequestRecord r : records) {
      byStage.computeIfAbsent(r.stage(), s -> new ArrayList<>()).add(r);
    }
    List<RunStats> stages = new ArrayList<>();
    for (var e : byStage.entrySet()) {
      stages.add(stats(e.getKey(), e.getValue(), outputLen));
    }
    return new RunSummary(stats(-1, records, outputLen), stages, LatencyProfile.of(records));
  }

  /** Requests at the start of each stage left out of subsample statistics (warm-up). */
  public static final int WARMUP_REQUESTS = 100;

  /**
   * Statistics of the subsample a calibration simulates: of the first {@code limit} requests (by
   * id) of each stage, those after the first {@code min(WARMUP_REQUESTS, n / 4)}, {@code n} the
   * stage's requests within the limit (so a short stage keeps three quarters of them). The real
   * server was cold for the first ~100 requests of a run (prefix cache empty, warm-up; see the
   * ground-truth README, caveat 6) and a simulation of a prefix starts from an empty server, so
   * both sides leave those requests out. {@code limit} 0 keeps every request.
   */
  public static RunSummary summarizeFirst(List<RequestRecord> records, int limit, int outputLen) {
    if (limit == 0) {
      return summarize(records, outputLen);
    }
    List<RequestRecord> sorted = new ArrayList<>(records);
    sorted.sort(java.util.Comparator.comparingInt(RequestRecord::stage).thenComparingLong(RequestRecord::id));
    Map<Integer, Integer> perStage = new java.util.HashMap<>();
    for (RequestRecord r : sorted) {
      perStage.merge(r.stage(), 1, Integer::sum);
    }
    List<RequestRecord> kept = new ArrayList<>();
    int stage = Integer.MIN_VALUE;
    int n = 0;
    int skip = 0;
    for (RequestRecord r : sorted) {
      if (r.stage() != stage) {
        stage = r.stage();
        n = 0;
        skip = Math.min(WARMUP_REQUESTS, Math.min(limit, perStage.get(stage)) / 4);
      }
      if (n >= skip && n < limit) {
        kept.add(r);
      }
      n++;
    }
    return summarize(kept, outputLen);
  }

  /** Statistics of one group of requests, labelled with {@code stage}. */
  static RunStats stats(int stage, List<RequestRecord> records, int outputLen) {
    int n = 0;
    for (RequestRecord r : records) {
      if (r.outcome() == RequestOutcome.COMPLETED) {
        n++;
      }
    }
    double[] e2e = new double[n];
    double[] ttft = new double[n];
    long firstStartUs = Long.MAX_VALUE;
    long lastEndUs = Long.MIN_VALUE;
    int i = 0;
    for (RequestRecord r : records) {
      firstStartUs = Math.min(firstStartUs, r.arrivalUs());
      lastEndUs = Math.max(lastEndUs, r.arrivalUs() + Math.max(0, r.e2eUs()));
      if (r.outcome() == RequestOutcome.COMPLETED) {
        e2e[i] = r.e2eUs() / 1000.0;
        ttft[i] = r.ttftUs() / 1000.0;
        i++;
      }
    }
    Arrays.sort(e2e);
    Arrays.sort(ttft);
    double e2eMean = mean(e2e);
    double ttftMean = mean(ttft);
    double spanS = (lastEndUs - firstStartUs) / 1e6;
    double throughput = n == 0 || spanS <= 0 ? (n == 0 ? 0.0 : Double.NaN) : n / spanS;
    return new RunStats(
        stage,
        n,
        records.size() - n,
        e2eMean,
        percentile(e2e, 50),
        percentile(e2e, 90),
        percentile(e2e, 99),
        ttftMean,
        percentile(ttft, 50),
        percentile(ttft, 90),
        percentile(ttft, 99),
        outputLen > 0 ? RunStats.decodeMsPerToken(e2eMean, ttftMean, outputLen) : perRequestDecodeMs(records),
        throughput);
  }

  /**
   * Decode time per output token when output lengths vary: the mean over successful requests of
   * at least 2 tokens of (E2E - TTFT) / (output tokens - 1); NaN when there are none.
   */
  static double perRequestDecodeMs(List<RequestRecord> records) {
    double sum = 0;
    int n = 0;
    for (RequestRecord r : records) {
      if (r.outcome() == RequestOutcome.COMPLETED && r.outputTokens() >= 2) {
        sum += (r.e2eUs() - r.ttftUs()) / 1000.0 / (r.outputTokens() - 1);
        n++;
      }
    }
    return n == 0 ? Double.NaN : sum / n;
  }

  /**
   * Linear-interpolation percentile of sorted values (numpy's default): rank = p/100 x (n-1),
   * interpolated between the neighbouring order statistics. NaN for no values.
   */
  public static double percentile(double[] sorted, double p) {
    if (sorted.length == 0) {
      return Double.NaN;
    }
    double rank = p / 100.0 * (sorted.length - 1);
    int lo = (int) Math.floor(rank);
    int hi = Math.min(lo + 1, sorted.length - 1);
    double frac = rank - lo;
    return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
  }

  private static double mean(double[] v) {
    if (v.length == 0) {
      return Double.NaN;
    }
    double s = 0;
    for (double x : v) {
      s += x;
    }
    return s / v.length;
  }
}
