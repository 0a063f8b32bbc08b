package io.blis.cli.serve;

/**
 * What the simulated engine did with one request that ended, for vLLM's per-request metrics.
 * Times are simulated engine microseconds, -1 when the request never got there (an abort).
 *
 * @param engine the instance that served it (vLLM's {@code engine} label), 0 when none did
 * @param finishReason vLLM's {@code finished_reason}: {@code stop}, {@code length} or {@code abort}
 * @param promptTokens its prompt length
 * @param generationTokens output tokens it generated
 * @param maxTokens its {@code max_tokens} (resolved: vLLM's default when the client gave none)
 * @param queuedUs when it first joined a waiting queue (vLLM's {@code queued_ts})
 * @param scheduledUs when it was first scheduled (vLLM's {@code scheduled_ts})
 * @param firstTokenUs when the engine emitted its first token ({@code first_token_ts})
 * @param lastTokenUs when the engine emitted its last token ({@code last_token_ts})
 */
record RequestStats(int engine, String finishReason, int promptTokens, int generationTokens,
    int maxTokens, long queuedUs, long scheduledUs, long firstTokenUs, long lastTokenUs) {

  static final String STOP = "stop";
  static final String LENGTH = "length";
  static final String ABORT = "abort";
}
