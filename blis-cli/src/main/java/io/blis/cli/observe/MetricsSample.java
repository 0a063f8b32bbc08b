package io.blis.cli.observe;

import java.util.Locale;

/**
 * One scrape of a vLLM server's Prometheus metrics during a run, summed over the server's engines
 * (data-parallel ranks): the scheduler's queues, the KV cache and the counters. A metric the
 * server does not expose is NaN.
 *
 * @param timeUs when it was scraped, microseconds since the start of the run
 * @param running {@code vllm:num_requests_running}
 * @param waiting {@code vllm:num_requests_waiting}
 * @param kvCacheUsage {@code vllm:kv_cache_usage_perc} (or the older {@code gpu_cache_usage_perc}),
 *     the mean over engines, 1 = full
 * @param preemptions {@code vllm:num_preemptions_total}
 * @param promptTokens {@code vllm:prompt_tokens_total}
 * @param generationTokens {@code vllm:generation_tokens_total}
 * @param prefixCacheQueries {@code vllm:prefix_cache_queries_total} (tokens looked up)
 * @param prefixCacheHits {@code vllm:prefix_cache_hits_total} (tokens found)
 * @param requestSuccess {@code vllm:request_success_total}
 */
public record MetricsSample(long timeUs, double running, double waiting, double kvCacheUsage,
    double preemptions, double promptTokens, double generationTokens, double prefixCacheQueries,
    double prefixCacheHits, double requestSuccess) {

  /** The columns of {@code metrics.csv}. */
  static final String CSV_HEADER = "time_s,running,waiting,kv_cache_usage,preemptions_total,"
      + "prompt_tokens_total,generation_tokens_total,prefix_cache_queries_total,"
      + "prefix_cache_hits_total,request_success_total";

  /** The metrics a sample reads. */
  static final java.util.List<String> NAMES = java.util.List.of("vllm:num_requests_running",
      "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc",
      "vllm:num_preemptions_total", "vllm:prompt_tokens_total", "vllm:generation_tokens_total",
      "vllm:prefix_cache_queries_total", "vllm:prefix_cache_hits_total", "vllm:request_success_total");

  /** Values of the metrics a sample reads that are not finite (NaN, +Inf, -Inf), and so left out. */
  static long nonFinite(PrometheusText.Scrape s) {
    return s.samples().stream().filter(x -> NAMES.contains(x.name()) && !Double.isFinite(x.value())).count();
  }

  /** The first of {@link #nonFinite}'s values, as "name value", or "". */
  static String firstNonFinite(PrometheusText.Scrape s) {
    return s.samples().stream().filter(x -> NAMES.contains(x.name()) && !Double.isFinite(x.value()))
        .findFirst().map(x -> x.name() + " " + x.value()).orElse("");
  }

  /**
   * The sample of one scrape: each metric the sum (or mean) of its finite series; a value that is
   * not finite counts as absent, so that a metric with no finite value is NaN (an empty cell).
   */
  static MetricsSample of(long timeUs, PrometheusText.Scrape s) {
    double kv = s.mean("vllm:kv_cache_usage_perc");
    if (Double.isNaN(kv)) {
      kv = s.mean("vllm:gpu_cache_usage_perc");
    }
    return new MetricsSample(timeUs, s.sum("vllm:num_requests_running"),
        s.sum("vllm:num_requests_waiting"), kv, s.sum("vllm:num_preemptions_total"),
        s.sum("vllm:prompt_tokens_total"), s.sum("vllm:generation_tokens_total"),
        s.sum("vllm:prefix_cache_queries_total"), s.sum("vllm:prefix_cache_hits_total"),
        s.sum("vllm:request_success_total"));
  }

  /** Whether the scrape held any of vLLM's metrics. */
  boolean anyVllm() {
    return !(Double.isNaN(running) && Double.isNaN(waiting) && Double.isNaN(kvCacheUsage)
        && Double.isNaN(preemptions) && Double.isNaN(promptTokens) && Double.isNaN(generationTokens));
  }

  /** One line of {@code metrics.csv} (an absent metric, or one not finite, is an empty field). */
  String csvRow() {
    return String.format(Locale.ROOT, "%.3f", timeUs / 1e6) + "," + f(running) + "," + f(waiting) + ","
        + f(kvCacheUsage) + "," + f(preemptions) + "," + f(promptTokens) + "," + f(generationTokens)
        + "," + f(prefixCacheQueries) + "," + f(prefixCacheHits) + "," + f(requestSuccess);
  }

  private static String f(double v) {
    if (!Double.isFinite(v)) {
      return "";
    }
    return v == Math.rint(v) && Math.abs(v) < 1e15 ? Long.toString((long) v)
        : String.format(Locale.ROOT, "%.6g", v);
  }

  /** Parses a line of {@code metrics.csv}. */
  static MetricsSample parse(String line, String where) {
    String[] f = line.split(",", -1);
    if (f.length != 10) {
      throw new IllegalArgumentException(where + ": expected 10 fields (" + CSV_HEADER + "), got " + f.length);
    }
    double[] v = new double[10];
    for (int i = 0; i < 10; i++) {
      try {
        v[i] = f[i].isEmpty() ? Double.NaN : Double.parseDouble(f[i]);
        if (!Double.isFinite(v[i])) {
          v[i] = Double.NaN; // an older run's "Infinity": not a value
        }
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(where + ": field " + (i + 1) + " '" + f[i] + "' is not a number");
      }
    }
    return new MetricsSample(Math.round(v[0] * 1e6), v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9]);
  }
}
