package io.blis.engine.result;

/**
 * Multi-turn sessions over a run (requests carrying a session id): how many, the TTFT of their
 * first rounds (no context of their own cached yet) and of their later rounds (their earlier
 * rounds' context may be cached), and how long a session lasted.
 *
 * @param sessions distinct sessions with at least one request that arrived
 * @param ttftCold TTFT of the round-0 requests that got a first token
 * @param ttftWarm TTFT of the requests of later rounds that got a first token
 * @param duration per session with its round 0 and a completed request: from round 0's arrival to
 *     the last completion of any of its requests
 */
public record SessionReport(long sessions, Distribution ttftCold, Distribution ttftWarm, Distribution duration) {}
