package io.blis.engine.disagg;

import io.blis.api.Router;
import java.util.Map;
import java.util.Objects;

/**
 * Prefill/decode disaggregation of a cluster of pools: each pool's {@link Role}, the {@link
 * Decider}, the routers of the two phases, and how KV moves between instances.
 *
 * <p>A disaggregated request is routed (by {@code prefillRouter}) to an instance that prefills:
 * it computes the whole prompt there, as vLLM's prefill instance does with one output token,
 * which the client never sees. Its KV stays on the prefill instance until it has moved. A decode
 * instance is then chosen by {@code decodeRouter} among those that decode, and reserves blocks
 * for the prompt (those of the prompt it already caches need not move); if none has room, the
 * request waits, first come first served. The KV of the remaining prompt tokens (all but the
 * last, which the decode instance recomputes to produce the first token, as vLLM's connectors
 * do) moves over the link between the two instances. The decode instance then queues the
 * request, computes its last prompt token, and emits every output token the client sees. A
 * request the decider keeps whole is routed by {@code decodeRouter} among the instances that
 * decode.
 *
 * @param decider decides per request
 * @param prefixThreshold uncached prompt tokens above which {@link Decider#PREFIX_THRESHOLD}
 *     disaggregates
 * @param roles role of each pool by name; a pool not named here is {@link Role#BOTH}
 * @param pools how each pool's instances hold and move KV, by pool name (every pool)
 * @param transfer the transfer's latency and, when set, a bandwidth that replaces the links'
 * @param prefillRouter routes disaggregated requests among the instances that prefill
 * @param decodeRouter routes requests kept whole, and chooses the decode instance of the others
 */
public record Disaggregation(Decider decider, int prefixThreshold, Map<String, Role> roles,
    Map<String, PoolKv> pools, Transfer transfer, Router prefillRouter, Router decodeRouter) {

  public Disaggregation {
    Objects.requireNonNull(decider, "decider");
    Objects.requireNonNull(transfer, "transfer");
    Objects.requireNonNull(prefillRouter, "prefillRouter");
    Objects.requireNonNull(decodeRouter, "decodeRouter");
    roles = Map.copyOf(roles);
    pools = Map.copyOf(pools);
    if (prefixThreshold < 0) {
      throw new IllegalArgumentException("PD prefix threshold must be >= 0, got " + prefixThreshold);
    }
    if (prefillRouter == decodeRouter) {
      throw new IllegalArgumentException("the prefill and decode phases need routers of their own (each keeps"
          + " its own state over its own instances)");
    }
  }

  /** The role of pool {@code pool}. */
  public Role role(String pool) {
    return roles.getOrDefault(pool, Role.BOTH);
  }

  /**
   * How one pool's instances hold and move KV.
   *
   * @param gpusPerInstance GPUs of one instance (its tensor-parallel degree)
   * @param kvBytesPerTokenPerGpu KV bytes of one token on one of its GPUs (a shard of the heads;
   *     the whole latent under MLA)
   * @param kvBytesPerToken KV bytes of one token over the whole model
   * @param gpu the GPU type: instances of different types never share a node
   * @param gpusPerNode GPUs of one node
   * @param nvlinkBytesPerS per-GPU bandwidth within a node, bytes/s
   * @param nicBytesPerS per-GPU bandwidth between nodes, bytes/s
   * @param nvlinkLatencyUs latency of a transfer within a node, microseconds
   * @param nicLatencyUs latency of a transfer between nodes, microseconds
   */
  public record PoolKv(int gpusPerInstance, long kvBytesPerTokenPerGpu, long kvBytesPerToken,
      String gpu, int gpusPerNode, double nvlinkBytesPerS, double nicBytesPerS, long nvlinkLatencyUs,
      long nicLatencyUs) {

    public PoolKv {
      Objects.requireNonNull(gpu, "gpu");
      if (gpusPerInstance < 1 || gpusPerNode < 1 || kvBytesPerTokenPerGpu < 1 || kvBytesPerToken < 1
          || !(nvlinkBytesPerS > 0) || !(nicBytesPerS > 0) || nvlinkLatencyUs < 0 || nicLatencyUs < 0) {
        throw new IllegalArgumentException("pool KV: GPUs, KV bytes and bandwidths must be positive, latencies >= 0");
      }
    }
  }

  /**
   * The transfer settings.
   *
   * @param bandwidthGBps when not null, every transfer's bandwidth in GB/s over the whole KV (Go
   *     BLIS's {@code --pd-transfer-bandwidth}), in place of the links between the instances
   * @param baseLatencyUs fixed cost of every transfer (connector handshake), microseconds
   * @param contention with a fixed bandwidth, whether concurrent transfers share it (Go BLIS's
   *     {@code --pd-transfer-contention}); over the links they always share each instance's link
   */
  public record Transfer(Double bandwidthGBps, long baseLatencyUs, boolean contention) {

    /** Go BLIS's and NIXL's default per-transfer latency: 0.05 ms. */
    public static final long DEFAULT_BASE_LATENCY_US = 50;

    /**
     * Lowest fixed bandwidth: 0.01 GB/s (10 MB/s), below any link between GPU servers; a slower one
     * would take hours to move one prompt's KV.
     */
    public static final double MIN_BANDWIDTH_GBPS = 0.01;
    /** Fixed bandwidths are below this: 1e6 GB/s (1 PB/s), far above any link. */
    public static final double MAX_BANDWIDTH_GBPS = 1e6;
    /** The range of a fixed bandwidth, as messages give it. */
    public static final String BANDWIDTH_RANGE = "[0.01, 1e6) GB/s (from 10 MB/s, slower than any link between GPU"
        + " servers, to 1 PB/s)";

    public Transfer {
      if (bandwidthGBps != null && !(bandwidthGBps >= MIN_BANDWIDTH_GBPS && bandwidthGBps < MAX_BANDWIDTH_GBPS)) {
        throw new IllegalArgumentException("PD transfer bandwidth must be in " + BANDWIDTH_RANGE + ", got "
            + bandwidthGBps);
      }
      if (baseLatencyUs < 0 || baseLatencyUs > 3_600_000_000L) {
        throw new IllegalArgumentException("PD transfer base latency must be in [0, 1 hour], got "
            + baseLatencyUs + " us");
      }
    }

    /** Over the links between instances, with the default base latency. */
    public static Transfer links() {
      return new Transfer(null, DEFAULT_BASE_LATENCY_US, true);
    }

    /** What the result says of these settings. */
    public String describe() {
      String latency = "base latency " + baseLatencyUs + " us";
      return bandwidthGBps == null ? "links (NVLink within a node, NIC between nodes), shared, " + latency
          : bandwidthGBps + " GB/s" + (contention ? " shared" : " per transfer") + ", " + latency;
    }
  }
}
