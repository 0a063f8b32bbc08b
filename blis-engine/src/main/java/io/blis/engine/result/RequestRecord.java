package io.blis.engine.result;

import io.blis.workload.RequestOutcome;

/**
 * What happened to one request in a simulation. Times are microseconds; latencies are measured
 * from the client's arrival and are -1 when they do not apply (for example the TTFT of a request
 * rejected before its first token).
 *
 * @param id the workload's request id
 * @param stage load stage of the request
 * @param arrivalUs client arrival time
 * @param inputTokens prompt length
 * @param outputTokens output tokens delivered to the client
 * @param outcome how the request ended
 * @param ttftUs time to first token, or -1
 * @param e2eUs time to last token (completed) or to the end (timed out), or -1
 * @param schedulingDelayUs first scheduled minus arrival, or -1
 * @param preemptions times the request was preempted
 * @param cachedPromptTokens prompt tokens served from the prefix cache at (first) admission
 * @param rejectReason why the server or the admission policy rejected it, empty otherwise
 * @param instance index of the instance it was routed to, -1 when it never was
 * @param sloClass the request's SLO class (the workload's; {@code standard} when it gave none)
 */
public record RequestRecord(
    long id,
    int stage,
    long arrivalUs,
    int inputTokens,
    int outputTokens,
    RequestOutcome outcome,
    long ttftUs,
    long e2eUs,
    long schedulingDelayUs,
    int preemptions,
    int cachedPromptTokens,
    String rejectReason,
    int instance,
    String sloClass) {

  /** The SLO class of a request whose workload named none. */
  public static final String DEFAULT_SLO_CLASS = "standard";

  /** A record of a request of the default SLO class. */
  public RequestRecord(long id, int stage, long arrivalUs, int inputTokens, int outputTokens,
      RequestOutcome outcome, long ttftUs, long e2eUs, long schedulingDelayUs, int preemptions,
      int cachedPromptTokens, String rejectReason, int instance) {
    this(id, stage, arrivalUs, inputTokens, outputTokens, outcome, ttftUs, e2eUs,
        schedulingDelayUs, preemptions, cachedPromptTokens, rejectReason, instance, DEFAULT_SLO_CLASS);
  }

  /** A record of a request that was not tracked to an instance (instance -1). */
  public RequestRecord(long id, int stage, long arrivalUs, int inputTokens, int outputTokens,
      RequestOutcome outcome, long ttftUs, long e2eUs, long schedulingDelayUs, int preemptions,
      int cachedPromptTokens, String rejectReason) {
    this(id, stage, arrivalUs, inputTokens, outputTokens, outcome, ttftUs, e2eUs,
        schedulingDelayUs, preemptions, cachedPromptTokens, rejectReason, -1, DEFAULT_SLO_CLASS);
  }
}
