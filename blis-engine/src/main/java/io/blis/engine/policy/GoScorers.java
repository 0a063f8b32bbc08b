package io.blis.engine.policy;

import io.blis.api.ClusterView;
import io.blis.api.InstanceSnapshot;
import io.blis.api.RequestView;
import java.util.Arrays;
import java.util.List;

/**
 * Go BLIS's scorers for the weighted router, under Go BLIS's names and with its formulas. Unlike
 * this project's own scorers ({@link Weighted}), most of them compare the instances with each
 * other: "min-max" maps the best raw figure among the candidates to 1 and the worst to 0, linearly,
 * and gives every instance 1 when all the figures are equal.
 *
 * <ul>
 *   <li>{@code prefix-affinity}: the fraction of the prompt's full blocks (of the KV cache's block
 *       size) that lead the router's own record of what it sent to the instance ({@link
 *       PrefixIndex}, 10,000 blocks per instance); 0 for a prompt shorter than a block;
 *   <li>{@code precise-prefix-cache}: the prompt tokens the instance has cached, min-max (all equal,
 *       including all 0: 1);
 *   <li>{@code no-hit-lru}: 0.5 everywhere for a warm request (some instance has some of its prompt
 *       cached); for a cold one, the instances ranked never sent a cold request first (in view
 *       order), then those sent one longest ago first, rank {@code r} of {@code n} scoring {@code 1 -
 *       r/(n-1)} (1 for a single instance);
 *   <li>{@code queue-depth-minmax} (Go BLIS's {@code queue-depth}): waiting requests, inverted
 *       min-max;
 *   <li>{@code load-balance}: {@code 1 / (1 + waiting + running + in flight)};
 *   <li>{@code active-requests}: in flight {@code c} against the largest {@code m} among the
 *       instances: {@code (m - c) / m}, 1 when {@code c} or {@code m} is 0 (all equal and not 0: 0);
 *   <li>{@code running-requests}: the running batch's size, inverted min-max;
 *   <li>{@code load-aware}: waiting requests {@code q}: 0.5 when none, else {@code 0.5 (1 -
 *       min(q, 128) / 128)};
 *   <li>{@code vllm-dp}: vLLM's data-parallel balancer's {@code 4 waiting + running}, inverted
 *       min-max.
 * </ul>
 *
 * Scorers with state of their own ({@code prefix-affinity}, {@code no-hit-lru}) key it by {@link
 * InstanceSnapshot#index()} and update it only when a request is routed, never while scoring.
 */
final class GoScorers {

  private GoScorers() {}

  /** The names, in the order the weighted router adds their scores. */
  static final List<String> NAMES = List.of("prefix-affinity", "precise-prefix-cache", "no-hit-lru",
      "queue-depth-minmax", "load-balance", "active-requests", "running-requests", "load-aware", "vllm-dp");

  /** Blocks per instance in the {@code prefix-affinity} scorer's index (Go BLIS's defaultLRUCapacity). */
  static final int PREFIX_CAPACITY_BLOCKS = 10_000;
  /** Waiting requests at which {@code load-aware} scores 0 (llm-d's QueueThresholdDefault). */
  static final int LOAD_AWARE_THRESHOLD = 128;

  /** One scorer: a score in {@code [0, 1]} per instance, higher preferred. */
  interface Scorer {

    /** Writes each instance's score to {@code out[0..cluster.size())}; changes no state. */
    void score(RequestView request, ClusterView cluster, double[] out);

    /** Called once {@code request} was routed to position {@code choice} of {@code cluster}. */
    default void routed(RequestView request, ClusterView cluster, int choice) {}
  }

  /** The scorer {@code name} (one of {@link #NAMES}); {@code blockSize} is the KV cache's, in tokens. */
  static Scorer create(String name, int blockSize) {
    return switch (name) {
      case "prefix-affinity" -> new PrefixAffinityScorer(blockSize, PREFIX_CAPACITY_BLOCKS);
      case "precise-prefix-cache" -> new MinMax(s -> Math.max(0, s.cachedPrefixTokens()), false);
      case "no-hit-lru" -> new NoHitLru();
      case "queue-depth-minmax" -> new MinMax(InstanceSnapshot::queueDepth, true);
      case "load-balance" -> (request, cluster, out) -> {
        for (int i = 0, n = cluster.size(); i < n; i++) {
          out[i] = 1.0 / (1.0 + Load.of(cluster.get(i)));
        }
      };
      case "active-requests" -> GoScorers::activeRequests;
      case "running-requests" -> new MinMax(InstanceSnapshot::runningBatchSize, true);
      case "load-aware" -> (request, cluster, out) -> {
        for (int i = 0, n = cluster.size(); i < n; i++) {
          int q = cluster.get(i).queueDepth();
          out[i] = q <= 0 ? 0.5 : 0.5 * (1.0 - Math.min(q, LOAD_AWARE_THRESHOLD) / (double) LOAD_AWARE_THRESHOLD);
        }
      };
      case "vllm-dp" -> new MinMax(s -> 4L * s.queueDepth() + s.runningBatchSize(), true);
      default -> throw new IllegalArgumentException("not a Go BLIS scorer: " + name);
    };
  }

  private static void activeRequests(RequestView request, ClusterView cluster, double[] out) {
    int n = cluster.size();
    int max = 0;
    for (int i = 0; i < n; i++) {
      max = Math.max(max, cluster.get(i).inFlight());
    }
    for (int i = 0; i < n; i++) {
      int c = cluster.get(i).inFlight();
      out[i] = c <= 0 || max == 0 ? 1.0 : (double) (max - c) / max;
    }
  }

  /** A figure per instance. */
  private interface Figure {
    long of(InstanceSnapshot s);
  }

  /**
   * Min-max over a figure: {@code (x - min) / (max - min)}, or {@code (max - x) / (max - min)}
   * when lower is better; 1 for all when all are equal.
   */
  private static final class MinMax implements Scorer {
    private final Figure figure;
    private final boolean lowerBetter;
    private long[] raw = new long[16];

    MinMax(Figure figure, boolean lowerBetter) {
      this.figure = figure;
      this.lowerBetter = lowerBetter;
    }

    @Override
    public void score(RequestView request, ClusterView cluster, double[] out) {
      int n = cluster.size();
      if (raw.length < n) {
        raw = new long[n];
      }
      long min = Long.MAX_VALUE;
      long max = Long.MIN_VALUE;
      for (int i = 0; i < n; i++) {
        long x = figure.of(cluster.get(i));
        raw[i] = x;
        min = Math.min(min, x);
        max = Math.max(max, x);
      }
      for (int i = 0; i < n; i++) {
        out[i] = max == min ? 1.0 : (double) (lowerBetter ? max - raw[i] : raw[i] - min) / (max - min);
      }
    }
  }

  /** {@code prefix-affinity}: the share of the prompt's blocks the router's own record matches. */
  private static final class PrefixAffinityScorer implements Scorer {
    private final int blockSize;
    private final PrefixIndex index;

    PrefixAffinityScorer(int blockSize, int capacityBlocks) {
      this.blockSize = blockSize;
      this.index = new PrefixIndex(capacityBlocks);
    }

    @Override
    public void score(RequestView request, ClusterView cluster, double[] out) {
      long[] hashes = request.promptBlockHashes(blockSize);
      for (int i = 0, n = cluster.size(); i < n; i++) {
        out[i] = hashes.length == 0 ? 0.0 : (double) index.matched(hashes, cluster.get(i).index()) / hashes.length;
      }
    }

    @Override
    public void routed(RequestView request, ClusterView cluster, int choice) {
      index.record(request.promptBlockHashes(blockSize), cluster.get(choice).index());
    }
  }

  /** {@code no-hit-lru}: cold requests to the instance that least recently had one. */
  private static final class NoHitLru implements Scorer {
    /** Bits of a packed sort key that hold the position in the view. */
    private static final int POSITION_BITS = 24;
    /** Per instance index: when it last got a cold request (a count of them), 0 for never. */
    private long[] lastCold = new long[16];
    private long colds;
    private long[] order = new long[16];
    private boolean[] present = new boolean[16];

    private static boolean warm(ClusterView cluster) {
      for (int i = 0, n = cluster.size(); i < n; i++) {
        if (cluster.get(i).cachedPrefixTokens() > 0) {
          return true;
        }
      }
      return false;
    }

    private long lastCold(int key) {
      return key < lastCold.length ? lastCold[key] : 0;
    }

    @Override
    public void score(RequestView request, ClusterView cluster, double[] out) {
      int n = cluster.size();
      if (warm(cluster)) {
        Arrays.fill(out, 0, n, 0.5);
        return;
      }
      if (n == 1) {
        out[0] = 1.0;
        return;
      }
      if (n >= 1 << POSITION_BITS) {
        throw new IllegalStateException("no-hit-lru: more than " + ((1 << POSITION_BITS) - 1) + " instances");
      }
      if (order.length < n) {
        order = new long[n];
      }
      int rank = 0;
      int used = 0;
      for (int i = 0; i < n; i++) {
        long t = lastCold(cluster.get(i).index());
        if (t == 0) {
          out[i] = 1.0 - (double) rank++ / (n - 1);
        } else {
          order[used++] = t << POSITION_BITS | i;
        }
      }
      Arrays.sort(order, 0, used); // longest ago first
      for (int k = 0; k < used; k++) {
        out[(int) (order[k] & ((1 << POSITION_BITS) - 1))] = 1.0 - (double) rank++ / (n - 1);
      }
    }

    @Override
    public void routed(RequestView request, ClusterView cluster, int choice) {
      if (warm(cluster)) {
        return;
      }
      int n = cluster.size();
      if (n > 1) { // Go BLIS forgets the instances no longer among the candidates when it ranks them
        if (present.length < lastCold.length) {
          present = new boolean[lastCold.length];
        }
        for (int i = 0; i < n; i++) {
          int key = cluster.get(i).index();
          if (key < lastCold.length) {
            present[key] = true;
          }
        }
        for (int key = 0; key < lastCold.length; key++) {
          if (!present[key]) {
            lastCold[key] = 0;
          }
          present[key] = false;
        }
      }
      int key = cluster.get(choice).index();
      if (key >= lastCold.length) {
        lastCold = Arrays.copyOf(lastCold, Math.max(key + 1, lastCold.length * 2));
      }
      lastCold[key] = ++colds;
    }
  }
}
