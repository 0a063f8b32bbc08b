package io.blis.cli;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.util.DefaultIndenter;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import io.blis.workload.trace.TraceV2Writer;
import java.io.IOException;
import java.io.Writer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Go BLIS's streaming saturation detectors ({@code --detectors}): the run's completed requests
 * become a stream of events, an arrival at each one's arrival time and a completion at its
 * arrival plus its end-to-end latency, ordered by (time, arrivals first, request id). After every
 * event each selected detector gives a verdict (STABLE, BACKLOGGED or OVERLOADED, a score, a
 * confidence and its signals):
 *
 * <ul>
 *   <li>{@code composite}: the larger of the rate deficit ({@code 1 - completions/arrivals}) and
 *       the latency trend of the completions so far (second half's mean E2E over the first half's,
 *       minus 1, counted only from 20 completions and when the four quarters' means rise one after
 *       another), against the noise floor {@code 1/sqrt(arrivals)}: STABLE below it, OVERLOADED
 *       when the trend is above it, else BACKLOGGED; confidence {@code min(1, arrivals/20)}.
 *   <li>{@code threshold}: the mean E2E of the completions so far against {@code threshold_ms}
 *       (5,000 ms unless the configuration says otherwise).
 *   <li>{@code backlog-drift}: the least-squares slope of the requests in flight, sampled at the end
 *       of each window of {@code window_size_sec} (60 s; empty windows carry the last value),
 *       against the noise floor: STABLE up to it, BACKLOGGED up to three times it, else
 *       OVERLOADED.
 * </ul>
 *
 * <p>Each detector's final label is the most frequent level among its verdicts in the trailing
 * window (30 s, or the backlog-drift window when the configuration sets it, or {@code
 * --saturation-final-window}), the more severe on a tie. {@code --saturation-report FILE} writes
 * {@code {"final": {...}, "trace": [...]}}, one record per event and detector.
 */
final class SaturationTrace {

  /** Every detector, in the order their verdicts are given for one event. */
  static final List<String> ROSTER = List.of("composite", "threshold", "backlog-drift");
  private static final String[] LEVELS = {"STABLE", "BACKLOGGED", "OVERLOADED"};
  private static final long DEFAULT_FINAL_WINDOW_US = 30_000_000;

  /** One verdict. */
  record Result(int level, double score, double confidence, Map<String, Double> signals) {}

  /** A streaming detector: folds one event in, then gives its verdict on everything so far. */
  interface Detector {
    String name();

    void observe(long timeUs, boolean completion, double latencyMs);

    Result detect();
  }

  /** Tuning from {@code --saturation-config}: each block optional. */
  record Config(Threshold threshold, BacklogDrift backlogDrift) {
    record Threshold(Double thresholdMs) {}

    record BacklogDrift(Integer windowSizeSec, Integer minWindows, Double peakRatio, Double peakRatioBand,
        Double confidenceCi, Integer warmupWindows, Integer tailWindows, Double saturatedDrainRatio,
        Double transientDrainRatio) {}
  }

  private final List<String> names;
  private final Config config;
  private final long finalWindowUs;

  private SaturationTrace(List<String> names, Config config, long finalWindowUs) {
    this.names = names;
    this.config = config;
    this.finalWindowUs = finalWindowUs;
  }

  /**
   * The detectors {@code selection} names ({@code all}, one name, or a comma list), tuned by {@code
   * configFile} (or null) and voting over {@code finalWindow} (a Go duration such as {@code 30s},
   * or null).
   *
   * @throws IllegalArgumentException saying which flag or key is wrong and what was expected
   */
  static SaturationTrace of(String selection, Path configFile, String finalWindow) {
    List<String> names = new ArrayList<>();
    if (selection.equals("all")) {
      names.addAll(ROSTER);
    } else {
      for (String part : selection.split(",", -1)) {
        String n = part.strip();
        if (n.equals("all")) {
          throw new IllegalArgumentException("--detectors '" + selection + "': all cannot be combined with names;"
              + " give --detectors all alone");
        }
        if (n.isEmpty()) {
          continue;
        }
        if (!ROSTER.contains(n)) {
          throw new IllegalArgumentException("--detectors: unknown detector '" + n + "'; known: "
              + String.join(", ", ROSTER) + " (or all, or a comma list)");
        }
        if (!names.contains(n)) {
          names.add(n);
        }
      }
    }
    if (names.isEmpty()) {
      throw new IllegalArgumentException("--detectors '" + selection + "' names no detector; give one of "
          + String.join(", ", ROSTER) + ", a comma list of them, or all");
    }
    names.sort((a, b) -> Integer.compare(ROSTER.indexOf(a), ROSTER.indexOf(b)));
    Config config = new Config(null, null);
    if (configFile != null) {
      String text = io.blis.workload.TextFiles.readConfig(configFile);
      if (!text.isBlank()) {
        config = io.blis.workload.StrictYaml.parse(text, configFile.toString(), Config.class);
      }
    }
    check(config, names, configFile);
    long window = DEFAULT_FINAL_WINDOW_US;
    if (finalWindow != null) {
      window = goDurationUs(finalWindow);
    } else if (config.backlogDrift() != null && config.backlogDrift().windowSizeSec() != null) {
      window = config.backlogDrift().windowSizeSec() * 1_000_000L;
    }
    return new SaturationTrace(List.copyOf(names), config, window);
  }

  private static void check(Config c, List<String> names, Path file) {
    String where = "--saturation-config " + file + ": ";
    if (c.threshold() != null && !names.contains("threshold")) {
      throw new IllegalArgumentException(where + "a threshold block needs the threshold detector among --detectors");
    }
    if (c.backlogDrift() != null && !names.contains("backlog-drift")) {
      throw new IllegalArgumentException(where + "a backlog_drift block needs the backlog-drift detector among"
          + " --detectors");
    }
    if (c.threshold() != null && c.threshold().thresholdMs() != null) {
      positive(where, "threshold.threshold_ms", c.threshold().thresholdMs());
    }
    Config.BacklogDrift b = c.backlogDrift();
    if (b != null) {
      atLeast(where, "backlog_drift.window_size_sec", b.windowSizeSec(), 1);
      atLeast(where, "backlog_drift.min_windows", b.minWindows(), 1);
      atLeast(where, "backlog_drift.warmup_windows", b.warmupWindows(), 0);
      atLeast(where, "backlog_drift.tail_windows", b.tailWindows(), 0);
      if (b.peakRatio() != null) {
        positive(where, "backlog_drift.peak_ratio", b.peakRatio());
      }
      if (b.peakRatioBand() != null && !(b.peakRatioBand() >= 0 && Double.isFinite(b.peakRatioBand()))) {
        throw new IllegalArgumentException(where + "backlog_drift.peak_ratio_band must be a finite number >= 0, got "
            + b.peakRatioBand());
      }
      if (b.confidenceCi() != null && !(b.confidenceCi() > 0 && b.confidenceCi() < 1)) {
        throw new IllegalArgumentException(where + "backlog_drift.confidence_ci must be in (0, 1), got "
            + b.confidenceCi());
      }
      double saturated = b.saturatedDrainRatio() == null ? 0.95 : b.saturatedDrainRatio();
      double transientRatio = b.transientDrainRatio() == null ? 0.98 : b.transientDrainRatio();
      for (double v : new double[] {saturated, transientRatio}) {
        if (!(v > 0 && v <= 1)) {
          throw new IllegalArgumentException(where + "backlog_drift drain ratios must be in (0, 1], got " + v);
        }
      }
      if (saturated > transientRatio) {
        throw new IllegalArgumentException(where + "backlog_drift.saturated_drain_ratio (" + saturated + ") must be at"
            + " most transient_drain_ratio (" + transientRatio + ")");
      }
    }
  }

  private static void positive(String where, String key, double v) {
    if (!(v > 0) || Double.isInfinite(v)) {
      throw new IllegalArgumentException(where + key + " must be a finite number > 0, got " + v);
    }
  }

  private static void atLeast(String where, String key, Integer v, int min) {
    if (v != null && v < min) {
      throw new IllegalArgumentException(where + key + " must be a whole number >= " + min + ", got " + v);
    }
  }

  /** A Go duration ({@code 30s}, {@code 1m30s}, {@code 500ms}, {@code 1.5h}) in microseconds, above 0. */
  static long goDurationUs(String text) {
    java.util.OptionalLong us = text.strip().startsWith("-") ? java.util.OptionalLong.empty() : Cli.goDurationUs(text);
    if (us.isEmpty() || us.getAsLong() < 1) {
      throw new IllegalArgumentException("--saturation-final-window '" + text + "': expected a duration above 0 such"
          + " as 30s, 1m30s or 500ms");
    }
    return us.getAsLong();
  }

  /** Go BLIS's composite detector, with nothing observed yet. */
  static Detector composite() {
    return new Composite();
  }

  /** Go BLIS's threshold detector at {@code thresholdMs}, with nothing observed yet. */
  static Detector threshold(double thresholdMs) {
    return new ThresholdDetector(thresholdMs);
  }

  /** A level's name. */
  static String levelName(int level) {
    return LEVELS[level];
  }

  private Detector detector(String name) {
    return switch (name) {
      case "composite" -> new Composite();
      case "threshold" -> new ThresholdDetector(config.threshold() != null && config.threshold().thresholdMs() != null
          ? config.threshold().thresholdMs() : 5000.0);
      default -> new BacklogDrift(config.backlogDrift() != null && config.backlogDrift().windowSizeSec() != null
          ? config.backlogDrift().windowSizeSec() * 1_000_000L : 60_000_000L);
    };
  }

  /** The event stream of completed requests: arrival times and end-to-end latencies, microseconds. */
  static final class Events {
    final long[] timeUs;
    final boolean[] completion;
    final double[] latencyMs;

    /**
     * @param ids the requests' ids
     * @param arrivalUs their arrival times
     * @param e2eUs their end-to-end latencies
     */
    Events(long[] ids, long[] arrivalUs, long[] e2eUs) {
      int n = ids.length;
      Integer[] order = new Integer[2 * n];
      for (int i = 0; i < 2 * n; i++) {
        order[i] = i;
      }
      // event 2i is request i's arrival, 2i+1 its completion
      Arrays.sort(order, (a, b) -> {
        long ta = a % 2 == 0 ? arrivalUs[a / 2] : arrivalUs[a / 2] + e2eUs[a / 2];
        long tb = b % 2 == 0 ? arrivalUs[b / 2] : arrivalUs[b / 2] + e2eUs[b / 2];
        if (ta != tb) {
          return Long.compare(ta, tb);
        }
        if (a % 2 != b % 2) {
          return Integer.compare(a % 2, b % 2);
        }
        return Long.compare(ids[a / 2], ids[b / 2]);
      });
      timeUs = new long[2 * n];
      completion = new boolean[2 * n];
      latencyMs = new double[2 * n];
      for (int k = 0; k < 2 * n; k++) {
        int e = order[k];
        int r = e / 2;
        completion[k] = e % 2 == 1;
        timeUs[k] = completion[k] ? arrivalUs[r] + e2eUs[r] : arrivalUs[r];
        latencyMs[k] = completion[k] ? e2eUs[r] / 1000.0 : 0;
      }
    }

    int size() {
      return timeUs.length;
    }
  }

  /** Each selected detector's final label (in roster order). */
  Map<String, String> finals(Events events) {
    Map<String, String> out = new TreeMap<>();
    long last = events.size() == 0 ? 0 : events.timeUs[events.size() - 1];
    long cutoff = last - finalWindowUs;
    for (String name : names) {
      Detector d = detector(name);
      int[] counts = new int[3];
      for (int k = 0; k < events.size(); k++) {
        d.observe(events.timeUs[k], events.completion[k], events.latencyMs[k]);
        Result r = d.detect();
        if (events.timeUs[k] >= cutoff) {
          counts[r.level()]++;
        }
      }
      int best = 0;
      int bestCount = 0;
      for (int level = 2; level >= 0; level--) {
        if (counts[level] > bestCount) {
          bestCount = counts[level];
          best = level;
        }
      }
      out.put(name, LEVELS[best]);
    }
    return out;
  }

  /** Writes {@code {"final": ..., "trace": [...]}}: every event's verdicts, detectors in roster order. */
  void write(Events events, Map<String, String> finals, Writer out) throws IOException {
    // as Go's encoding/json indents: two spaces, "key": value
    DefaultPrettyPrinter pretty = new DefaultPrettyPrinter(com.fasterxml.jackson.core.util.Separators
        .createDefaultInstance().withObjectFieldValueSpacing(com.fasterxml.jackson.core.util.Separators.Spacing.AFTER))
        .withObjectIndenter(new DefaultIndenter("  ", "\n"))
        .withArrayIndenter(new DefaultIndenter("  ", "\n"));
    try (JsonGenerator g = new com.fasterxml.jackson.core.JsonFactory()
        .disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET).createGenerator(out)) {
      g.setPrettyPrinter(pretty);
      g.writeStartObject();
      if (!finals.isEmpty()) {
        g.writeObjectFieldStart("final");
        for (Map.Entry<String, String> e : finals.entrySet()) {
          g.writeStringField(e.getKey(), e.getValue());
        }
        g.writeEndObject();
      }
      g.writeArrayFieldStart("trace");
      List<Detector> detectors = new ArrayList<>();
      names.forEach(n -> detectors.add(detector(n)));
      for (int k = 0; k < events.size(); k++) {
        for (Detector d : detectors) {
          d.observe(events.timeUs[k], events.completion[k], events.latencyMs[k]);
          Result r = d.detect();
          g.writeStartObject();
          g.writeNumberField("timestamp", events.timeUs[k]);
          g.writeStringField("detector", d.name());
          g.writeObjectFieldStart("result");
          g.writeStringField("level", LEVELS[r.level()]);
          g.writeFieldName("score");
          g.writeRawValue(TraceV2Writer.number(r.score()));
          g.writeFieldName("confidence");
          g.writeRawValue(TraceV2Writer.number(r.confidence()));
          if (r.signals().isEmpty()) {
            g.writeFieldName("signals");
            g.writeRawValue("{}"); // as Go writes an empty map
          } else {
            g.writeObjectFieldStart("signals");
            for (Map.Entry<String, Double> s : r.signals().entrySet()) {
              g.writeFieldName(s.getKey());
              g.writeRawValue(TraceV2Writer.number(s.getValue()));
            }
            g.writeEndObject();
          }
          g.writeEndObject();
          g.writeEndObject();
        }
      }
      g.writeEndArray();
      g.writeEndObject();
    }
  }

  /** The final labels as the result's {@code saturation} object (keys sorted, as Go BLIS prints it). */
  static com.fasterxml.jackson.databind.node.ObjectNode finalsNode(Map<String, String> finals) {
    com.fasterxml.jackson.databind.node.ObjectNode n =
        com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
    finals.forEach(n::put);
    return n;
  }

  /** Writes the report to {@code file} (a temporary file beside it first, moved into place when complete). */
  void writeReport(Events events, Map<String, String> finals, Path file) {
    Cli.writeStreamed("--saturation-report", file, w -> {
      write(events, finals, w);
      w.write('\n');
    });
  }

  // ---------------------------------------------------------------- the detectors

  private static final class Composite implements Detector {
    private long arrivals;
    private int completions;
    /** Running sums of the completions' latencies, in completion order: sum[i] = first i latencies. */
    private double[] sum = new double[1025];

    @Override
    public String name() {
      return "composite";
    }

    @Override
    public void observe(long timeUs, boolean completion, double latencyMs) {
      if (!completion) {
        arrivals++;
        return;
      }
      if (completions + 1 == sum.length) {
        sum = Arrays.copyOf(sum, sum.length * 2);
      }
      sum[completions + 1] = sum[completions] + latencyMs;
      completions++;
    }

    private double mean(int from, int to) {
      return to <= from ? 0 : (sum[to] - sum[from]) / (to - from);
    }

    @Override
    public Result detect() {
      if (arrivals == 0) {
        return new Result(0, 0, 0, Map.of());
      }
      double deficit = Math.max(0, 1 - (double) completions / arrivals);
      int n = completions;
      double trendRaw = 0;
      double trend = 0;
      boolean monotone = false;
      if (n >= 2) {
        double first = mean(0, n / 2);
        double second = mean(n / 2, n);
        if (first > 0) {
          trendRaw = Math.max(0, (second - first) / first);
        }
        if (n >= 20) {
          int q = n / 4;
          double q1 = mean(0, q);
          double q2 = mean(q, 2 * q);
          double q3 = mean(2 * q, 3 * q);
          double q4 = mean(3 * q, n);
          monotone = q1 < q2 && q2 < q3 && q3 < q4;
          trend = monotone ? trendRaw : 0;
        }
      }
      double score = Math.max(deficit, Math.min(trend, 1));
      double floor = 1 / Math.sqrt(arrivals);
      int level = score < floor ? 0 : trend > floor ? 2 : 1;
      Map<String, Double> signals = new TreeMap<>();
      signals.put("latency_trend", Math.min(trend, 1));
      signals.put("latency_trend_raw", Math.min(trendRaw, 1));
      signals.put("noise_floor", floor);
      signals.put("quartile_monotone", monotone ? 1.0 : 0.0);
      signals.put("rate_deficit", deficit);
      return new Result(level, score, Math.min(1, arrivals / 20.0), signals);
    }
  }

  private static final class ThresholdDetector implements Detector {
    private final double thresholdMs;
    private int completions;
    private double sum;

    ThresholdDetector(double thresholdMs) {
      this.thresholdMs = thresholdMs;
    }

    @Override
    public String name() {
      return "threshold";
    }

    @Override
    public void observe(long timeUs, boolean completion, double latencyMs) {
      if (completion) {
        completions++;
        sum += latencyMs;
      }
    }

    @Override
    public Result detect() {
      if (completions == 0) {
        return new Result(0, 0, 0, Map.of());
      }
      double mean = sum / completions;
      boolean over = mean >= thresholdMs;
      double score = over ? 0.75 + Math.min(0.25, (mean - thresholdMs) / thresholdMs / 4) : 0.5 * (mean / thresholdMs);
      Map<String, Double> signals = new TreeMap<>();
      signals.put("mean_e2e", mean);
      signals.put("threshold", thresholdMs);
      return new Result(over ? 2 : 0, score, 1 - 1 / Math.sqrt(completions + 1.0), signals);
    }
  }

  private static final class BacklogDrift implements Detector {
    private static final double K = 3.0;
    private final long windowUs;
    private long arrivals;
    private long completions;
    private long[] buckets = new long[16];
    private int count;
    private long bucket = Long.MIN_VALUE;

    BacklogDrift(long windowUs) {
      this.windowUs = windowUs;
    }

    @Override
    public String name() {
      return "backlog-drift";
    }

    @Override
    public void observe(long timeUs, boolean completion, double latencyMs) {
      if (completion) {
        completions++;
      } else {
        arrivals++;
      }
      long b = timeUs / windowUs;
      long inFlight = arrivals - completions;
      if (count == 0) {
        bucket = b;
        add(inFlight);
      } else if (b <= bucket) {
        buckets[count - 1] = inFlight; // the value at the end of the window
      } else {
        long last = buckets[count - 1];
        for (long gap = bucket + 1; gap < b; gap++) {
          add(last); // an empty window carries the last value
        }
        add(inFlight);
        bucket = b;
      }
    }

    private void add(long v) {
      if (count == buckets.length) {
        buckets = Arrays.copyOf(buckets, count * 2);
      }
      buckets[count++] = v;
    }

    @Override
    public Result detect() {
      if (arrivals == 0) {
        return new Result(0, 0, 0, Map.of());
      }
      double slope = 0;
      if (count >= 2) {
        double sx = 0;
        double sy = 0;
        double sxy = 0;
        double sxx = 0;
        for (int i = 0; i < count; i++) {
          sx += i;
          sy += buckets[i];
          sxy += (double) i * buckets[i];
          sxx += (double) i * i;
        }
        double denom = count * sxx - sx * sx;
        slope = denom == 0 ? 0 : (count * sxy - sx * sy) / denom;
      }
      double floor = 1 / Math.sqrt(arrivals);
      int level = slope <= floor ? 0 : slope <= K * floor ? 1 : 2;
      double score = Math.min(1, Math.max(0, slope) / (K * floor));
      Map<String, Double> signals = new TreeMap<>();
      signals.put("arrivals", (double) arrivals);
      signals.put("completions", (double) completions);
      signals.put("in_flight", (double) (arrivals - completions));
      signals.put("noise_floor", floor);
      signals.put("running_slope", slope);
      return new Result(level, score, Math.min(1, arrivals / 20.0), signals);
    }
  }
}
