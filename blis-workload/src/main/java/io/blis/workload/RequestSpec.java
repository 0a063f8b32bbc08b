package io.blis.workload;

import java.util.Arrays;
import java.util.Objects;

/**
 * One request as a client sends it: what the engine needs to serve it and what the metrics need
 * to classify it. Immutable apart from the token array, which callers must not modify.
 *
 * @param id unique id within a workload (send order for generated and replayed workloads)
 * @param arrivalTimeUs client send time, microseconds since the start of the simulation
 * @param promptTokens prompt token ids; its length is the input length. Identical ids at the same
 *     positions mean shared content, which is what prefix caching detects
 * @param outputTokens exact number of tokens the server generates (ignore-EOS semantics), at least
 *     1
 * @param sloClass SLO class name (critical, standard, batch, sheddable, background); never null
 * @param tenant tenant name, empty when unused; never null
 * @param prefixGroup name of the shared-prefix group, empty when none; never null
 * @param prefixLength tokens of the shared prefix at the start of the prompt (0 when none)
 * @param sessionId session id for multi-turn workloads, -1 when the request is not in a session
 * @param round round index within the session (0 for the first round or no session)
 * @param timeoutUs client timeout measured from arrival; 0 means no timeout
 * @param stage load stage the request belongs to (0 for single-stage workloads)
 * @param model the model the request names (the OpenAI API's {@code model}), empty when it names
 *     none (any instance serves it); never null
 * @param adapter the LoRA adapter the request names (vLLM serves each under a model name of its
 *     own), empty for the base model; never null
 */
public record RequestSpec(
    long id,
    long arrivalTimeUs,
    int[] promptTokens,
    int outputTokens,
    String sloClass,
    String tenant,
    String prefixGroup,
    int prefixLength,
    long sessionId,
    int round,
    long timeoutUs,
    int stage,
    String model,
    String adapter) {

  /** A request that names no model. */
  public RequestSpec(long id, long arrivalTimeUs, int[] promptTokens, int outputTokens, String sloClass,
      String tenant, String prefixGroup, int prefixLength, long sessionId, int round, long timeoutUs, int stage) {
    this(id, arrivalTimeUs, promptTokens, outputTokens, sloClass, tenant, prefixGroup, prefixLength, sessionId,
        round, timeoutUs, stage, "");
  }

  /** A request that names no LoRA adapter. */
  public RequestSpec(long id, long arrivalTimeUs, int[] promptTokens, int outputTokens, String sloClass,
      String tenant, String prefixGroup, int prefixLength, long sessionId, int round, long timeoutUs, int stage,
      String model) {
    this(id, arrivalTimeUs, promptTokens, outputTokens, sloClass, tenant, prefixGroup, prefixLength, sessionId,
        round, timeoutUs, stage, model, "");
  }

  /**
   * The most tokens a request's prompt, or its output, may have: 10,000,000. This is the longest
   * context window any served model offers (Llama 4 Scout's 10M tokens), so no real deployment
   * exceeds it; it bounds the memory of one prompt's token ids to 40 MB. Every workload reader
   * checks its token counts against it where it reads them.
   */
  public static final int MAX_TOKENS = 10_000_000;

  /**
   * The latest arrival time, and the longest timeout or pause, a workload may have: 365 days, in
   * microseconds; the same limit as the engine's simulated time. Far below where microsecond
   * arithmetic on a {@code long} overflows (about 292,000 years), so sums of such times cannot
   * overflow. Every workload reader checks its times against it where it reads them.
   */
  public static final long MAX_TIME_US = 365L * 24 * 3600 * 1_000_000;

  /** {@link #MAX_TIME_US} in words, for messages. */
  public static final String MAX_TIME_WORDS = "365 days";

  public RequestSpec {
    Objects.requireNonNull(promptTokens, "promptTokens");
    Objects.requireNonNull(sloClass, "sloClass");
    Objects.requireNonNull(tenant, "tenant");
    Objects.requireNonNull(prefixGroup, "prefixGroup");
    Objects.requireNonNull(model, "model");
    Objects.requireNonNull(adapter, "adapter");
    if (arrivalTimeUs < 0) {
      throw new IllegalArgumentException("request " + id + ": negative arrival time " + arrivalTimeUs);
    }
    if (arrivalTimeUs > MAX_TIME_US) {
      throw new IllegalArgumentException("request " + id + ": arrival time " + arrivalTimeUs
          + " us is beyond the latest simulated time, " + MAX_TIME_US + " us (" + MAX_TIME_WORDS
          + ")");
    }
    if (promptTokens.length < 1) {
      throw new IllegalArgumentException("request " + id + ": prompt must have at least 1 token");
    }
    if (promptTokens.length > MAX_TOKENS) {
      throw new IllegalArgumentException("request " + id + ": prompt of " + promptTokens.length
          + " tokens, more than the " + MAX_TOKENS + " a request may have");
    }
    if (outputTokens < 1 || outputTokens > MAX_TOKENS) {
      throw new IllegalArgumentException("request " + id + ": output length must be in [1, "
          + MAX_TOKENS + "] tokens, got " + outputTokens);
    }
    if (prefixLength < 0 || prefixLength > promptTokens.length) {
      throw new IllegalArgumentException(
          "request " + id + ": prefix length " + prefixLength + " outside [0, "
              + promptTokens.length + "]");
    }
    if (timeoutUs < 0 || timeoutUs > MAX_TIME_US) {
      throw new IllegalArgumentException("request " + id + ": timeout must be in [0, "
          + MAX_TIME_US + "] us (" + MAX_TIME_WORDS + "), got " + timeoutUs);
    }
  }

  /** A plain request: standard SLO class, no tenant, prefix group, session or timeout. */
  public static RequestSpec simple(long id, long arrivalTimeUs, int[] promptTokens, int outputTokens) {
    return new RequestSpec(
        id, arrivalTimeUs, promptTokens, outputTokens, "standard", "", "", 0, -1, 0, 0, 0);
  }

  /** Number of prompt tokens. */
  public int inputTokens() {
    return promptTokens.length;
  }

  /** A copy with another arrival time (used for replays and closed-loop follow-ups). */
  public RequestSpec withArrivalTimeUs(long newArrivalTimeUs) {
    return new RequestSpec(
        id, newArrivalTimeUs, promptTokens, outputTokens, sloClass, tenant, prefixGroup,
        prefixLength, sessionId, round, timeoutUs, stage, model, adapter);
  }

  /** A copy that names {@code newModel} (empty for none). */
  public RequestSpec withModel(String newModel) {
    return new RequestSpec(
        id, arrivalTimeUs, promptTokens, outputTokens, sloClass, tenant, prefixGroup,
        prefixLength, sessionId, round, timeoutUs, stage, newModel, adapter);
  }

  /** A copy that names the LoRA adapter {@code newAdapter} (empty for the base model). */
  public RequestSpec withAdapter(String newAdapter) {
    return new RequestSpec(
        id, arrivalTimeUs, promptTokens, outputTokens, sloClass, tenant, prefixGroup,
        prefixLength, sessionId, round, timeoutUs, stage, model, newAdapter);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof RequestSpec r
        && id == r.id
        && arrivalTimeUs == r.arrivalTimeUs
        && outputTokens == r.outputTokens
        && prefixLength == r.prefixLength
        && sessionId == r.sessionId
        && round == r.round
        && timeoutUs == r.timeoutUs
        && stage == r.stage
        && sloClass.equals(r.sloClass)
        && tenant.equals(r.tenant)
        && prefixGroup.equals(r.prefixGroup)
        && model.equals(r.model)
        && adapter.equals(r.adapter)
        && Arrays.equals(promptTokens, r.promptTokens);
  }

  @Override
  public int hashCode() {
    return Objects.hash(id, arrivalTimeUs, outputTokens, sessionId, round, stage)
        * 31 + Arrays.hashCode(promptTokens);
  }

  @Override
  public String toString() {
    return "RequestSpec[id=" + id + ", arrivalUs=" + arrivalTimeUs + ", input="
        + promptTokens.length + ", output=" + outputTokens + ", slo=" + sloClass
        + (tenant.isEmpty() ? "" : ", tenant=" + tenant)
        + (prefixGroup.isEmpty() ? "" : ", prefix=" + prefixGroup + "/" + prefixLength)
        + (sessionId < 0 ? "" : ", session=" + sessionId + "#" + round)
        + (timeoutUs == 0 ? "" : ", timeoutUs=" + timeoutUs)
        + (model.isEmpty() ? "" : ", model=" + model)
        + (adapter.isEmpty() ? "" : ", adapter=" + adapter)
        + ", stage=" + stage + "]";
  }
}
