package io.blis.engine;

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
 * @param rejectReason why the server rejected it, empty otherwise
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
    String rejectReason) {}
