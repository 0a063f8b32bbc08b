package io.blis.engine;

/**
 * vLLM server limits of one instance.
 *
 * @param maxNumSeqs maximum requests in the running batch (vLLM {@code --max-num-seqs})
 * @param maxNumBatchedTokens token budget of one step ({@code --max-num-batched-tokens})
 * @param longPrefillTokenThreshold cap on the prefill chunk of one request per step, 0 = none
 * @param maxModelLen maximum prompt plus output length, 0 = unlimited
 * @param asyncScheduling vLLM's async scheduling: the batch of step k+1 is formed while step k
 *     runs, so a request that joins the waiting queue after step k started can be admitted no
 *     earlier than step k+2 (continuing requests are unaffected). On by default, as in vLLM 0.15.
 */
public record EngineLimits(
    int maxNumSeqs,
    int maxNumBatchedTokens,
    int longPrefillTokenThreshold,
    int maxModelLen,
    boolean asyncScheduling) {

  /** Limits with async scheduling on (vLLM's default). */
  public EngineLimits(
      int maxNumSeqs, int maxNumBatchedTokens, int longPrefillTokenThreshold, int maxModelLen) {
    this(maxNumSeqs, maxNumBatchedTokens, longPrefillTokenThreshold, maxModelLen, true);
  }

  /** A copy with async scheduling switched on or off. */
  public EngineLimits withAsyncScheduling(boolean on) {
    return new EngineLimits(maxNumSeqs, maxNumBatchedTokens, longPrefillTokenThreshold, maxModelLen, on);
  }

  public EngineLimits {
    if (maxNumSeqs < 1) {
      throw new IllegalArgumentException("max-num-seqs must be at least 1, got " + maxNumSeqs);
    }
    if (maxNumBatchedTokens < 1) {
      throw new IllegalArgumentException(
          "max-num-batched-tokens must be at least 1, got " + maxNumBatchedTokens);
    }
    if (longPrefillTokenThreshold < 0) {
      throw new IllegalArgumentException(
          "long-prefill-token-threshold must be >= 0, got " + longPrefillTokenThreshold);
    }
    if (maxModelLen < 0) {
      throw new IllegalArgumentException("max-model-len must be >= 0, got " + maxModelLen);
    }
  }

  /**
   * vLLM's defaults: 256 sequences, 2048 tokens per step, no threshold, unlimited length, async
   * scheduling.
   */
  public static EngineLimits defaults() {
    return new EngineLimits(256, 2048, 0, 0);
  }
}
