package io.blis.engine.capacity;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The latency targets a capacity search must meet: aggregate ones ({@code ttft_p99=500ms}: the
 * 99th percentile of time to first token over the measured requests at most 500 ms) and a
 * goodput form ({@code goodput=99%} with per-request targets {@code ttft=500ms}, {@code
 * e2e=20s}, {@code tpot=50ms}: at least 99% of the measured requests finish and meet every
 * per-request target). {@code goodput=99%} alone counts each request against its own SLO class's
 * targets (a policy bundle's {@code slo:} section, {@link io.blis.engine.Simulation.Builder#sloTarget}).
 *
 * <p>Metrics: {@code ttft} (time to first token), {@code e2e} (arrival to last token), {@code
 * tpot} (a request's decode time per output token, (E2E - TTFT) / (output tokens - 1); {@code
 * itl} is accepted as the same), each with a statistic {@code mean}, {@code p50}, {@code p90},
 * {@code p95}, {@code p99} or {@code p999}. Durations take a unit: {@code us}, {@code ms},
 * {@code s} (a bare number is milliseconds).
 *
 * @param aggregate per {@code metric_stat}, its highest allowed value in microseconds
 * @param perRequest per metric, the highest value one request may have (used by goodput)
 * @param goodput the lowest allowed fraction of requests meeting every per-request target, or NaN
 *     when there is no goodput target
 */
public record SloSet(Map<String, Double> aggregate, Map<String, Double> perRequest, double goodput) {

  /** Metrics a target can name. */
  public static final List<String> METRICS = List.of("ttft", "e2e", "tpot");
  /** Statistics an aggregate target can name. */
  public static final List<String> STATS = List.of("mean", "p50", "p90", "p95", "p99", "p999");

  public SloSet {
    // insertion order: the targets print as they were given, the same in every run
    aggregate = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(aggregate));
    perRequest = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(perRequest));
    if (Double.isNaN(goodput) && !perRequest.isEmpty()) {
      throw new IllegalArgumentException("per-request targets (" + String.join(", ", perRequest.keySet())
          + ") need goodput=PERCENT; for a percentile target write for example ttft_p99=500ms");
    }
    if (aggregate.isEmpty() && Double.isNaN(goodput)) {
      throw new IllegalArgumentException("no target given; expected for example ttft_p99=500ms,e2e_p99=20s");
    }
  }

  /**
   * Parses {@code ttft_p99=500ms,e2e_p99=20s} or {@code goodput=99%,ttft=500ms}.
   *
   * @throws IllegalArgumentException naming the item and what was expected
   */
  public static SloSet parse(String text) {
    if (text == null || text.isBlank()) {
      throw new IllegalArgumentException("no target given; expected for example ttft_p99=500ms,e2e_p99=20s");
    }
    Map<String, Double> aggregate = new LinkedHashMap<>();
    Map<String, Double> perRequest = new LinkedHashMap<>();
    double goodput = Double.NaN;
    for (String raw : text.split(",")) {
      String item = raw.strip();
      int eq = item.indexOf('=');
      if (eq <= 0 || eq == item.length() - 1) {
        throw new IllegalArgumentException("'" + item + "': expected KEY=VALUE, for example ttft_p99=500ms");
      }
      String key = item.substring(0, eq).strip().toLowerCase(Locale.ROOT);
      String value = item.substring(eq + 1).strip();
      if (key.equals("goodput")) {
        goodput = fraction(value, item);
        continue;
      }
      int us = key.indexOf('_');
      String metric = canonical(us < 0 ? key : key.substring(0, us), item);
      if (us < 0) {
        put(perRequest, metric, duration(value, item), item);
      } else {
        String stat = key.substring(us + 1);
        if (!STATS.contains(stat)) {
          throw new IllegalArgumentException("'" + item + "': unknown statistic '" + stat + "', expected one of " + STATS);
        }
        put(aggregate, metric + "_" + stat, duration(value, item), item);
      }
    }
    return new SloSet(aggregate, perRequest, goodput);
  }

  private static void put(Map<String, Double> m, String key, double v, String item) {
    if (m.put(key, v) != null) {
      throw new IllegalArgumentException("'" + item + "': " + key + " is given twice");
    }
  }

  private static String canonical(String metric, String item) {
    String m = metric.equals("itl") ? "tpot" : metric;
    if (!METRICS.contains(m)) {
      throw new IllegalArgumentException("'" + item + "': unknown metric '" + metric + "', expected ttft, e2e, tpot (or itl)"
          + " with a statistic (ttft_p99=500ms), or goodput=PERCENT");
    }
    return m;
  }

  /** A duration in microseconds from {@code 500ms}, {@code 2s}, {@code 750us} or a bare millisecond number. */
  static double duration(String v, String item) {
    String s = v.toLowerCase(Locale.ROOT);
    double scale = 1000;
    if (s.endsWith("ms")) {
      s = s.substring(0, s.length() - 2);
    } else if (s.endsWith("us")) {
      s = s.substring(0, s.length() - 2);
      scale = 1;
    } else if (s.endsWith("s")) {
      s = s.substring(0, s.length() - 1);
      scale = 1_000_000;
    }
    double x;
    try {
      x = Double.parseDouble(s.strip());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("'" + item + "': '" + v + "' is not a duration (for example 500ms, 2s, 750us)");
    }
    if (!(x > 0) || !Double.isFinite(x) || x * scale > 86_400e6) {
      throw new IllegalArgumentException("'" + item + "': a target must be positive and at most a day, got " + v);
    }
    return x * scale;
  }

  private static double fraction(String v, String item) {
    String s = v.endsWith("%") ? v.substring(0, v.length() - 1) : v;
    double x;
    try {
      x = Double.parseDouble(s.strip());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("'" + item + "': expected a percentage such as 99%");
    }
    double f = v.endsWith("%") || x > 1 ? x / 100 : x;
    if (!(f > 0 && f <= 1)) {
      throw new IllegalArgumentException("'" + item + "': goodput must be in (0, 100%], got " + v);
    }
    return f;
  }

  /** Whether goodput counts each request against its SLO class's targets (no per-request targets given). */
  public boolean classTargets() {
    return !Double.isNaN(goodput) && perRequest.isEmpty();
  }

  /**
   * Which targets {@code m} misses, one phrase each ({@code "ttft_p99 612.3 ms > 500 ms"}); empty
   * when every target holds. {@code classes} are the SLO classes' targets, used by a {@link
   * #classTargets()} goodput.
   */
  public List<String> violations(PointMetrics m, Map<String, io.blis.engine.SloTarget> classes) {
    List<String> out = new ArrayList<>();
    for (var e : aggregate.entrySet()) {
      double v = m.value(e.getKey());
      if (!(v <= e.getValue())) {
        out.add(String.format(Locale.ROOT, "%s %.1f ms > %s ms", e.getKey(), v / 1000, trim(e.getValue() / 1000)));
      }
    }
    if (!Double.isNaN(goodput)) {
      double good = classTargets() ? m.goodFractionByClass(classes) : m.goodFraction(perRequest);
      if (!(good >= goodput)) {
        out.add(String.format(Locale.ROOT, "goodput %.2f%% < %s%%%s", 100 * good, trim(100 * goodput),
            classTargets() ? " (class targets)" : ""));
      }
    }
    return out;
  }

  /** A number as written: {@code 500} rather than {@code 500.0}, {@code 0.5} as it is. */
  public static String trim(double v) {
    return v == Math.rint(v) ? String.valueOf((long) v) : String.valueOf(v);
  }

  /** The targets as text, as they would be written on the command line. */
  public String describe() {
    List<String> parts = new ArrayList<>();
    aggregate.forEach((k, v) -> parts.add(k + "=" + trim(v / 1000) + "ms"));
    if (!Double.isNaN(goodput)) {
      parts.add("goodput=" + trim(100 * goodput) + "%" + (classTargets() ? " (SLO class targets)" : ""));
      perRequest.forEach((k, v) -> parts.add(k + "=" + trim(v / 1000) + "ms"));
    }
    return String.join(",", parts);
  }
}
