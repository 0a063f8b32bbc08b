package io.blis.cli.observe;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.blis.engine.result.RequestRecord;
import io.blis.engine.validate.RunStats;
import io.blis.engine.validate.RunStatsCalculator;
import io.blis.engine.validate.RunSummary;
import io.blis.workload.RequestOutcome;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.HdrHistogram.Histogram;

/**
 * The statistics of an observed run, computed from its {@code observations.jsonl} as
 * inference-perf computes them (and as {@code blis validate} computes a simulation's): latency
 * means and linear-interpolation percentiles over successful requests, per load stage and overall
 * ({@link RunStatsCalculator}); inter-token latency over the gaps between consecutive chunks of
 * every successful request; decode time per output token request by request, from the server's
 * token count.
 */
public final class RunReport {

  private final List<Observation> observations;
  private final RunSummary summary;
  /** Gaps between chunks per stage (key -1: every stage), microseconds. */
  private final Map<Integer, Histogram> itl;
  private final Map<Integer, double[]> itlSums;
  private final boolean itlFromTokenTimes;
  private final int truncatedLines;

  private RunReport(List<Observation> observations, Map<Integer, Histogram> itl,
      Map<Integer, double[]> itlSums, boolean itlFromTokenTimes, int truncatedLines) {
    this.observations = observations;
    this.itl = itl;
    this.itlSums = itlSums;
    this.itlFromTokenTimes = itlFromTokenTimes;
    this.truncatedLines = truncatedLines;
    List<RequestRecord> records = new ArrayList<>(observations.size());
    for (Observation o : observations) {
      records.add(record(o));
    }
    this.summary = RunStatsCalculator.summarize(records, 0);
  }

  /** The observation as a simulation's request record (its id is the send order). */
  static RequestRecord record(Observation o) {
    RequestOutcome outcome = o.ok() ? RequestOutcome.COMPLETED
        : o.status().equals(Observation.TIMEOUT) ? RequestOutcome.TIMED_OUT : RequestOutcome.REJECTED;
    return new RequestRecord(o.seq(), o.stage(), o.sendUs(), o.inputTokens(),
        o.ok() ? o.outputTokens() : o.chunks(), outcome, o.ttftUs(), Math.max(0, o.e2eUs()), -1, 0, 0,
        o.ok() ? "" : o.status());
  }

  /**
   * Reads {@code observations.jsonl}. A last line cut short (the client was killed while writing
   * it) is left out and counted; any other malformed line fails.
   *
   * @throws IllegalArgumentException naming the file and line
   */
  public static RunReport read(Path file) {
    List<Observation> out = new ArrayList<>();
    Map<Integer, Histogram> itl = new TreeMap<>();
    Map<Integer, double[]> sums = new TreeMap<>();
    boolean tokenTimes = true;
    int truncated = 0;
    List<String> lines;
    try (BufferedReader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      lines = r.lines().toList();
    } catch (IOException | java.io.UncheckedIOException e) {
      throw new IllegalArgumentException(file + ": cannot read: " + e.getMessage(), e);
    }
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i);
      if (line.isBlank()) {
        continue;
      }
      JsonNode n;
      try {
        n = RunDirectory.JSON.readTree(line);
      } catch (IOException e) {
        if (i == lines.size() - 1) {
          truncated++;
          continue;
        }
        String why = e instanceof com.fasterxml.jackson.core.JsonProcessingException j
            ? j.getOriginalMessage() : e.getMessage();
        throw new IllegalArgumentException(file + ":" + (i + 1) + ": not a JSON object: " + why, e);
      }
      Observation o = Observation.read(n, file + ":" + (i + 1));
      tokenTimes &= addGaps(o, itl, sums);
      out.add(new Observation(o.seq(), o.id(), o.stage(), o.sessionId(), o.round(), o.scheduledUs(),
          o.sendUs(), o.firstTokenUs(), o.lastTokenUs(), o.endUs(), o.chunks(), o.promptTokensSent(),
          o.promptTokensUsage(), o.completionTokensUsage(), o.maxTokens(), o.httpStatus(), o.status(),
          o.reason(), new long[0], o.finishReason()));
    }
    out.sort(Comparator.comparingLong(Observation::seq));
    return new RunReport(List.copyOf(out), itl, sums, tokenTimes, truncated);
  }

  /**
   * Adds the gaps between the tokens of {@code o} (when it completed) to the stage's figures;
   * false when it had no token times, so that its mean gap stood for its gaps.
   */
  private static boolean addGaps(Observation o, Map<Integer, Histogram> itl, Map<Integer, double[]> sums) {
    if (!o.ok()) {
      return true;
    }
    long[] t = o.tokenTimesUs();
    if (t.length == o.chunks() && t.length > 0) {
      for (int k = 1; k < t.length; k++) {
        gap(itl, sums, o.stage(), t[k] - t[k - 1], 1);
      }
      return true;
    }
    if (o.chunks() > 1) {
      gap(itl, sums, o.stage(), (o.lastTokenUs() - o.firstTokenUs()) / (o.chunks() - 1), o.chunks() - 1);
      return false;
    }
    return true;
  }

  /** The report of {@code observations} held in memory (a run without a run folder), as {@link #read} computes it. */
  public static RunReport of(List<Observation> observations) {
    List<Observation> out = new ArrayList<>(observations.size());
    Map<Integer, Histogram> itl = new TreeMap<>();
    Map<Integer, double[]> sums = new TreeMap<>();
    boolean tokenTimes = true;
    for (Observation o : observations) {
      tokenTimes &= addGaps(o, itl, sums);
      out.add(o);
    }
    out.sort(Comparator.comparingLong(Observation::seq));
    return new RunReport(List.copyOf(out), itl, sums, tokenTimes, 0);
  }

  private static void gap(Map<Integer, Histogram> itl, Map<Integer, double[]> sums, int stage,
      long gapUs, long count) {
    long g = Math.max(0, gapUs);
    for (int key : new int[] {-1, stage}) {
      itl.computeIfAbsent(key, k -> new Histogram(3)).recordValueWithCount(g, count);
      double[] s = sums.computeIfAbsent(key, k -> new double[2]);
      s[0] += (double) g * count;
      s[1] += count;
    }
  }

  /** Every observation in send order (token times left out). */
  public List<Observation> observations() {
    return observations;
  }

  /** The run's statistics per stage and overall. */
  public RunSummary summary() {
    return summary;
  }

  /** Failed requests as a fraction of those sent. */
  public double failureRate() {
    return summary.overall().failureFraction();
  }

  /**
   * Whether the run overloaded the server, as the ground truth marks it: more than 5% failures
   * or a mean TTFT above 5 s.
   */
  public boolean saturated() {
    RunStats o = summary.overall();
    return failureRate() > 0.05 || (!Double.isNaN(o.ttftMeanMs()) && o.ttftMeanMs() > 5000);
  }

  /** {@code observed}: {@code overall} and {@code stages[]} in the experiments schema. */
  ObjectNode observedJson() {
    ObjectNode root = RunDirectory.JSON.createObjectNode();
    root.set("overall", statsJson(summary.overall(), -1));
    ArrayNode stages = root.putArray("stages");
    for (RunStats s : summary.stages()) {
      ObjectNode n = statsJson(s, s.stage());
      n.put("stage", s.stage());
      stages.add(n);
    }
    return root;
  }

  private ObjectNode statsJson(RunStats s, int stage) {
    List<Observation> group = stage < 0 ? observations
        : observations.stream().filter(o -> o.stage() == stage).toList();
    ObjectNode n = RunDirectory.JSON.createObjectNode();
    n.put("count_sent", group.size());
    n.put("count_success", s.countSuccess());
    n.put("count_failed", s.countFailed());
    distribution(n.putObject("e2e_ms"), s.e2eMeanMs(), s.e2eP50Ms(), s.e2eP90Ms(), s.e2eP99Ms());
    distribution(n.putObject("ttft_ms"), s.ttftMeanMs(), s.ttftP50Ms(), s.ttftP90Ms(), s.ttftP99Ms());
    Histogram h = itl.get(stage);
    double[] sum = itlSums.get(stage);
    if (h != null && sum[1] > 0) {
      distribution(n.putObject("itl_ms"), sum[0] / sum[1] / 1000.0,
          h.getValueAtPercentile(50) / 1000.0, h.getValueAtPercentile(90) / 1000.0,
          h.getValueAtPercentile(99) / 1000.0);
    }
    double promptSum = 0;
    double outputSum = 0;
    long outputTokens = 0;
    long inputTokens = 0;
    int ok = 0;
    for (Observation o : group) {
      if (o.ok()) {
        ok++;
        promptSum += o.inputTokens();
        outputSum += o.outputTokens();
        inputTokens += o.inputTokens();
        outputTokens += o.outputTokens();
      }
    }
    put(n, "tpot_ms_mean", s.decodeMsPerToken());
    if (ok > 0) {
      n.put("prompt_len_mean", round(promptSum / ok, 3));
      n.put("output_len_mean", round(outputSum / ok, 3));
    }
    ObjectNode t = n.putObject("throughput");
    put(t, "requests_per_s", s.throughputRps());
    if (!Double.isNaN(s.throughputRps()) && s.countSuccess() > 0) {
      double spanS = s.countSuccess() / s.throughputRps();
      put(t, "input_tokens_per_s", inputTokens / spanS);
      put(t, "output_tokens_per_s", outputTokens / spanS);
      put(t, "total_tokens_per_s", (inputTokens + outputTokens) / spanS);
    }
    put(n.putObject("derived"), "decode_ms_per_token_est", s.decodeMsPerToken());
    ObjectNode failures = n.putObject("failures");
    new TreeMap<>(group.stream().filter(o -> !o.ok())
        .collect(java.util.stream.Collectors.groupingBy(Observation::status, java.util.stream.Collectors.counting())))
        .forEach(failures::put);
    return n;
  }

  private static void distribution(ObjectNode n, double mean, double p50, double p90, double p99) {
    put(n, "mean", mean);
    put(n, "p50", p50);
    put(n, "p90", p90);
    put(n, "p99", p99);
  }

  private static void put(ObjectNode n, String key, double v) {
    if (!Double.isNaN(v) && !Double.isInfinite(v)) {
      n.put(key, round(v, 3));
    }
  }

  static double round(double v, int digits) {
    double f = Math.pow(10, digits);
    return Math.round(v * f) / f;
  }

  /**
   * {@code client}: how the client did (lateness of sends, how exact the prompt lengths were,
   * answers shorter than asked), and how the run ended.
   */
  ObjectNode clientJson(ObservedRun run) {
    ObjectNode n = RunDirectory.JSON.createObjectNode();
    Histogram lateness = new Histogram(3);
    long late = 0;
    long withUsage = 0;
    long exact = 0;
    long absDiff = 0;
    long maxDiff = 0;
    long short_ = 0;
    long lastEnd = 0;
    for (Observation o : observations) {
      lateness.recordValue(Math.max(0, o.latenessUs()));
      if (o.latenessUs() > Observer.LATE_US) {
        late++;
      }
      if (o.promptTokensUsage() >= 0) {
        withUsage++;
        long d = Math.abs(o.promptTokensUsage() - o.promptTokensSent());
        absDiff += d;
        maxDiff = Math.max(maxDiff, d);
        if (d == 0) {
          exact++;
        }
      }
      if (o.ok() && o.outputTokens() < o.maxTokens()) {
        short_++;
      }
      lastEnd = Math.max(lastEnd, o.endUs());
    }
    n.put("requests_sent", observations.size());
    n.put("duration_s", round(lastEnd / 1e6, 3));
    n.put("late_sends", late);
    n.put("late_threshold_ms", Observer.LATE_US / 1000.0);
    ObjectNode l = n.putObject("send_lateness_ms");
    if (!observations.isEmpty()) {
      l.put("p50", lateness.getValueAtPercentile(50) / 1000.0);
      l.put("p99", lateness.getValueAtPercentile(99) / 1000.0);
      l.put("max", lateness.getMaxValue() / 1000.0);
    }
    ObjectNode p = n.putObject("prompt_tokens_vs_usage");
    p.put("requests_with_usage", withUsage);
    p.put("exact", exact);
    if (withUsage > 0) {
      p.put("mean_abs_diff", round((double) absDiff / withUsage, 3));
      p.put("max_abs_diff", maxDiff);
    }
    n.put("answers_shorter_than_max_tokens", short_);
    n.put("itl_from", itlFromTokenTimes ? "gaps between chunks" : "each request's mean gap (token times not recorded)");
    if (truncatedLines > 0) {
      n.put("truncated_lines_skipped", truncatedLines);
    }
    if (run != null) {
      n.put("stopped", run.stopped());
      n.put("not_sent", run.notSent());
      n.put("metrics_scrapes", run.metricsScrapes());
      n.put("metrics_scrape_failures", run.metricsFailures());
      // the server's values not recorded as given (usage counts, finish reasons, metric values)
      ObjectNode values = n.putObject("server_values_not_recorded");
      run.serverValues().forEach(values::put);
    }
    return n;
  }

  /** {@code server_metrics}: what the server's metrics said over the run. */
  static ObjectNode metricsJson(List<MetricsSample> samples) {
    ObjectNode n = RunDirectory.JSON.createObjectNode();
    n.put("file", RunDirectory.METRICS);
    n.put("scrapes", samples.size());
    MetricsSample first = samples.get(0);
    MetricsSample last = samples.get(samples.size() - 1);
    put(n, "preemptions", last.preemptions() - first.preemptions());
    put(n, "prompt_tokens", last.promptTokens() - first.promptTokens());
    put(n, "generation_tokens", last.generationTokens() - first.generationTokens());
    double queries = last.prefixCacheQueries() - first.prefixCacheQueries();
    double hits = last.prefixCacheHits() - first.prefixCacheHits();
    if (queries > 0 && hits >= 0 && hits <= queries) { // else not a rate (a counter reset, a server's bad counts)
      put(n, "prefix_cache_hit_rate", hits / queries);
    }
    double peakRunning = Double.NaN;
    double peakWaiting = Double.NaN;
    double peakKv = Double.NaN;
    double kvSum = 0;
    int kvN = 0;
    for (MetricsSample s : samples) {
      peakRunning = max(peakRunning, s.running());
      peakWaiting = max(peakWaiting, s.waiting());
      peakKv = max(peakKv, s.kvCacheUsage());
      if (!Double.isNaN(s.kvCacheUsage())) {
        kvSum += s.kvCacheUsage();
        kvN++;
      }
    }
    put(n, "peak_running", peakRunning);
    put(n, "peak_waiting", peakWaiting);
    put(n, "peak_kv_cache_usage", peakKv);
    if (kvN > 0) {
      put(n, "mean_kv_cache_usage", kvSum / kvN);
    }
    return n;
  }

  private static double max(double a, double b) {
    return Double.isNaN(a) ? b : Double.isNaN(b) ? a : Math.max(a, b);
  }
}
