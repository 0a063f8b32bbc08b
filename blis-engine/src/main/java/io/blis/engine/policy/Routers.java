package io.blis.engine.policy;

import io.blis.api.ProviderContext;
import io.blis.api.Router;
import io.blis.api.RouterProvider;
import java.util.Map;

/** The built-in routers, also available by name through their {@code RouterProvider}s. */
public final class Routers {

  private Routers() {}

  /** {@code round-robin}: the k-th request goes to instance k mod n. */
  public static Router roundRobin() {
    return new RoundRobin();
  }

  /** {@code least-loaded}: smallest waiting + running + in flight, ties to the lowest index. */
  public static Router leastLoaded() {
    return new LeastLoaded(false);
  }

  /** {@code always-busiest} (pathological): the largest waiting + running + in flight. */
  public static Router alwaysBusiest() {
    return new LeastLoaded(true);
  }

  /**
   * {@code weighted}: scorers ({@code prefix-cache}, {@code load}, {@code queue-depth}, {@code
   * kv-utilization}, {@code in-flight}, {@code lora-affinity}, and Go BLIS's {@code prefix-affinity},
   * {@code precise-prefix-cache}, {@code no-hit-lru}, {@code queue-depth-minmax}, {@code
   * load-balance}, {@code active-requests}, {@code running-requests}, {@code load-aware}, {@code
   * vllm-dp}) with weights, normalized to sum 1; argmax, ties to the lowest index; load scores halve
   * at {@value Weighted#DEFAULT_HALF_LOAD} requests; {@code prefix-affinity} hashes blocks of
   * {@value Weighted#DEFAULT_BLOCK_SIZE} tokens.
   */
  public static Router weighted(Map<String, Double> scorerWeights) {
    return new Weighted(scorerWeights, Weighted.DEFAULT_HALF_LOAD);
  }

  /** As {@link #weighted(Map)}, a load of {@code halfLoad} requests scoring 1/2. */
  public static Router weighted(Map<String, Double> scorerWeights, int halfLoad) {
    return new Weighted(scorerWeights, halfLoad);
  }

  /**
   * As {@link #weighted(Map, int)}, the {@code prefix-affinity} scorer hashing blocks of {@code
   * blockSize} tokens (the KV cache's, as Go BLIS's does).
   */
  public static Router weighted(Map<String, Double> scorerWeights, int halfLoad, int blockSize) {
    return new Weighted(scorerWeights, halfLoad, blockSize);
  }

  /**
   * {@code prefix-affinity}: router-side LRU index of the prompt blocks sent to each instance
   * ({@code capacityBlocks} per instance, blocks of {@code blockSize} tokens); longest match of
   * at least {@code minBlocks} wins, else least-loaded.
   */
  public static Router prefixAffinity(int blockSize, int capacityBlocks, int minBlocks) {
    if (blockSize < 1 || capacityBlocks < 1 || minBlocks < 1) {
      throw new IllegalArgumentException("prefix-affinity: block size, capacity and minimum match"
          + " must be at least 1, got " + blockSize + ", " + capacityBlocks + ", " + minBlocks);
    }
    return new PrefixAffinity(blockSize, capacityBlocks, minBlocks);
  }

  /** Provides {@code round-robin}. */
  public static final class RoundRobinProvider implements RouterProvider {
    @Override
    public String name() {
      return "round-robin";
    }

    @Override
    public String description() {
      return "the k-th request goes to instance k mod n";
    }

    @Override
    public Router create(ProviderContext context) {
      Params.of(name(), context.options());
      return roundRobin();
    }
  }

  /** Provides {@code least-loaded}. */
  public static final class LeastLoadedProvider implements RouterProvider {
    @Override
    public String name() {
      return "least-loaded";
    }

    @Override
    public String description() {
      return "smallest waiting + running + in-flight count, ties to the lowest index";
    }

    @Override
    public Router create(ProviderContext context) {
      Params.of(name(), context.options());
      return leastLoaded();
    }
  }

  /** Provides {@code always-busiest}. */
  public static final class AlwaysBusiestProvider implements RouterProvider {
    @Override
    public String name() {
      return "always-busiest";
    }

    @Override
    public String description() {
      return "pathological: the instance with the most waiting + running + in-flight requests";
    }

    @Override
    public Router create(ProviderContext context) {
      Params.of(name(), context.options());
      return alwaysBusiest();
    }
  }

  /** The weighted router's scorers when none are given: {@value Weighted#DEFAULT_SCORERS}. */
  public static final String DEFAULT_WEIGHTED_SCORERS = Weighted.DEFAULT_SCORERS;

  /**
   * Provides {@code weighted}; parameters {@code scorers} ({@value Weighted#DEFAULT_SCORERS}) and
   * {@code half_load} (an eighth of the deployment's {@code max_num_seqs}); the {@code
   * prefix-affinity} scorer hashes blocks of the deployment's KV block size.
   */
  public static final class WeightedProvider implements RouterProvider {
    @Override
    public String name() {
      return "weighted";
    }

    @Override
    public String description() {
      return "weighted scorers (prefix-cache, load, queue-depth, kv-utilization, in-flight, lora-affinity; Go BLIS's"
          + " prefix-affinity, precise-prefix-cache, no-hit-lru, queue-depth-minmax, load-balance, active-requests,"
          + " running-requests, load-aware, vllm-dp), highest total";
    }

    @Override
    public Router create(ProviderContext context) {
      Params p = Params.of(name(), context.options(), "scorers", "half_load");
      int seqs = context.deployment() == null ? 0 : context.deployment().maxNumSeqs();
      int block = context.deployment() == null || context.deployment().blockSizeTokens() < 1
          ? Weighted.DEFAULT_BLOCK_SIZE : context.deployment().blockSizeTokens();
      return weighted(Weighted.parseScorers(p.string("scorers", Weighted.DEFAULT_SCORERS)),
          p.integer("half_load", Weighted.halfLoad(seqs), 1), block);
    }
  }

  /**
   * Provides {@code prefix-affinity}; parameters block_size (64 tokens: the router indexes
   * coarser blocks than the KV cache, as gateway prefix scorers do, so a route records 16 hashes
   * of a 1,024-token prompt, not 64), capacity_blocks (10000 per instance), min_blocks (1).
   */
  public static final class PrefixAffinityProvider implements RouterProvider {
    @Override
    public String name() {
      return "prefix-affinity";
    }

    @Override
    public String description() {
      return "longest prefix match in a router-side index of the blocks sent to each instance, else least-loaded";
    }

    @Override
    public Router create(ProviderContext context) {
      Params p = Params.of(name(), context.options(), "block_size", "capacity_blocks", "min_blocks");
      return prefixAffinity(p.integer("block_size", 64, 1), p.integer("capacity_blocks", 10_000, 1),
          p.integer("min_blocks", 1, 1));
    }
  }
}
