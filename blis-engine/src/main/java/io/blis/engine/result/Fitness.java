package io.blis.engine.result;

import io.blis.workload.TextFiles;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.ToDoubleFunction;

/**
 * One weighted score in [0, 1] (higher is better) from a run's overall metrics, so that policies
 * can be ranked by a script. Each metric is normalized to [0, 1]: a latency of {@code v}
 * milliseconds scores {@code 1 / (1 + v)}; a request rate {@code v / (v + 100)} per second; an
 * output token rate {@code v / (v + 10000)} per second; the completed fraction is taken as it is.
 * The score is the weighted mean of the normalized metrics. A metric without samples scores 0.
 *
 * @param weights metric name to weight, every weight >= 0 and at least one > 0
 */
public record Fitness(Map<String, Double> weights) {

  private static final double REQUEST_RATE_REF = 100.0;
  private static final double TOKEN_RATE_REF = 10_000.0;

  /** The metrics a weight can name, with how each is normalized. */
  private static final Map<String, ToDoubleFunction<MetricsSummary>> METRICS = metrics();

  public Fitness {
    Map<String, Double> copy = new TreeMap<>();
    double total = 0;
    for (Map.Entry<String, Double> e : weights.entrySet()) {
      if (!METRICS.containsKey(e.getKey())) {
        throw new IllegalArgumentException("fitness weights: unknown metric '"
            + TextFiles.quote(e.getKey())
            + "'; available: " + String.join(", ", METRICS.keySet()));
      }
      double w = e.getValue();
      if (!(w >= 0) || !Double.isFinite(w)) {
        throw new IllegalArgumentException(
            "fitness weights: weight of " + e.getKey() + " must be a finite number >= 0, got " + w);
      }
      copy.put(e.getKey(), w);
      total += w;
    }
    if (!(total > 0)) {
      throw new IllegalArgumentException("fitness weights: give at least one positive weight");
    }
    weights = Collections.unmodifiableMap(copy);
  }

  /** The metric names a weight can name, sorted. */
  public static List<String> metricNames() {
    return List.copyOf(new TreeMap<>(METRICS).keySet());
  }

  /**
   * Parses {@code name:weight,name:weight}, for example {@code throughput:0.5,ttft_p99:0.3,e2e_p99:0.2}; Go BLIS's
   * keys ({@code p99_ttft}, {@code mean_e2e}, {@code tokens_per_sec}) name the same metrics.
   *
   * @throws IllegalArgumentException naming the entry that is malformed or unknown
   */
  public static Fitness parse(String spec) {
    Map<String, Double> w = new LinkedHashMap<>();
    for (String part : spec.split(",", -1)) {
      String item = part.trim();
      int colon = item.indexOf(':');
      if (colon <= 0 || colon == item.length() - 1) {
        throw new IllegalArgumentException("fitness weights: expected name:weight, got '" + item + "'");
      }
      String name = canonical(item.substring(0, colon).trim());
      double weight;
      try {
        weight = Double.parseDouble(item.substring(colon + 1).trim());
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("fitness weights: weight of " + name + " is not a number: '"
            + item.substring(colon + 1).trim() + "'");
      }
      if (w.put(name, weight) != null) {
        throw new IllegalArgumentException("fitness weights: " + name + " is given twice");
      }
    }
    return new Fitness(w);
  }

  /** Go BLIS's metric keys ({@code p99_ttft}, {@code mean_e2e}, {@code tokens_per_sec}) as this project's. */
  static String canonical(String name) {
    return swapped(name, "tokens_per_sec", "tokens_per_s", GO_KEY);
  }

  private static final java.util.regex.Pattern GO_KEY =
      java.util.regex.Pattern.compile("(mean|p50|p90|p95|p99)_(ttft|e2e|itl|scheduling_delay)");

  /** The other way: this project's metric name ({@code ttft_p99}) as Go BLIS's key ({@code p99_ttft}). */
  public static String goKey(String metric) {
    return swapped(metric, "tokens_per_s", "tokens_per_sec", OWN_KEY);
  }

  /** {@code name} with its two parts swapped when {@code parts} matches it; {@code rate} as {@code rateAs}. */
  private static String swapped(String name, String rate, String rateAs, java.util.regex.Pattern parts) {
    if (name.equals(rate)) {
      return rateAs;
    }
    java.util.regex.Matcher m = parts.matcher(name);
    return m.matches() ? m.group(2) + "_" + m.group(1) : name;
  }

  private static final java.util.regex.Pattern OWN_KEY =
      java.util.regex.Pattern.compile("(ttft|e2e|itl|scheduling_delay)_(mean|p50|p90|p95|p99)");

  /** Scores {@code overall}. */
  public Result evaluate(MetricsSummary overall) {
    Map<String, Double> normalized = new TreeMap<>();
    double sum = 0;
    double total = 0;
    for (Map.Entry<String, Double> e : weights.entrySet()) {
      double v = METRICS.get(e.getKey()).applyAsDouble(overall);
      if (!Double.isFinite(v)) {
        v = 0;
      }
      normalized.put(e.getKey(), v);
      sum += e.getValue() * v;
      total += e.getValue();
    }
    return new Result(sum / total, weights, normalized);
  }

  /**
   * A fitness score.
   *
   * @param score weighted mean of the normalized metrics, in [0, 1]
   * @param weights the weights used
   * @param normalized each weighted metric's normalized value
   */
  public record Result(double score, Map<String, Double> weights, Map<String, Double> normalized) {
    public Result {
      weights = Collections.unmodifiableMap(new TreeMap<>(weights));
      normalized = Collections.unmodifiableMap(new TreeMap<>(normalized));
    }
  }

  private static Map<String, ToDoubleFunction<MetricsSummary>> metrics() {
    Map<String, ToDoubleFunction<MetricsSummary>> m = new TreeMap<>();
    m.put("throughput", s -> rate(s.requestsPerS(), REQUEST_RATE_REF));
    m.put("goodput", s -> rate(s.goodputPerS(), REQUEST_RATE_REF));
    m.put("tokens_per_s", s -> rate(s.outputTokensPerS(), TOKEN_RATE_REF));
    m.put("completed_fraction", s -> s.injectedRequests() == 0 ? 0
        : (double) s.completedRequests() / s.injectedRequests());
    latency(m, "ttft", MetricsSummary::ttft);
    latency(m, "e2e", MetricsSummary::e2e);
    latency(m, "itl", MetricsSummary::itl);
    latency(m, "scheduling_delay", MetricsSummary::schedulingDelay);
    return Collections.unmodifiableMap(m);
  }

  private static void latency(Map<String, ToDoubleFunction<MetricsSummary>> m, String name,
      java.util.function.Function<MetricsSummary, Distribution> of) {
    m.put(name + "_mean", s -> latencyScore(of.apply(s).meanUs()));
    m.put(name + "_p50", s -> latencyScore(of.apply(s).p50Us()));
    m.put(name + "_p90", s -> latencyScore(of.apply(s).p90Us()));
    m.put(name + "_p95", s -> latencyScore(of.apply(s).p95Us()));
    m.put(name + "_p99", s -> latencyScore(of.apply(s).p99Us()));
  }

  private static double latencyScore(double us) {
    return Double.isNaN(us) ? 0 : 1.0 / (1.0 + us / 1000.0);
  }

  private static double rate(double v, double ref) {
    return v <= 0 ? 0 : v / (v + ref);
  }
}
