package io.blis.cli.observe;

import io.blis.workload.trace.TraceV2Writer;

/**
 * The server's KV-cache hit rate over a measured window, from two scrapes of its Prometheus
 * metrics (Go BLIS's {@code observe --scrape-kv-metrics}, written to the TraceV2 header's {@code
 * observed_kv_metrics} for {@code blis calibrate}). The counters, first found first used: vLLM's
 * tiered offload family ({@code vllm:kv_offload_tiering_block_hits/_queries}, source {@code
 * tiered}), the GPU prefix cache's of older vLLM ({@code vllm:gpu_prefix_cache_hits/_queries},
 * {@code gpu-prefix-cache-fallback}), vLLM v1's ({@code vllm:prefix_cache_hits/_queries}, in
 * tokens, {@code prefix-cache}; Go BLIS does not read these), and last the end scrape's {@code
 * vllm:gpu_prefix_cache_hit_rate} gauge. A counter's {@code _total} series and every label series
 * count toward it.
 */
public final class ObservedKvRate {

  private ObservedKvRate() {}

  private static final String[][] COUNTERS = {
      {"tiered", "vllm:kv_offload_tiering_block_hits", "vllm:kv_offload_tiering_block_queries"},
      {"gpu-prefix-cache-fallback", "vllm:gpu_prefix_cache_hits", "vllm:gpu_prefix_cache_queries"},
      {"prefix-cache", "vllm:prefix_cache_hits", "vllm:prefix_cache_queries"}};

  /** The sum of a counter's series, {@code _total} ones included; NaN when there is none. */
  static double counter(PrometheusText.Scrape s, String name) {
    double a = s.sum(name);
    double b = s.sum(name + "_total");
    return Double.isNaN(a) ? b : Double.isNaN(b) ? a : a + b;
  }

  /**
   * The hit rate from {@code start} to {@code end}.
   *
   * @throws IllegalArgumentException saying why there is none: no such counters, no query in the
   *     window, or more hits than queries
   */
  public static TraceV2Writer.ObservedKv of(PrometheusText.Scrape start, PrometheusText.Scrape end, String vllmCommit) {
    for (String[] c : COUNTERS) {
      double q1 = counter(end, c[2]);
      if (Double.isNaN(q1)) {
        continue;
      }
      double q0 = counter(start, c[2]);
      double h0 = counter(start, c[1]);
      double h1 = counter(end, c[1]);
      double queries = q1 - (Double.isNaN(q0) ? 0 : q0);
      double hits = (Double.isNaN(h1) ? 0 : h1) - (Double.isNaN(h0) ? 0 : h0);
      if (!(queries > 0)) {
        throw new IllegalArgumentException(c[2] + " did not grow over the measured window (" + queries
            + "): no hit rate to record");
      }
      if (hits < 0 || hits > queries) {
        throw new IllegalArgumentException(c[1] + " grew by " + hits + " over " + queries + " queries: not a hit"
            + " rate (a counter reset?)");
      }
      return new TraceV2Writer.ObservedKv(c[0], hits / queries, Math.round(hits), Math.round(queries), vllmCommit);
    }
    double gauge = end.mean("vllm:gpu_prefix_cache_hit_rate");
    if (gauge >= 0 && gauge <= 1) {
      return new TraceV2Writer.ObservedKv("gpu-prefix-cache-fallback", gauge, 0, 0, vllmCommit);
    }
    throw new IllegalArgumentException("the server's metrics have no prefix-cache counters"
        + " (vllm:prefix_cache_queries, vllm:gpu_prefix_cache_queries or vllm:kv_offload_tiering_block_queries)");
  }
}
