package io.blis.latency.fit;

import java.util.List;

/**
 * One engine step as a vLLM step trace recorded it ({@code step.BATCH_SUMMARY}), with the batch
 * it ran when request snapshots were traced ({@code step.REQUEST_SNAPSHOT}, empty otherwise).
 *
 * @param instance the server ({@code service.instance.id}, empty when absent)
 * @param stepId the scheduler's step counter
 * @param startNs step start, nanoseconds
 * @param endNs step end, nanoseconds
 * @param durationUs step duration, microseconds
 * @param prefillRequests requests in prefill
 * @param decodeRequests requests in decode
 * @param prefillTokens tokens scheduled for prefill
 * @param decodeTokens tokens scheduled for decode
 * @param runningDepth running requests
 * @param waitingDepth waiting requests
 * @param kvBlocksTotal GPU KV blocks
 * @param kvBlocksFree free GPU KV blocks
 * @param finished requests finished by the step
 * @param preempted requests preempted in the step
 * @param requests the batch, in trace order (empty without snapshots)
 */
public record TracedStep(String instance, long stepId, long startNs, long endNs, long durationUs,
    int prefillRequests, int decodeRequests, long prefillTokens, long decodeTokens,
    int runningDepth, int waitingDepth, long kvBlocksTotal, long kvBlocksFree, int finished,
    int preempted, List<Request> requests) {

  public TracedStep {
    requests = List.copyOf(requests);
  }

  /**
   * One request of the batch.
   *
   * @param requestId the request
   * @param prefill whether it was in prefill
   * @param promptTokens prompt length
   * @param computedTokens tokens whose KV was computed before the step (context length)
   * @param outputTokens output tokens generated before the step
   * @param preemptions times it had been preempted
   * @param scheduledTokens tokens scheduled for it in the step
   * @param blocksAllocated GPU KV blocks it held
   * @param cachedBlocks prompt blocks served from the prefix cache
   */
  public record Request(String requestId, boolean prefill, int promptTokens, int computedTokens,
      int outputTokens, int preemptions, int scheduledTokens, int blocksAllocated,
      int cachedBlocks) {}
}
