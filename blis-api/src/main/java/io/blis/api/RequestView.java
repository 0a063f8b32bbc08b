package io.blis.api;

/**
 * A read-only view of one request inside an engine instance.
 *
 * <p>Views are owned by the engine and may be reused between calls: a plugin must not keep a
 * reference to a view after the call that received it returns. Nothing here can change engine
 * state. The future output length of a request is deliberately not visible (a real server does
 * not know it in advance).
 */
public interface RequestView {

  /** Engine-wide unique id of the request (the workload's request id). */
  long id();

  /** Client-side arrival time in microseconds since the start of the simulation. */
  long arrivalTimeUs();

  /** Number of prompt tokens (the input length the server prefills). */
  int inputTokens();

  /**
   * Progress index: number of tokens (prompt and generated) whose KV entries are computed, i.e.
   * the position of the first token of this step. Prompt tokens served from the prefix cache
   * count as computed.
   */
  int progressIndex();

  /** Tokens scheduled for this request in the current step (0 outside step formation). */
  int newTokens();

  /** Number of output tokens generated so far. */
  int generatedTokens();

  /** Prefill while {@code progressIndex() < inputTokens()}, decode afterwards. */
  Phase phase();

  /**
   * Scheduling priority as vLLM understands it: lower values are more urgent. Derived from the
   * SLO class (critical 0, standard 1, batch 5, sheddable 6, background 7).
   */
  int priority();

  /** SLO class name (for example {@code standard}); never null. */
  String sloClass();

  /** Tenant name; empty when the workload has no tenants. Never null. */
  String tenant();

  /** Number of times this request has been preempted so far. */
  default int preemptions() {
    return 0;
  }

  /**
   * Chained hashes of the prompt's full blocks of {@code blockSizeTokens} tokens, exactly as an
   * instance's prefix cache computes them (so a router can keep its own index of what it sent
   * where). The array is owned by the engine and must not be modified. The default has none.
   */
  default long[] promptBlockHashes(int blockSizeTokens) {
    return new long[0];
  }
}
