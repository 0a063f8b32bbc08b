package io.blis.engine;

/**
 * Engine-wide figures of a whole run: KV cache, preemptions, steps.
 *
 * @param totalBlocks blocks in the GPU pool
 * @param blockSizeTokens tokens per block
 * @param peakUsedBlocks most blocks referenced at once
 * @param tokenHitRate prompt tokens served from the prefix cache over prompt tokens queried, over
 *     every admission (re-admissions after preemption included)
 * @param blockHitRate the same at full-block granularity
 * @param preemptions preemption events (a request preempted twice counts twice)
 * @param steps engine steps executed
 */
public record EngineStats(int totalBlocks, int blockSizeTokens, int peakUsedBlocks,
    double tokenHitRate, double blockHitRate, long preemptions, long steps) {}
