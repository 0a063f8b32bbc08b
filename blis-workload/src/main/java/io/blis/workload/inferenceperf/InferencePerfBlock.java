package io.blis.workload.inferenceperf;

import java.util.List;

/**
 * Binding of the {@code inference_perf} block of a Go BLIS workload spec: load stages ({@code
 * rate} req/s for {@code duration} s) and the shared-prefix data in inference-perf's newer key
 * names. The values are checked by the spec reader, which knows where each key is in the file;
 * {@link #toProfile} builds the profile this project runs inference-perf workloads from.
 */
public record InferencePerfBlock(List<Stage> stages, SharedPrefix sharedPrefix) {

  /** One load stage. */
  public record Stage(Double rate, Double duration) {}

  /** The shared-prefix data: P system prompts, U users each, lengths in tokens. */
  public record SharedPrefix(
      Integer numUniqueSystemPrompts,
      Integer numUsersPerSystemPrompt,
      Integer systemPromptLen,
      Integer questionLen,
      Integer outputLen,
      Boolean enableMultiTurnChat) {}

  /**
   * The inference-perf profile of this block: P groups x U prompts, the stages as written, load
   * type constant, inference-perf's defaults for what the block cannot say (1 s between stages, a
   * 300 s client timeout); an output length of 0 asks for 1 token. Values must have been checked.
   */
  public InferencePerfProfile toProfile() {
    SharedPrefix p = sharedPrefix;
    SharedPrefixData data = new SharedPrefixData(p.numUniqueSystemPrompts(),
        p.numUsersPerSystemPrompt(), orZero(p.systemPromptLen()), orZero(p.questionLen()),
        Math.max(1, orZero(p.outputLen())));
    List<LoadStage> loads = stages.stream().map(s -> new LoadStage(s.rate(), s.duration())).toList();
    return new InferencePerfProfile(data, loads, DEFAULT_INTERVAL_S, DEFAULT_TIMEOUT_S,
        InferencePerfProfile.LoadType.CONSTANT, Boolean.TRUE.equals(p.enableMultiTurnChat()));
  }

  /** inference-perf's default pause between stages, seconds. */
  public static final double DEFAULT_INTERVAL_S = 1.0;

  /** The default client timeout of this project's inference-perf profiles, seconds. */
  public static final double DEFAULT_TIMEOUT_S = 300.0;

  private static int orZero(Integer v) {
    return v == null ? 0 : v;
  }
}
