package io.blis.engine.policy;

import io.blis.api.ClusterView;
import io.blis.api.InstanceSnapshot;
import io.blis.api.RequestView;
import io.blis.api.Router;
import io.blis.workload.TextFiles;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Weighted scoring: each named scorer gives every instance a value in [0, 1] (higher better); the
 * weights are normalized to sum 1; the request goes to the highest total, ties to the lowest index.
 * Every score is the instance's own, not relative to the other instances, so that a difference
 * means the same whatever the rest of the cluster does:
 *
 * <ul>
 *   <li>{@code prefix-cache}: the fraction of this request's prompt the instance has cached;
 *   <li>{@code load}: its requests (the larger of the router's own in-flight count and the
 *       snapshot's waiting + running) as {@code 1 / (1 + n / h)}: 1 idle, 1/2 at {@code h}
 *       requests, 1/3 at {@code 2h}; {@code h} (parameter {@code half_load}) defaults to an eighth
 *       of {@code max_num_seqs};
 *   <li>{@code queue-depth}: the snapshot's waiting requests, scored as {@code load};
 *   <li>{@code in-flight}: the router's in-flight count, scored as {@code load};
 *   <li>{@code kv-utilization}: 1 - KV use;
 *   <li>{@code lora-affinity}: for a request naming a LoRA adapter, 1 where the instance holds it
 *       ({@link InstanceSnapshot#holdsAdapter}: on its GPU, or named by a request there), 1/2 where
 *       it has a free adapter slot (loading it evicts nothing), 0 elsewhere; 1 everywhere for a
 *       request on the base model.
 * </ul>
 *
 * A prefix's advantage is thus at most its weight's share, and load outweighs it once the instance
 * holding it has enough requests more than another; a queue of 1,000 scores far below a queue of
 * 1. (Scores scaled min-max across the instances, as in earlier versions, made a one-block prefix difference worth
 * a full point and sent a whole workload to one instance.)
 *
 * <p>Go BLIS's scorers are there too, under its names and with its formulas ({@link GoScorers}:
 * {@code prefix-affinity}, {@code precise-prefix-cache}, {@code no-hit-lru}, {@code load-balance},
 * {@code active-requests}, {@code running-requests}, {@code load-aware}, {@code vllm-dp}; its
 * {@code kv-utilization} is this one; its {@code queue-depth}, min-max across the instances, is
 * {@code queue-depth-minmax}). Every weight is divided by the sum of all of them; this project's
 * scorers' terms are added first, in a fixed order (so that their totals are what they were before),
 * then Go BLIS's in the order given. Scorers with state of their own update it in {@link #route},
 * after the choice, never in {@link #score}.
 */
final class Weighted implements Router {

  /** This project's scorers. */
  static final List<String> OWN_SCORERS = List.of("prefix-cache", "queue-depth", "kv-utilization",
      "in-flight", "load", "lora-affinity");
  /** Every scorer: this project's, then Go BLIS's. */
  static final List<String> SCORERS = java.util.stream.Stream.concat(OWN_SCORERS.stream(),
      GoScorers.NAMES.stream()).toList();
  /** The KV cache's block size when the deployment gives none (vLLM's default, 16 tokens). */
  static final int DEFAULT_BLOCK_SIZE = 16;
  static final String DEFAULT_SCORERS = "prefix-cache:2,load:1,kv-utilization:1";
  /** The half-load count when the deployment gives no {@code max_num_seqs}: an eighth of vLLM's default 256. */
  static final int DEFAULT_HALF_LOAD = 32;

  /** The half-load count of an instance admitting {@code maxNumSeqs} requests into its batch: an eighth of it. */
  static int halfLoad(int maxNumSeqs) {
    return maxNumSeqs > 0 ? Math.max(1, maxNumSeqs / 8) : DEFAULT_HALF_LOAD;
  }

  private final double prefixW;
  private final double queueW;
  private final double kvW;
  private final double inFlightW;
  private final double loadW;
  private final double loraW;
  private final double halfLoad;
  /** Go BLIS's scorers with a positive weight, in the order given, and their normalized weights. */
  private final GoScorers.Scorer[] goScorers;
  private final double[] goWeights;
  private double[] total = new double[16];
  private double[] dim = new double[16];

  Weighted(Map<String, Double> weights, int halfLoad) {
    this(weights, halfLoad, DEFAULT_BLOCK_SIZE);
  }

  /**
   * @param weights scorer name to weight
   * @param halfLoad the requests at which {@code load}, {@code queue-depth} and {@code in-flight} score 1/2
   * @param blockSize the KV cache's block size in tokens (the {@code prefix-affinity} scorer's blocks)
   */
  Weighted(Map<String, Double> weights, int halfLoad, int blockSize) {
    if (halfLoad < 1) {
      throw new IllegalArgumentException("weighted router: half_load must be at least 1 request, got " + halfLoad);
    }
    if (blockSize < 1) {
      throw new IllegalArgumentException("weighted router: block size must be at least 1 token, got " + blockSize);
    }
    this.halfLoad = halfLoad;
    double sum = 0;
    for (Map.Entry<String, Double> e : weights.entrySet()) {
      if (!SCORERS.contains(e.getKey())) {
        throw new IllegalArgumentException("weighted router: unknown scorer '"
            + TextFiles.quote(e.getKey())
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
    loadW = weights.getOrDefault("load", 0.0) / sum;
    loraW = weights.getOrDefault("lora-affinity", 0.0) / sum;
    List<GoScorers.Scorer> go = new java.util.ArrayList<>();
    List<Double> goW = new java.util.ArrayList<>();
    for (Map.Entry<String, Double> e : weights.entrySet()) {
      if (GoScorers.NAMES.contains(e.getKey()) && e.getValue() > 0) {
        go.add(GoScorers.create(e.getKey(), blockSize));
        goW.add(e.getValue() / sum);
      }
    }
    goScorers = go.toArray(GoScorers.Scorer[]::new);
    goWeights = goW.stream().mapToDouble(Double::doubleValue).toArray();
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
    double[] t = compute(request, cluster);
    int best = 0;
    for (int i = 1, n = cluster.size(); i < n; i++) {
      if (t[i] > t[best]) {
        best = i;
      }
    }
    for (GoScorers.Scorer g : goScorers) {
      g.routed(request, cluster, best);
    }
    return best;
  }

  @Override
  public boolean score(RequestView request, ClusterView cluster, double[] scores) {
    double[] t = compute(request, cluster);
    System.arraycopy(t, 0, scores, 0, cluster.size());
    return true;
  }

  private double[] compute(RequestView request, ClusterView cluster) {
    int n = cluster.size();
    if (total.length < n) {
      total = new double[n];
      dim = new double[n];
    }
    int prompt = request.inputTokens();
    String adapter = loraW > 0 ? request.adapter() : "";
    for (int i = 0; i < n; i++) {
      InstanceSnapshot s = cluster.get(i);
      double t = 0;
      if (prefixW > 0 && prompt > 0) {
        t += prefixW * Math.min(1.0, Math.max(0, s.cachedPrefixTokens()) / (double) prompt);
      }
      if (queueW > 0) {
        t += queueW * load(s.queueDepth());
      }
      if (inFlightW > 0) {
        t += inFlightW * load(s.inFlight());
      }
      if (loadW > 0) {
        t += loadW * load(Math.max(s.inFlight(), s.queueDepth() + s.runningBatchSize()));
      }
      if (kvW > 0) {
        t += kvW * (1.0 - Math.min(1.0, Math.max(0.0, s.kvUtilization())));
      }
      if (loraW > 0) {
        t += loraW * (adapter.isEmpty() || s.holdsAdapter(adapter) ? 1.0 : s.freeAdapterSlots() > 0 ? 0.5 : 0.0);
      }
      total[i] = t;
    }
    for (int k = 0; k < goScorers.length; k++) {
      goScorers[k].score(request, cluster, dim);
      double w = goWeights[k];
      for (int i = 0; i < n; i++) {
        total[i] += w * Math.min(1.0, Math.max(0.0, dim[i]));
      }
    }
    return total;
  }

  /** A count of requests as a score: 1 when idle, 1/2 at {@code halfLoad}, 1/3 at twice it, ... */
  private double load(int requests) {
    return 1 / (1 + Math.max(0, requests) / halfLoad);
  }
}
