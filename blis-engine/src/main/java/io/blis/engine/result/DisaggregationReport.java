package io.blis.engine.result;

import java.util.List;

/**
 * What prefill/decode disaggregation did over a run. The time to first token of a disaggregated
 * request that completed splits into its phases: {@code prefillQueueUs} (arrival to its first
 * prefill step, the admission and routing latencies included), {@code prefillUs} (to the end of
 * its last prefill step), {@code decodeWaitUs} (waiting for a decode instance with room for its
 * KV), {@code transferUs} (its KV moving) and {@code firstDecodeUs} (queued at the decode instance
 * until the client sees the first token).
 *
 * @param decider the decider's name
 * @param transfer the transfer settings, as words
 * @param disaggregated requests whose prefill ended on a prefill instance
 * @param keptWhole requests served on one instance: those the decider kept whole, and those with
 *     no instance to split them onto
 * @param transferred requests whose KV reached a decode instance
 * @param waitedForDecode requests that found no decode instance with room when their prefill ended
 * @param pendingAtEnd disaggregated requests waiting for room or moving when the run ended
 * @param peakConcurrentTransfers most transfers moving bytes at once
 * @param transferredGb KV moved, GB (10^9 bytes)
 * @param pools each pool's role and how busy its instances were
 * @param ttftUs the client's time to first token of the disaggregated requests that completed
 * @param meanConcurrentTransfers transfers moving bytes when one starts, itself included, on
 *     average over the starts
 */
public record DisaggregationReport(String decider, String transfer, long disaggregated, long keptWhole,
    long transferred, long waitedForDecode, long pendingAtEnd, int peakConcurrentTransfers,
    double transferredGb, Distribution prefillQueueUs, Distribution prefillUs, Distribution decodeWaitUs,
    Distribution transferUs, Distribution firstDecodeUs, List<Pool> pools, Distribution ttftUs,
    double meanConcurrentTransfers) {

  /** A report without the whole time to first token and the mean of concurrent transfers. */
  public DisaggregationReport(String decider, String transfer, long disaggregated, long keptWhole,
      long transferred, long waitedForDecode, long pendingAtEnd, int peakConcurrentTransfers,
      double transferredGb, Distribution prefillQueueUs, Distribution prefillUs, Distribution decodeWaitUs,
      Distribution transferUs, Distribution firstDecodeUs, List<Pool> pools) {
    this(decider, transfer, disaggregated, keptWhole, transferred, waitedForDecode, pendingAtEnd,
        peakConcurrentTransfers, transferredGb, prefillQueueUs, prefillUs, decodeWaitUs, transferUs, firstDecodeUs,
        pools, Distribution.EMPTY, 0);
  }

  public DisaggregationReport {
    pools = List.copyOf(pools);
  }

  /**
   * One pool.
   *
   * @param name its name
   * @param role prefill, decode or both
   * @param instances its instances
   * @param utilization the fraction of the run its instances spent in steps (over all of them)
   */
  public record Pool(String name, String role, int instances, double utilization) {}
}
