package io.blis.engine.result;

import java.util.Map;

/**
 * Aggregated results of one load stage, or of the whole run ({@code stage == -1}).
 *
 * <p>Latencies cover COMPLETED requests only (timed-out requests are counted, not included, as in
 * the inference-perf client), all measured from the client's arrival, in microseconds:
 * end-to-end (last token), time to first token, inter-token intervals (every interval of every
 * completed request: a token-weighted pool) and scheduling delay (first scheduled minus arrival).
 * Throughput divides completed requests and their tokens by {@code durationUs}, the span from the
 * first arrival of the scope to the last time a request of the scope ended.
 *
 * @param stage load stage, -1 for the overall summary
 * @param injectedRequests requests that arrived
 * @param completedRequests requests that received all their output tokens
 * @param timedOutRequests requests whose client deadline passed first
 * @param rejectedRequests requests the server refused
 * @param rejectedByReason rejected requests per reason, sorted by reason
 * @param stillQueued requests waiting (or not yet queued) when the simulation ended
 * @param stillRunning requests running when the simulation ended
 * @param inputTokens prompt tokens of the completed requests
 * @param outputTokens output tokens of the completed requests
 * @param durationUs span used for throughput, microseconds
 * @param requestsPerS completed requests per simulated second
 * @param inputTokensPerS completed prompt tokens per simulated second
 * @param outputTokensPerS completed output tokens per simulated second
 * @param e2e end-to-end latency
 * @param ttft time to first token
 * @param itl inter-token intervals
 * @param schedulingDelay first scheduled minus arrival
 * @param preemptions preemptions suffered by the completed requests
 * @param kvHitRate prompt tokens served from the prefix cache at first admission over prompt
 *     tokens, over the completed requests
 * @param goodRequests completed requests that met their SLO class's targets (every completed
 *     request when its class has none)
 * @param goodputPerS {@code goodRequests} per simulated second of {@code durationUs}
 */
public record MetricsSummary(
    int stage,
    long injectedRequests,
    long completedRequests,
    long timedOutRequests,
    long rejectedRequests,
    Map<String, Long> rejectedByReason,
    long stillQueued,
    long stillRunning,
    long inputTokens,
    long outputTokens,
    long durationUs,
    double requestsPerS,
    double inputTokensPerS,
    double outputTokensPerS,
    Distribution e2e,
    Distribution ttft,
    Distribution itl,
    Distribution schedulingDelay,
    long preemptions,
    double kvHitRate,
    long goodRequests,
    double goodputPerS) {

  public MetricsSummary {
    rejectedByReason = Map.copyOf(rejectedByReason);
  }
}
