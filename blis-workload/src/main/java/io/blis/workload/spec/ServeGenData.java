package io.blis.workload.spec;

import com.fasterxml.jackson.databind.JsonNode;
import io.blis.workload.StrictYaml;
import io.blis.workload.RequestSpec;
import io.blis.workload.TextFiles;
import io.blis.workload.synthetic.ArrivalProcess;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;

/**
 * ServeGen's published workload data (a folder of {@code chunk-N-trace.csv} and {@code
 * chunk-N-dataset.json} per model: one chunk per client, its arrival rate and burstiness per
 * 10-minute window, its input and output length distributions per 6 hours) turned into Go BLIS
 * version 2 cohorts, as Go BLIS's {@code blis convert servegen} and a spec's {@code servegen_data}
 * do (docs/go-blis.md, "ServeGen").
 *
 * <p>Language and multimodal data: three periods of the day (midnight, morning, afternoon, from
 * 00:00, 08:00 and 14:00), each played for {@code windowS} seconds, {@code drainS} seconds apart.
 * Each period takes one of its first three 10-minute windows, drawn with the seed; the chunks
 * active then (on any day at that time) are shuffled and dealt round-robin to the five SLO
 * classes. A cohort per (period, class) has the chunks as its population, the sum of their rates
 * (each chunk's mean over the days) as a spike over the period, the mean of their arrival
 * parameters (the majority process, gamma or Weibull) and lognormal lengths fitted to their
 * distributions (the mean of the fitted mu and sigma over days and chunks).
 *
 * <p>Reasoning data (a {@code reason_ratio} in the first chunk's dataset): the 10-minute window of
 * day one with the most active chunks, five cohorts (one per class) of Poisson arrivals at the sum
 * of their chunks' rates then, for {@code windowS} seconds from 0, with the chunks' mean reasoning
 * ratio distribution (in percent) and fitted lengths.
 *
 * <p>Every malformed file is refused in one line naming the file (and line); so is a value out of
 * bounds (a rate above {@link #MAX_RATE_RPS}, a cv above {@link #MAX_CV}, an arrival pattern other
 * than Gamma, Weibull or Poisson's, a length above {@link RequestSpec#MAX_TOKENS}), an empty trace or
 * one without rows, and a dataset without its trace. An inactive chunk or a period without active
 * chunks is left out, as in Go BLIS.
 */
public final class ServeGenData {

  /** Go BLIS's default length of a converted period, seconds. */
  public static final int DEFAULT_WINDOW_S = 600;
  /** Go BLIS's default gap between periods for {@code blis convert servegen}, seconds. */
  public static final int DEFAULT_DRAIN_S = 180;
  /** The seed {@code blis convert servegen} draws with (Go BLIS's). */
  public static final long CONVERT_SEED = 42;
  /** The periods, in order. */
  public static final List<String> PERIODS = List.of("midnight", "morning", "afternoon");

  /**
   * The highest rate a trace row may give, requests per second: the highest rate {@code capacity}
   * and {@code sweep} search (1,000,000); ServeGen's chunks send a few per second.
   */
  public static final double MAX_RATE_RPS = 1e6;

  /** The burstiest arrivals a trace row may give: the largest gamma cv simulated. */
  public static final double MAX_CV = ArrivalProcess.Gamma.MAX_GAMMA_CV;

  /** What a trace row holds, for messages. */
  private static final String ROW = "start_s, rate, cv, pattern[, shape, scale_s]";

  private static final long[] PERIOD_START_S = {0, 28_800, 50_400};
  private static final int TRACE_WINDOW_S = 600;
  private static final int DAY_S = 86_400;
  private static final List<String> CLASSES = List.of("critical", "standard", "batch", "sheddable", "background");

  private static final com.fasterxml.jackson.databind.ObjectMapper DATASETS =
      new com.fasterxml.jackson.databind.ObjectMapper();

  private ServeGenData() {}

  /** One trace row: a 10-minute window of a chunk. */
  private record Row(long startS, double startExact, double rate, double cv, String pattern, double shape,
      double scaleS) {
    boolean active() {
      return rate > 0;
    }

    /** gamma, weibull or "" (Poisson); {@link #rows} admits no other pattern. */
    String process() {
      String p = pattern.toLowerCase(Locale.ROOT);
      return p.equals("gamma") || p.equals("weibull") ? p : "";
    }
  }

  /** A dataset window: its length distributions (token count to probability). */
  private record Lengths(Map<Integer, Double> input, Map<Integer, Double> output) {}

  /** A lognormal fit. */
  private record Fit(double mu, double sigma) {}

  /** A chunk: its id, its trace rows with a dataset at or before them, its dataset windows. */
  private record Chunk(String id, Path trace, Path dataset, List<Row> rows, TreeMap<Long, Lengths> lengths) {}

  /**
   * The cohorts of {@code dir} as a Go BLIS version 2 spec.
   *
   * @param windowS seconds each period is played (> 0)
   * @param drainS seconds between periods (>= 0)
   * @param seed the spec's seed, which draws each period's window and deals the chunks to classes
   * @param period one of {@link #PERIODS} to keep only its cohorts, or null for all
   * @param header comment lines written first
   * @param numRequests the spec's num_requests, or null
   * @param horizonUs the spec's horizon, or null
   * @throws IllegalArgumentException naming the file (and line) of malformed data, or saying why
   *     no cohort was made
   */
  public static String toYaml(Path dir, int windowS, int drainS, long seed, String period, List<String> header,
      Long numRequests, Long horizonUs) {
    if (windowS <= 0) {
      throw new IllegalArgumentException("the window duration must be > 0 seconds, got " + windowS);
    }
    if (drainS < 0) {
      throw new IllegalArgumentException("the drain timeout must be >= 0 seconds, got " + drainS);
    }
    if (period != null && !PERIODS.contains(period)) {
      throw new IllegalArgumentException("the period must be one of " + PERIODS + ", got '" + period + "'");
    }
    if (!Files.isDirectory(dir)) {
      throw new IllegalArgumentException("ServeGen data folder " + dir + " does not exist or is not a folder");
    }
    List<Path> traces = traces(dir);
    if (traces.isEmpty()) {
      throw new IllegalArgumentException("no chunk-*-trace.csv files in " + dir);
    }
    requireTraceBesideEachDataset(dir);
    boolean reasoning = isReasoning(traces.get(0));
    if (reasoning && period != null) {
      throw new IllegalArgumentException(dir + " holds reasoning data, which has one window and no periods:"
          + " leave out the period (" + period + ")");
    }
    SplittableRandom rng = new SplittableRandom(seed);
    StringBuilder y = new StringBuilder(StrictYaml.comments(header));
    y.append("version: \"2\"\n");
    y.append("seed: ").append(seed).append('\n');
    if (reasoning) {
      y.append("category: reasoning\n");
    }
    y.append("aggregate_rate: 0\n");
    if (numRequests != null) {
      y.append("num_requests: ").append(numRequests).append('\n');
    }
    if (horizonUs != null) {
      y.append("horizon: ").append(horizonUs).append('\n');
    }
    y.append("cohorts:\n");
    int made = reasoning ? reasoningCohorts(dir, traces, windowS, rng, y) : periodCohorts(dir, traces, windowS,
        drainS, rng, period, y);
    if (made == 0) {
      throw new IllegalArgumentException("no cohort could be made from " + dir + ": no chunk is active"
          + (period == null ? "" : " in the " + period + " period") + " at the windows drawn with seed " + seed);
    }
    return y.toString();
  }

  // ---------------------------------------------------------------- language and multimodal

  private static int periodCohorts(Path dir, List<Path> traces, int windowS, int drainS, SplittableRandom rng,
      String only, StringBuilder y) {
    List<Chunk> chunks = new ArrayList<>();
    for (Path t : traces) {
      Chunk c = chunk(dir, t);
      if (c.rows().stream().anyMatch(r -> usable(c, r))) {
        chunks.add(c);
      }
    }
    if (chunks.isEmpty()) {
      throw new IllegalArgumentException("no chunk in " + dir + " has an active window (rate > 0) with a"
          + " length distribution at or before it");
    }
    long[] window = new long[PERIODS.size()];
    for (int p = 0; p < window.length; p++) {
      window[p] = PERIOD_START_S[p] + (long) rng.nextInt(3) * TRACE_WINDOW_S;
    }
    int made = 0;
    for (int p = 0; p < window.length; p++) {
      List<Chunk> active = new ArrayList<>();
      for (Chunk c : chunks) {
        if (!atTimeOfDay(c, window[p]).isEmpty()) {
          active.add(c);
        }
      }
      shuffle(active, rng);
      // classes in alphabetical order, as Go BLIS writes them; members dealt in class order
      TreeMap<String, List<Chunk>> byClass = new TreeMap<>();
      for (int i = 0; i < active.size(); i++) {
        byClass.computeIfAbsent(CLASSES.get(i % CLASSES.size()), k -> new ArrayList<>()).add(active.get(i));
      }
      if (only != null && !only.equals(PERIODS.get(p))) {
        continue;
      }
      long startUs = p * (long) (windowS + drainS) * 1_000_000L;
      y.append(String.format(Locale.ROOT, "  # %s: ServeGen's window from %02d:%02d (each day of the data), %d"
          + " active chunk(s), played from %d s for %d s\n", PERIODS.get(p), window[p] / 3600, window[p] % 3600 / 60,
          active.size(), startUs / 1_000_000L, windowS));
      for (Map.Entry<String, List<Chunk>> e : byClass.entrySet()) {
        made += periodCohort(PERIODS.get(p) + "-" + e.getKey(), e.getKey(), e.getValue(), window[p], startUs,
            windowS * 1_000_000L, y);
      }
    }
    return made;
  }

  private static int periodCohort(String id, String cls, List<Chunk> chunks, long windowS, long startUs,
      long durationUs, StringBuilder y) {
    double rate = 0;
    double[] lengths = new double[4];
    int fitted = 0;
    double cv = 0;
    double shape = 0;
    double scaleS = 0;
    int cvs = 0;
    int shaped = 0;
    int gamma = 0;
    int weibull = 0;
    for (Chunk c : chunks) {
      List<Row> rows = atTimeOfDay(c, windowS);
      double sum = 0;
      for (Row r : rows) {
        sum += r.rate();
        switch (r.process()) {
          case "gamma" -> gamma++;
          case "weibull" -> weibull++;
          default -> { }
        }
        if (!r.process().isEmpty() && r.cv() > 0) {
          cv += r.cv();
          cvs++;
        }
        if (!r.process().isEmpty() && r.shape() > 0 && r.scaleS() > 0) {
          shape += r.shape();
          scaleS += r.scaleS();
          shaped++;
        }
      }
      rate += sum / rows.size();
      fitted += addFit(lengths, c, windowS);
    }
    if (!(rate > 0)) {
      return 0;
    }
    String process = gamma + weibull == 0 ? "poisson" : weibull > gamma ? "weibull" : "gamma";
    StringBuilder arrival = new StringBuilder("{process: ").append(process);
    if (!process.equals("poisson")) {
      if (cvs > 0) {
        arrival.append(", cv: ").append(num(cv / cvs));
      }
      if (shaped > 0) {
        arrival.append(", shape: ").append(num(shape / shaped)).append(", scale: ")
            .append(num(scaleS / shaped * 1e6));
      }
    }
    arrival.append('}');
    cohort(y, id, chunks.size(), cls, arrival.toString(), lengths, fitted, startUs, durationUs, rate);
    return 1;
  }

  /** The chunk's active rows at {@code windowS} seconds after midnight on any day. */
  private static List<Row> atTimeOfDay(Chunk c, long windowS) {
    List<Row> out = new ArrayList<>();
    for (Row r : c.rows()) {
      if (r.startS() % DAY_S == windowS && usable(c, r)) {
        out.add(r);
      }
    }
    return out;
  }

  /** Whether the row is active and has a dataset window at or before it. */
  private static boolean usable(Chunk c, Row r) {
    return r.active() && c.lengths().floorKey((long) Math.floor(r.startExact())) != null;
  }

  /** Adds the chunk's {@link #fitAtTimeOfDay} to {@code sums}: 1 when it has one, else 0. */
  private static int addFit(double[] sums, Chunk c, long windowS) {
    double[] f = fitAtTimeOfDay(c, windowS);
    if (f == null) {
      return 0;
    }
    for (int i = 0; i < sums.length; i++) {
      sums[i] += f[i];
    }
    return 1;
  }

  /**
   * Input mu, sigma and output mu, sigma of the chunk at {@code windowS} seconds after midnight:
   * the dataset window at or before it on day one, and the same time of day on every other day,
   * each fitted, then averaged; null when none fits.
   */
  private static double[] fitAtTimeOfDay(Chunk c, long windowS) {
    Long boundary = c.lengths().floorKey(windowS);
    if (boundary == null) {
      return null;
    }
    double[] sum = new double[4];
    int n = 0;
    for (Map.Entry<Long, Lengths> e : c.lengths().entrySet()) {
      if (e.getKey() % DAY_S != boundary % DAY_S) {
        continue;
      }
      Fit in = fit(e.getValue().input());
      Fit out = fit(e.getValue().output());
      if (in != null && out != null) {
        sum[0] += in.mu();
        sum[1] += in.sigma();
        sum[2] += out.mu();
        sum[3] += out.sigma();
        n++;
      }
    }
    if (n == 0) {
      return null;
    }
    for (int i = 0; i < 4; i++) {
      sum[i] /= n;
    }
    return sum;
  }

  // ---------------------------------------------------------------- reasoning

  private static int reasoningCohorts(Path dir, List<Path> traces, int windowS, SplittableRandom rng,
      StringBuilder y) {
    List<Chunk> all = new ArrayList<>();
    for (Path t : traces) {
      all.add(chunk(dir, t));
    }
    int[] coverage = new int[DAY_S / TRACE_WINDOW_S];
    for (Chunk c : all) {
      for (Row r : c.rows()) {
        long w = (long) Math.floor(r.startExact() / TRACE_WINDOW_S);
        if (r.active() && w >= 0 && w < coverage.length) {
          coverage[(int) w]++;
        }
      }
    }
    int best = 0;
    for (int w = 1; w < coverage.length; w++) {
      if (coverage[w] > coverage[best]) {
        best = w;
      }
    }
    if (coverage[best] == 0) {
      throw new IllegalArgumentException("no chunk in " + dir + " is active (rate > 0) on day one");
    }
    long windowStartS = (long) best * TRACE_WINDOW_S;
    y.append(String.format(Locale.ROOT, "  # reasoning: ServeGen's window from %02d:%02d of day one (the most active"
        + " chunks: %d), played from 0 s for %d s\n", windowStartS / 3600, windowStartS % 3600 / 60, coverage[best],
        windowS));
    List<Chunk> chunks = new ArrayList<>();
    List<Map<Integer, Double>> ratios = new ArrayList<>();
    for (Chunk c : all) {
      Map<Integer, Double> r = reasonRatio(c.dataset());
      if (r != null) {
        chunks.add(c);
        ratios.add(r);
      }
    }
    if (chunks.isEmpty()) {
      throw new IllegalArgumentException("no chunk dataset in " + dir + " has a reason_ratio distribution");
    }
    TreeMap<Integer, Double> meanRatio = new TreeMap<>();
    for (Map<Integer, Double> r : ratios) {
      r.forEach((pct, p) -> meanRatio.merge(pct, p, Double::sum));
    }
    meanRatio.replaceAll((pct, p) -> p / ratios.size());
    shuffle(chunks, rng);
    TreeMap<String, List<Chunk>> byClass = new TreeMap<>();
    for (int i = 0; i < chunks.size(); i++) {
      byClass.computeIfAbsent(CLASSES.get(i % CLASSES.size()), k -> new ArrayList<>()).add(chunks.get(i));
    }
    StringBuilder ratioYaml = new StringBuilder("{type: empirical, params: {");
    String sep = "";
    for (Map.Entry<Integer, Double> e : meanRatio.entrySet()) {
      ratioYaml.append(sep).append('"').append(e.getKey()).append("\": ").append(num(e.getValue()));
      sep = ", ";
    }
    ratioYaml.append("}}");
    int made = 0;
    for (Map.Entry<String, List<Chunk>> e : byClass.entrySet()) {
      double rate = 0;
      double[] lengths = new double[4];
      int fitted = 0;
      for (Chunk c : e.getValue()) {
        for (Row r : c.rows()) {
          if ((long) Math.floor(r.startExact()) == windowStartS) {
            rate += r.rate();
            break;
          }
        }
        fitted += addFit(lengths, c, windowStartS);
      }
      if (!(rate > 0) || fitted == 0) {
        continue;
      }
      cohort(y, "reasoning-" + e.getKey(), e.getValue().size(), e.getKey(), "{process: poisson}", lengths, fitted,
          0, windowS * 1_000_000L, rate);
      y.append("    closed_loop: false\n");
      y.append("    reasoning:\n");
      y.append("      reason_ratio_distribution: ").append(ratioYaml).append('\n');
      y.append("      multi_turn: {max_rounds: 1, think_time_us: 0}\n");
      made++;
    }
    return made;
  }

  /** A chunk dataset's first window (in key order) with a reason_ratio, in whole percent; or null. */
  private static Map<Integer, Double> reasonRatio(Path dataset) {
    JsonNode root = datasetJson(dataset);
    TreeMap<String, JsonNode> windows = new TreeMap<>();
    root.fields().forEachRemaining(e -> windows.put(e.getKey(), e.getValue()));
    for (Map.Entry<String, JsonNode> w : windows.entrySet()) {
      String s = text(w.getValue(), "reason_ratio");
      if (s == null || s.isBlank() || s.strip().equals("{}")) {
        continue;
      }
      Map<Double, Double> pdf = pdf(s, dataset + ": window " + TextFiles.quote(w.getKey()) + ": reason_ratio");
      TreeMap<Integer, Double> pct = new TreeMap<>();
      for (Map.Entry<Double, Double> e : pdf.entrySet()) {
        if (e.getKey() < 0 || e.getKey() > 1) {
          throw new IllegalArgumentException(dataset + ": window " + TextFiles.quote(w.getKey()) + ": reason_ratio key "
              + e.getKey() + " is outside [0, 1]");
        }
        pct.merge((int) (e.getKey() * 100), e.getValue(), Double::sum);
      }
      return pct;
    }
    return null;
  }

  private static boolean isReasoning(Path firstTrace) {
    Path dataset = datasetOf(firstTrace);
    if (!Files.isRegularFile(dataset)) {
      return false;
    }
    JsonNode root = datasetJson(dataset);
    for (JsonNode w : (Iterable<JsonNode>) root::elements) {
      if (w.has("reason_ratio")) {
        return true;
      }
    }
    return false;
  }

  // ---------------------------------------------------------------- writing

  private static void cohort(StringBuilder y, String id, int population, String cls, String arrival,
      double[] lengthSums, int fitted, long startUs, long durationUs, double rate) {
    y.append("  - id: ").append(id).append('\n');
    y.append("    population: ").append(population).append('\n');
    y.append("    slo_class: ").append(cls).append('\n');
    y.append("    rate_fraction: 1.0\n");
    y.append("    arrival: ").append(arrival).append('\n');
    if (fitted > 0) {
      y.append("    input_distribution: {type: lognormal, params: {mu: ").append(num(lengthSums[0] / fitted))
          .append(", sigma: ").append(num(lengthSums[1] / fitted)).append("}}\n");
      y.append("    output_distribution: {type: lognormal, params: {mu: ").append(num(lengthSums[2] / fitted))
          .append(", sigma: ").append(num(lengthSums[3] / fitted)).append("}}\n");
    } else {
      // no length distribution at the window: Go BLIS's fallback lengths
      y.append("    input_distribution: {type: gaussian, params: {mean: 512, std_dev: 128, min: 1, max: 32768}}\n");
      y.append("    output_distribution: {type: gaussian, params: {mean: 128, std_dev: 32, min: 1, max: 32768}}\n");
    }
    y.append("    spike: {start_time_us: ").append(startUs).append(", duration_us: ").append(durationUs)
        .append(", trace_rate: ").append(num(rate)).append("}\n");
  }

  /** A number in full precision, as YAML reads it back. */
  private static String num(double v) {
    return Double.toString(v);
  }

  private static <T> void shuffle(List<T> list, SplittableRandom rng) {
    for (int i = list.size() - 1; i > 0; i--) {
      int j = rng.nextInt(i + 1);
      T t = list.get(i);
      list.set(i, list.get(j));
      list.set(j, t);
    }
  }

  // ---------------------------------------------------------------- reading

  private static List<Path> traces(Path dir) {
    List<Path> out = new ArrayList<>();
    try (DirectoryStream<Path> s = Files.newDirectoryStream(dir, "chunk-*-trace.csv")) {
      s.forEach(out::add);
    } catch (IOException e) {
      throw new IllegalArgumentException("cannot list " + dir + ": " + TextFiles.reason(e));
    }
    out.sort((a, b) -> a.getFileName().toString().compareTo(b.getFileName().toString()));
    return out;
  }

  /** Refuses a {@code chunk-N-dataset.json} without its {@code chunk-N-trace.csv}: a chunk's trace is missing. */
  private static void requireTraceBesideEachDataset(Path dir) {
    List<Path> datasets = new ArrayList<>();
    try (DirectoryStream<Path> s = Files.newDirectoryStream(dir, "chunk-*-dataset.json")) {
      s.forEach(datasets::add);
    } catch (IOException e) {
      throw new IllegalArgumentException("cannot list " + dir + ": " + TextFiles.reason(e));
    }
    datasets.sort((a, b) -> a.getFileName().toString().compareTo(b.getFileName().toString()));
    for (Path d : datasets) {
      String name = d.getFileName().toString();
      Path trace = d.resolveSibling(name.substring(0, name.length() - "dataset.json".length()) + "trace.csv");
      if (!Files.isRegularFile(trace)) {
        throw new IllegalArgumentException(d + " has no trace beside it: expected " + trace + " (the chunk's rates"
            + " per 10-minute window: " + ROW + ")");
      }
    }
  }

  private static Path datasetOf(Path trace) {
    String name = trace.getFileName().toString();
    return trace.resolveSibling(name.substring(0, name.length() - "trace.csv".length()) + "dataset.json");
  }

  private static Chunk chunk(Path dir, Path trace) {
    String name = trace.getFileName().toString();
    String id = name.substring("chunk-".length(), name.length() - "-trace.csv".length());
    Path dataset = datasetOf(trace);
    if (!Files.isRegularFile(dataset)) {
      throw new IllegalArgumentException(trace + " has no dataset beside it: expected " + dataset);
    }
    return new Chunk(id, trace, dataset, rows(trace), lengths(dataset));
  }

  /**
   * The rows of a trace CSV: {@code start_s, rate, cv, pattern[, shape, scale_s]}. A first line
   * that does not start with a number is a header; a row of rate 0 is an idle window whatever
   * else it holds.
   */
  private static List<Row> rows(Path trace) {
    List<Row> rows = new ArrayList<>();
    String text = TextFiles.readConfig(trace);
    if (text.isBlank()) {
      throw new IllegalArgumentException(trace + ": the trace is empty; expected a row per 10-minute window: " + ROW);
    }
    String[] lines = text.split("\r?\n", -1);
    for (int i = 0; i < lines.length; i++) {
      String line = lines[i].strip();
      if (line.isEmpty()) {
        continue;
      }
      String where = trace + ":" + (i + 1);
      String[] f = line.split(",", -1);
      Double start = parse(f[0]);
      if (start == null && rows.isEmpty() && i == 0) {
        continue; // a header
      }
      if (start == null || start < 0) {
        throw new IllegalArgumentException(where + ": the start time (seconds) must be a number >= 0, got '"
            + TextFiles.quote(f[0].strip()) + "'");
      }
      Double rate = f.length > 1 ? parse(f[1]) : null;
      if (rate == null || rate < 0 || rate > MAX_RATE_RPS) {
        throw new IllegalArgumentException(where + ": the rate (requests/s) must be a number in [0, "
            + String.format(Locale.ROOT, "%.0f", MAX_RATE_RPS) + "], got '" + TextFiles.quote(f.length > 1 ? f[1].strip()
            : "") + "' (expected " + ROW + ")");
      }
      if (rate == 0) {
        rows.add(new Row((long) start.doubleValue(), start, 0, 0, "", 0, 0));
        continue;
      }
      if (f.length < 4) {
        throw new IllegalArgumentException(where + ": an active window needs start_s, rate, cv, pattern[, shape,"
            + " scale_s], got " + f.length + " fields");
      }
      Double cv = parse(f[2]);
      if (cv == null || cv < 0 || cv > MAX_CV) {
        throw new IllegalArgumentException(where + ": the cv must be a number in [0, " + String.format(Locale.ROOT,
            "%.0f", MAX_CV) + "] (the burstiest arrivals simulated), got '" + TextFiles.quote(f[2].strip()) + "'");
      }
      String pattern = f[3].strip();
      if (!PATTERNS.contains(pattern.toLowerCase(Locale.ROOT))) {
        throw new IllegalArgumentException(where + ": unknown arrival pattern '" + TextFiles.quote(pattern)
            + "' (expected Gamma, Weibull, or none (empty), Poisson or Exponential for Poisson arrivals)");
      }
      double shape = 0;
      double scale = 0;
      if (f.length >= 6) {
        Double sh = parse(f[4]);
        Double sc = parse(f[5]);
        if (sh != null && sc != null && sh > 0 && sc > 0) {
          shape = sh;
          scale = sc;
        }
      }
      rows.add(new Row((long) Math.floor(start), start, rate, cv, pattern, shape, scale));
    }
    if (rows.isEmpty()) {
      throw new IllegalArgumentException(trace + ": the trace has no rows; expected a row per 10-minute window: "
          + ROW);
    }
    return rows;
  }

  /** The arrival patterns of a trace row, lower case: ServeGen's fitted processes, and Poisson's names. */
  private static final List<String> PATTERNS = List.of("gamma", "weibull", "", "poisson", "exponential");

  private static Double parse(String s) {
    try {
      double v = Double.parseDouble(s.strip());
      return Double.isFinite(v) ? v : null;
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /** A dataset's JSON tree. Datasets of many days exceed a configuration file's size, so no limit here. */
  private static JsonNode datasetJson(Path dataset) {
    JsonNode root;
    try (java.io.BufferedReader r = TextFiles.open(dataset)) {
      root = DATASETS.readTree(r);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      com.fasterxml.jackson.core.JsonLocation at = e.getLocation();
      throw new IllegalArgumentException(dataset + (at == null ? "" : ":" + at.getLineNr() + ":" + at.getColumnNr())
          + ": not valid JSON: " + StrictYaml.problem(e));
    } catch (IOException e) {
      throw new IllegalArgumentException(dataset + ": cannot read: " + TextFiles.reason(e));
    }
    if (root == null || !root.isObject()) {
      throw new IllegalArgumentException(dataset + ": expected an object of windows {\"START_S\": {\"input_tokens\":"
          + " \"{...}\", \"output_tokens\": \"{...}\"}}");
    }
    return root;
  }

  /** The dataset's windows with both length distributions, by start second. */
  private static TreeMap<Long, Lengths> lengths(Path dataset) {
    TreeMap<Long, Lengths> out = new TreeMap<>();
    JsonNode root = datasetJson(dataset);
    for (java.util.Iterator<Map.Entry<String, JsonNode>> it = root.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      Double start = parse(e.getKey());
      if (start == null || start < 0) {
        throw new IllegalArgumentException(dataset + ": window key '" + TextFiles.quote(e.getKey()) + "' is not a start time in"
            + " seconds");
      }
      String where = dataset + ": window " + TextFiles.quote(e.getKey());
      if (!e.getValue().isObject()) {
        throw new IllegalArgumentException(where + ": expected {\"input_tokens\": \"{...}\", \"output_tokens\":"
            + " \"{...}\"}");
      }
      String in = text(e.getValue(), "input_tokens");
      String outText = text(e.getValue(), "output_tokens");
      if (empty(in) || empty(outText)) {
        continue; // a window without requests
      }
      out.put((long) Math.floor(start), new Lengths(tokens(pdf(in, where + ": input_tokens"), where + ": input_tokens"),
          tokens(pdf(outText, where + ": output_tokens"), where + ": output_tokens")));
    }
    return out;
  }

  private static boolean empty(String s) {
    return s == null || s.isBlank() || s.strip().equals("{}");
  }

  private static String text(JsonNode window, String key) {
    JsonNode v = window.get(key);
    return v == null || v.isNull() ? null : v.isTextual() ? v.asText() : v.toString();
  }

  /** A length distribution's token counts, each in [0, {@link RequestSpec#MAX_TOKENS}]. */
  private static Map<Integer, Double> tokens(Map<Double, Double> pdf, String where) {
    TreeMap<Integer, Double> out = new TreeMap<>();
    pdf.forEach((k, p) -> {
      if (k < 0 || k > RequestSpec.MAX_TOKENS) {
        throw new IllegalArgumentException(where + ": a length must be a number of tokens in [0, "
            + RequestSpec.MAX_TOKENS + "] (the most a request may have), got " + num(k));
      }
      out.merge((int) k.doubleValue(), p, Double::sum);
    });
    return out;
  }

  /**
   * A distribution written as a Python dict, {@code {100: 0.5, 200: 0.5}} (keys may be quoted);
   * probabilities must be >= 0.
   */
  static Map<Double, Double> pdf(String s, String where) {
    String t = s.strip();
    if (!t.startsWith("{") || !t.endsWith("}")) {
      throw new IllegalArgumentException(where + ": expected a dict {VALUE: PROBABILITY, ...}, got '"
          + TextFiles.quote(t.length() > 40 ? t.substring(0, 40) + "..." : t) + "'");
    }
    TreeMap<Double, Double> out = new TreeMap<>();
    for (String pair : t.substring(1, t.length() - 1).split(",")) {
      if (pair.isBlank()) {
        continue;
      }
      int colon = pair.indexOf(':');
      Double k = colon < 0 ? null : parse(pair.substring(0, colon).strip().replace("\"", "").replace("'", ""));
      Double p = colon < 0 ? null : parse(pair.substring(colon + 1));
      if (k == null || p == null || p < 0) {
        throw new IllegalArgumentException(where + ": expected VALUE: PROBABILITY (a probability >= 0), got '"
            + TextFiles.quote(pair.strip()) + "'");
      }
      out.merge(k, p, Double::sum);
    }
    if (out.isEmpty()) {
      throw new IllegalArgumentException(where + ": the distribution is empty");
    }
    return out;
  }

  /** The lognormal of the weighted mean and spread of log(tokens) over tokens > 0; null if none. */
  private static Fit fit(Map<Integer, Double> pdf) {
    double w = 0;
    double s1 = 0;
    double s2 = 0;
    for (Map.Entry<Integer, Double> e : pdf.entrySet()) {
      if (e.getKey() <= 0 || e.getValue() <= 0) {
        continue;
      }
      double l = StrictMath.log(e.getKey());
      w += e.getValue();
      s1 += e.getValue() * l;
      s2 += e.getValue() * l * l;
    }
    if (!(w > 0)) {
      return null;
    }
    double mu = s1 / w;
    double var = Math.max(0, s2 / w - mu * mu);
    return new Fit(mu, StrictMath.sqrt(var));
  }
}
