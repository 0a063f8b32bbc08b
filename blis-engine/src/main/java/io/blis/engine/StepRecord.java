package io.blis.engine;

/**
 * One completed engine step, as a step trace reports it ({@code step.BATCH_SUMMARY}), with the
 * per-request state of the batch at the start of the step ({@code step.REQUEST_SNAPSHOT}).
 *
 * @param stepId the instance's step counter, from 1
 * @param startUs when the step started
 * @param durationUs how long it ran
 * @param prefillRequests requests in prefill in the batch
 * @param decodeRequests requests in decode in the batch
 * @param prefillTokens tokens scheduled for prefill
 * @param decodeTokens tokens scheduled for decode
 * @param runningDepth requests in the running list when the step started
 * @param waitingDepth requests waiting when the step started
 * @param kvBlocksTotal GPU KV blocks
 * @param kvBlocksFree free GPU KV blocks when the step started
 * @param finished requests that completed at the end of this step
 * @param preempted requests preempted while this step was formed
 * @param requests the batch, one entry per request, in batch order
 */
public record StepRecord(long stepId, long startUs, long durationUs, int prefillRequests,
    int decodeRequests, long prefillTokens, long decodeTokens, int runningDepth, int waitingDepth,
    long kvBlocksTotal, long kvBlocksFree, int finished, int preempted,
    java.util.List<RequestState> requests) {

  /**
   * One request of a step's batch.
   *
   * @param requestId the request
   * @param prefill whether it was in prefill
   * @param promptTokens its prompt length
   * @param computedTokens tokens whose KV was computed before the step (prefix-cache hits count)
   * @param outputTokens output tokens generated before the step
   * @param preemptions times it had been preempted
   * @param scheduledTokens tokens scheduled for it in this step
   * @param blocksAllocated GPU KV blocks it held
   * @param cachedBlocks prompt blocks served from the prefix cache at its admission
   * @param cachedPromptTokens prompt tokens served from the prefix cache at its admission
   */
  public record RequestState(long requestId, boolean prefill, int promptTokens, int computedTokens,
      int outputTokens, int preemptions, int scheduledTokens, int blocksAllocated,
      int cachedBlocks, int cachedPromptTokens) {}

  public StepRecord {
    requests = java.util.List.copyOf(requests);
  }

  /** The step's end. */
  public long endUs() {
    return startUs + durationUs;
  }
}
