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

  /** {@return the engine-wide unique id of the request (the workload's request id)} */
  long id();

  /** {@return the client-side arrival time in microseconds since the start of the simulation} */
  long arrivalTimeUs();

  /** {@return the number of prompt tokens (the input length the server prefills)} */
  int inputTokens();

  /**
   * Progress index: number of tokens (prompt and generated) whose KV entries are computed, i.e.
   * the position of the first token of this step. Prompt tokens served from the prefix cache
   * count as computed. A preemption resets it to 0.
   *
   * @return the number of tokens whose KV entries are computed
   */
  int progressIndex();

  /**
   * {@return the tokens scheduled for this request in the current step} 0 for a request outside
   * the batch being formed or run.
   */
  int newTokens();

  /** {@return the number of output tokens generated so far} A preemption keeps them. */
  int generatedTokens();

  /**
   * {@return the request's phase} {@link Phase#PREFILL} while it is not running or its prompt
   * (after a preemption, its prompt and the tokens it had generated) is not fully computed; {@link
   * Phase#DECODE} afterwards.
   */
  Phase phase();

  /**
   * Scheduling priority as vLLM understands it: lower values are more urgent. Until the request
   * joins a waiting queue, its SLO class's priority (critical 0, standard 1, batch 5, sheddable 6,
   * background 7); from then on, as the cluster's {@link PriorityPolicy} last set it.
   *
   * @return the priority, lower more urgent
   */
  int priority();

  /** {@return the SLO class name (for example {@code standard}); never null} */
  String sloClass();

  /** {@return the tenant name; empty when the workload has no tenants} Never null. */
  String tenant();

  /** {@return the number of times this request has been preempted so far} 0 by default. */
  default int preemptions() {
    return 0;
  }

  /**
   * Chained hashes of the prompt's full blocks of {@code blockSizeTokens} tokens, exactly as an
   * instance's prefix cache computes them (so a router can keep its own index of what it sent
   * where). The array is owned by the engine and must not be modified. The default has none.
   *
   * @param blockSizeTokens tokens per block, for example {@link DeploymentSpec#blockSizeTokens()}
   * @return one hash per full block of the prompt, in prompt order (a partial last block has none)
   */
  default long[] promptBlockHashes(int blockSizeTokens) {
    return new long[0];
  }

  /**
   * {@return the LoRA adapter the request names, as vLLM serves it under a model name of its own;
   * empty for the base model} Never null. Empty by default.
   */
  default String adapter() {
    return "";
  }
}
