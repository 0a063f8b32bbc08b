package io.blis.engine.result;

/**
 * What one instance of a cluster did.
 *
 * @param index instance index, from 0
 * @param pool the pool it belongs to (empty for a single-pool cluster)
 * @param metrics the requests routed to it (injected = routed; no inter-token samples)
 * @param steps engine steps it executed
 * @param preemptions preemption events on it
 * @param totalKvBlocks its GPU KV blocks
 * @param peakUsedKvBlocks the most blocks it referenced at once
 * @param kvTokenHitRate prompt tokens served from its prefix cache over prompt tokens queried
 * @param priorityInversions admissions that overtook a more urgent SLO class waiting longer
 */
public record InstanceResult(int index, String pool, MetricsSummary metrics, long steps,
    long preemptions, long totalKvBlocks, long peakUsedKvBlocks, double kvTokenHitRate,
    long priorityInversions) {}
