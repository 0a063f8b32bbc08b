package io.blis.engine.cluster;

/**
 * Prefill/decode disaggregation as a policy bundle's {@code disaggregation:} section or the
 * command line's {@code --pd-*} flags give it; null fields are not set (defaults: decider {@code
 * never}, threshold 16, the links between instances, base latency 0.05 ms, no contention with a
 * fixed bandwidth, the cluster's router for both phases). See {@link
 * io.blis.engine.disagg.Disaggregation}.
 *
 * @param decider never, always or prefix-threshold
 * @param prefixThreshold uncached prompt tokens above which prefix-threshold disaggregates
 * @param transferBandwidthGBps a fixed transfer bandwidth, GB/s, in place of the links
 * @param transferBaseLatencyUs fixed cost of every transfer, microseconds
 * @param transferContention with a fixed bandwidth, whether concurrent transfers share it
 * @param prefillRouter the router of disaggregated requests among the instances that prefill
 * @param decodeRouter the router among the instances that decode
 */
public record PdSpec(String decider, Integer prefixThreshold, Double transferBandwidthGBps,
    Long transferBaseLatencyUs, Boolean transferContention, PolicySpec prefillRouter,
    PolicySpec decodeRouter) {

  public PdSpec {
    if (decider != null) {
      io.blis.engine.disagg.Decider.parse(decider);
    }
    if (prefixThreshold != null && prefixThreshold < 0) {
      throw new IllegalArgumentException("prefix_threshold must be >= 0, got " + prefixThreshold);
    }
    new io.blis.engine.disagg.Disaggregation.Transfer(transferBandwidthGBps,
        transferBaseLatencyUs == null ? 0 : transferBaseLatencyUs, false); // checks the ranges
  }

  /** Nothing set. */
  public static PdSpec none() {
    return new PdSpec(null, null, null, null, null, null, null);
  }

  /** {@code this}'s fields where set, else {@code other}'s. */
  public PdSpec over(PdSpec other) {
    return new PdSpec(first(decider, other.decider), first(prefixThreshold, other.prefixThreshold),
        first(transferBandwidthGBps, other.transferBandwidthGBps),
        first(transferBaseLatencyUs, other.transferBaseLatencyUs),
        first(transferContention, other.transferContention), first(prefillRouter, other.prefillRouter),
        first(decodeRouter, other.decodeRouter));
  }

  private static <T> T first(T a, T b) {
    return a != null ? a : b;
  }
}
