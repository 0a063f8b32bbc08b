package io.blis.engine.result;

/**
 * Engine-wide figures of a whole run: KV cache, preemptions, steps.
 *
 * @param instances serving instances
 * @param totalBlocks blocks in the GPU pools of all instances
 * @param blockSizeTokens tokens per block
 * @param peakUsedBlocks sum over instances of the most blocks each referenced at once
 * @param tokenHitRate prompt tokens served from the prefix cache over prompt tokens queried, over
 *     every admission (re-admissions after preemption included)
 * @param blockHitRate the same at full-block granularity
 * @param cpuTierBlocks block slots of the CPU KV tiers, 0 without one
 * @param cpuLoadedBlocks blocks reloaded from the CPU tier instead of recomputed
 * @param preemptions preemption events (a request preempted twice counts twice)
 * @param steps engine steps executed
 * @param secondaryTiers secondary offload tiers behind each CPU tier, 0 without
 * @param secondaryReadBlocks blocks read from the secondary tiers into the CPU tiers
 * @param secondaryWrittenBlocks block copies written to the secondary tiers
 * @param refusedSecondaryReads reads from the secondary tiers refused for want of CPU room (recomputed)
 * @param skippedCpuStores computed blocks not stored in a CPU tier whose every slot was held by a transfer
 */
public record EngineStats(int instances, long totalBlocks, int blockSizeTokens,
    long peakUsedBlocks, double tokenHitRate, double blockHitRate, long cpuTierBlocks,
    long cpuLoadedBlocks,
    long preemptions, long steps, int secondaryTiers, long secondaryReadBlocks, long secondaryWrittenBlocks,
    long refusedSecondaryReads, long skippedCpuStores) {

  /** Figures of a run without secondary offload tiers. */
  public EngineStats(int instances, long totalBlocks, int blockSizeTokens,
      long peakUsedBlocks, double tokenHitRate, double blockHitRate, long cpuTierBlocks,
      long cpuLoadedBlocks, long preemptions, long steps) {
    this(instances, totalBlocks, blockSizeTokens, peakUsedBlocks, tokenHitRate, blockHitRate, cpuTierBlocks,
        cpuLoadedBlocks, preemptions, steps, 0, 0, 0, 0, 0);
  }
}
