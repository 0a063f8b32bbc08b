package io.blis.engine.validate;

import io.blis.engine.result.RequestRecord;
import io.blis.workload.RequestOutcome;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The shape of a run's latencies, kept small enough to draw: the empirical distribution (CDF) of
 * the successful requests' E2E, TTFT and per-token latency, each at most {@link #MAX_CDF_POINTS}
 * points, and the mean latencies of the requests arriving in each of at most {@link #MAX_BINS}
 * equal time bins, with the span of every load stage. Times are seconds on the run's clock (the
 * workload's arrival times); latencies are milliseconds. Computed from per-request records by
 * {@link #of}; {@link #NONE} when no per-request data exists (an observation known only by its
 * summary).
 *
 * @param e2e end-to-end latency, send to last token
 * @param ttft time to first token
 * @param perToken (E2E - TTFT) / (output tokens - 1) of the requests with at least 2 output tokens
 * @param timeline the time bins, in time order
 * @param stages the load stages present, in stage order
 */
public record LatencyProfile(Cdf e2e, Cdf ttft, Cdf perToken, List<TimeBin> timeline, List<StageSpan> stages) {

  /** Most points of one CDF. */
  public static final int MAX_CDF_POINTS = 200;
  /** Most time bins of a timeline. */
  public static final int MAX_BINS = 120;
  /** Evenly spaced fractions of a CDF; the rest of its points resolve the top 2%. */
  static final int BODY_POINTS = 160;

  /** No per-request data. */
  public static final LatencyProfile NONE = new LatencyProfile(Cdf.EMPTY, Cdf.EMPTY, Cdf.EMPTY, List.of(), List.of());

  public LatencyProfile {
    timeline = List.copyOf(timeline);
    stages = List.copyOf(stages);
  }

  /**
   * One point of an empirical CDF.
   *
   * @param valueMs a latency that occurred
   * @param fraction the fraction of the requests with this latency or less
   */
  public record CdfPoint(double valueMs, double fraction) {}

  /**
   * An empirical CDF, possibly thinned out.
   *
   * @param count how many values it describes
   * @param points increasing points, the smallest and the largest value among them
   */
  public record Cdf(int count, List<CdfPoint> points) {
    /** No values. */
    public static final Cdf EMPTY = new Cdf(0, List.of());

    public Cdf {
      points = List.copyOf(points);
    }

    /**
     * The CDF of {@code sorted} at most {@link #MAX_CDF_POINTS} points: order statistics at
     * {@link #BODY_POINTS} evenly spaced fractions and the rest spread over the top 2% (the tail a
     * reader of latencies looks at), each plotted at the fraction of values at or below it.
     */
    static Cdf of(double[] sorted) {
      int n = sorted.length;
      if (n == 0) {
        return EMPTY;
      }
      TreeSet<Integer> ranks = new TreeSet<>();
      if (n <= MAX_CDF_POINTS) {
        for (int i = 0; i < n; i++) {
          ranks.add(i);
        }
      } else {
        for (int i = 0; i < BODY_POINTS; i++) {
          ranks.add((int) Math.round((double) i * (n - 1) / (BODY_POINTS - 1)));
        }
        int tail = MAX_CDF_POINTS - BODY_POINTS;
        for (int j = 1; j <= tail; j++) {
          double f = 0.98 + 0.02 * j / tail;
          ranks.add((int) Math.min(n - 1, Math.round(f * (n - 1))));
        }
      }
      List<CdfPoint> pts = new ArrayList<>(ranks.size());
      for (int r : ranks) {
        // of tied values keep the highest rank, so that each point is at its true fraction
        int k = r;
        while (k + 1 < n && sorted[k + 1] == sorted[r]) {
          k++;
        }
        if (!pts.isEmpty() && pts.get(pts.size() - 1).valueMs() == sorted[k]) {
          continue;
        }
        pts.add(new CdfPoint(sorted[k], (double) (k + 1) / n));
      }
      return new Cdf(n, pts);
    }
  }

  /**
   * The requests arriving in {@code [startS, startS + widthS)}.
   *
   * @param arrivals how many arrived
   * @param completed how many of them completed
   * @param e2eMeanMs mean E2E of the completed ones, NaN when none
   * @param ttftMeanMs mean TTFT of the completed ones, NaN when none
   */
  public record TimeBin(double startS, double widthS, int arrivals, int completed, double e2eMeanMs,
      double ttftMeanMs) {}

  /**
   * A load stage's span on the run's clock.
   *
   * @param stage the stage index
   * @param firstArrivalS its first request's arrival
   * @param lastArrivalS its last request's arrival
   * @param requests requests of the stage
   */
  public record StageSpan(int stage, double firstArrivalS, double lastArrivalS, int requests) {
    /** Arrivals per second over the stage's span (NaN for a stage of one instant). */
    public double arrivalRps() {
      double span = lastArrivalS - firstArrivalS;
      return span > 0 ? (requests - 1) / span : Double.NaN;
    }
  }

  /** Whether per-request data was there to describe. */
  public boolean isEmpty() {
    return e2e.count() == 0 && timeline.isEmpty();
  }

  /**
   * The profile of per-request outcomes.
   *
   * @param records any order; a request counts in the CDFs when it completed
   */
  public static LatencyProfile of(List<RequestRecord> records) {
    if (records.isEmpty()) {
      return NONE;
    }
    List<Double> e2e = new ArrayList<>();
    List<Double> ttft = new ArrayList<>();
    List<Double> perToken = new ArrayList<>();
    long firstUs = Long.MAX_VALUE;
    long lastUs = Long.MIN_VALUE;
    TreeMap<Integer, long[]> stageSpans = new TreeMap<>(); // first, last, count
    for (RequestRecord r : records) {
      firstUs = Math.min(firstUs, r.arrivalUs());
      lastUs = Math.max(lastUs, r.arrivalUs());
      long[] s = stageSpans.computeIfAbsent(r.stage(), k -> new long[] {Long.MAX_VALUE, Long.MIN_VALUE, 0});
      s[0] = Math.min(s[0], r.arrivalUs());
      s[1] = Math.max(s[1], r.arrivalUs());
      s[2]++;
      if (r.outcome() == RequestOutcome.COMPLETED) {
        e2e.add(r.e2eUs() / 1000.0);
        ttft.add(r.ttftUs() / 1000.0);
        if (r.outputTokens() >= 2) {
          perToken.add((r.e2eUs() - r.ttftUs()) / 1000.0 / (r.outputTokens() - 1));
        }
      }
    }
    List<StageSpan> stages = new ArrayList<>();
    stageSpans.forEach((stage, s) -> stages.add(new StageSpan(stage, s[0] / 1e6, s[1] / 1e6, (int) s[2])));
    return new LatencyProfile(Cdf.of(sorted(e2e)), Cdf.of(sorted(ttft)), Cdf.of(sorted(perToken)),
        timeline(records, firstUs, lastUs), stages);
  }

  private static List<TimeBin> timeline(List<RequestRecord> records, long firstUs, long lastUs) {
    double widthS = binWidthS((lastUs - firstUs) / 1e6);
    long widthUs = Math.max(1, Math.round(widthS * 1e6));
    long originUs = Math.floorDiv(firstUs, widthUs) * widthUs;
    int bins = (int) ((lastUs - originUs) / widthUs) + 1;
    int[] arrivals = new int[bins];
    int[] completed = new int[bins];
    double[] e2eSum = new double[bins];
    double[] ttftSum = new double[bins];
    for (RequestRecord r : records) {
      int b = (int) ((r.arrivalUs() - originUs) / widthUs);
      arrivals[b]++;
      if (r.outcome() == RequestOutcome.COMPLETED) {
        completed[b]++;
        e2eSum[b] += r.e2eUs() / 1000.0;
        ttftSum[b] += r.ttftUs() / 1000.0;
      }
    }
    List<TimeBin> out = new ArrayList<>();
    for (int b = 0; b < bins; b++) {
      if (arrivals[b] == 0) {
        continue;
      }
      out.add(new TimeBin((originUs + b * widthUs) / 1e6, widthUs / 1e6, arrivals[b], completed[b],
          completed[b] == 0 ? Double.NaN : e2eSum[b] / completed[b],
          completed[b] == 0 ? Double.NaN : ttftSum[b] / completed[b]));
    }
    return out;
  }

  /**
   * The smallest width of 1, 2 or 5 times a power of ten seconds that cuts {@code spanS} into at
   * most {@link #MAX_BINS} - 2 bins (bins start at multiples of the width, so the span may touch
   * two more).
   */
  static double binWidthS(double spanS) {
    double target = Math.max(spanS, 1e-3) / (MAX_BINS - 2);
    double decade = Math.pow(10, Math.floor(Math.log10(target)));
    for (double m : new double[] {1, 2, 5, 10}) {
      if (m * decade >= target) {
        return m * decade;
      }
    }
    return 10 * decade;
  }

  private static double[] sorted(List<Double> values) {
    double[] a = values.stream().mapToDouble(Double::doubleValue).toArray();
    Arrays.sort(a);
    return a;
  }
}
