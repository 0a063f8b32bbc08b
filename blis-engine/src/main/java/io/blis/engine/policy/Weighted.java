package io.blis.engine.policy;

import io.blis.api.ClusterView;
import io.blis.api.InstanceSnapshot;
import io.blis.api.RequestView;
import io.blis.api.Router;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Weighted scoring: each named scorer gives every instance a value in [0, 1] (higher better); the
 * weights are normalized to sum 1; the request goes to the highest total, ties to the lowest
 * index. Scorers: {@code prefix-cache} (min-max of the cached prefix length), {@code queue-depth}
 * (min-max of the waiting queue, shortest best), {@code kv-utilization} (1 - KV use), {@code
 * in-flight} (min-max of the in-flight count, fewest best); a min-max scorer gives 1 to all when
 * the instances are equal.
 */
final class Weighted implements Router {

  static final List<String> SCORERS = List.of("prefix-cache", "queue-depth", "kv-utilization",
      "in-flight");
  static final String DEFAULT_SCORERS = "prefix-cache:2,queue-depth:1,kv-utilization:1";

  private final double prefixW;
  private final double queueW;
  private final double kvW;
  private final double inFlightW;
  private double[] total = new double[16];
  private double[] raw = new double[16];

  Weighted(Map<String, Double> weights) {
    double sum = 0;
    for (Map.Entry<String, Double> e : weights.entrySet()) {
      if (!SCORERS.contains(e.getKey())) {
        throw new IllegalArgumentException("weighted router: unknown scorer '" + e.getKey()
            + "'; available: " + String.join(", ", SCORERS));
      }
      double w = e.getValue();
      if (!(w >= 0) || !Double.isFinite(w)) {
        throw new IllegalArgumentException("weighted router: weight of scorer " + e.getKey()
            + " must be a finite number >= 0, got " + w);
      }
      sum += w;
    }
    if (!(sum > 0)) {
      throw new IllegalArgumentException("weighted router: give at least one scorer a positive weight");
    }
    prefixW = weights.getOrDefault("prefix-cache", 0.0) / sum;
    queueW = weights.getOrDefault("queue-depth", 0.0) / sum;
    kvW = weights.getOrDefault("kv-utilization", 0.0) / sum;
    inFlightW = weights.getOrDefault("in-flight", 0.0) / sum;
  }

  /** Parses {@code name:weight,name:weight}. */
  static Map<String, Double> parseScorers(String spec) {
    Map<String, Double> out = new LinkedHashMap<>();
    for (String part : spec.split(",", -1)) {
      String item = part.trim();
      int colon = item.indexOf(':');
      if (colon <= 0 || colon == item.length() - 1) {
        throw new IllegalArgumentException(
            "weighted router: scorers must be name:weight,name:weight, got '" + item + "'");
      }
      String name = item.substring(0, colon).trim();
      try {
        out.put(name, Double.parseDouble(item.substring(colon + 1).trim()));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("weighted router: weight of scorer " + name
            + " is not a number: '" + item.substring(colon + 1).trim() + "'");
      }
    }
    return out;
  }

  @Override
  public int route(RequestView request, ClusterView cluster) {
    double[] t = compute(cluster);
    int best = 0;
    for (int i = 1, n = cluster.size(); i < n; i++) {
      if (t[i] > t[best]) {
        best = i;
      }
    }
    return best;
  }

  @Override
  public boolean score(RequestView request, ClusterView cluster, double[] scores) {
    double[] t = compute(cluster);
    System.arraycopy(t, 0, scores, 0, cluster.size());
    return true;
  }

  private double[] compute(ClusterView cluster) {
    int n = cluster.size();
    if (total.length < n) {
      total = new double[n];
      raw = new double[n];
    }
    Arrays.fill(total, 0, n, 0.0);
    if (prefixW > 0) {
      for (int i = 0; i < n; i++) {
        raw[i] = cluster.get(i).cachedPrefixTokens();
      }
      addMinMax(n, prefixW, true);
    }
    if (queueW > 0) {
      for (int i = 0; i < n; i++) {
        raw[i] = cluster.get(i).queueDepth();
      }
      addMinMax(n, queueW, false);
    }
    if (inFlightW > 0) {
      for (int i = 0; i < n; i++) {
        raw[i] = cluster.get(i).inFlight();
      }
      addMinMax(n, inFlightW, false);
    }
    if (kvW > 0) {
      for (int i = 0; i < n; i++) {
        InstanceSnapshot s = cluster.get(i);
        total[i] += kvW * (1.0 - Math.min(1.0, Math.max(0.0, s.kvUtilization())));
      }
    }
    return total;
  }

  /** Adds {@code w} x the min-max normalization of {@code raw} (all 1 when equal). */
  private void addMinMax(int n, double w, boolean higherBetter) {
    double min = Double.POSITIVE_INFINITY;
    double max = Double.NEGATIVE_INFINITY;
    for (int i = 0; i < n; i++) {
      min = Math.min(min, raw[i]);
      max = Math.max(max, raw[i]);
    }
    double range = max - min;
    for (int i = 0; i < n; i++) {
      double v = range == 0 ? 1.0 : higherBetter ? (raw[i] - min) / range : (max - raw[i]) / range;
      total[i] += w * v;
    }
  }
}
