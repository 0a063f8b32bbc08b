package io.blis.engine.metrics;

/**
 * What the metrics read of a request that completed: its lengths and its client-visible times
 * (microseconds since its arrival).
 */
public interface CompletedRequest {

  /** Prompt tokens. */
  int inputTokens();

  /** Output tokens generated. */
  int outputTokens();

  /** Times it was preempted. */
  int preemptions();

  /** Prompt tokens found in the prefix cache at its (first) admission. */
  int cachedPromptTokens();

  /** Arrival to the client's last token. */
  long e2eUs();

  /** Arrival to the client's first token. */
  long ttftUs();

  /** Arrival to the start of the step that first scheduled it. */
  long schedulingDelayUs();

  /** Inter-token intervals recorded (one per token after the first). */
  int itlCount();

  /** The {@code i}-th inter-token interval, microseconds. */
  long itlUs(int i);
}
