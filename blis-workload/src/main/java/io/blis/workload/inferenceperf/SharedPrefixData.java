package io.blis.workload.inferenceperf;

import io.blis.workload.RequestSpec;

/**
 * The {@code shared_prefix} data section of an inference-perf profile: {@code numGroups} system
 * prompts of {@code systemPromptLen} tokens, each followed by {@code numPromptsPerGroup} distinct
 * questions of {@code questionLen} tokens; every request asks for exactly {@code outputLen} tokens.
 */
public record SharedPrefixData(
    int numGroups, int numPromptsPerGroup, int systemPromptLen, int questionLen, int outputLen)
    implements ProfileData {

  public SharedPrefixData {
    if (numGroups < 1 || numPromptsPerGroup < 1) {
      throw new IllegalArgumentException(
          "shared_prefix: num_groups and num_prompts_per_group must be at least 1, got "
              + numGroups + " and " + numPromptsPerGroup);
    }
    if (systemPromptLen < 0 || questionLen < 0) {
      throw new IllegalArgumentException(
          "shared_prefix: system_prompt_len and question_len must be >= 0, got "
              + systemPromptLen + " and " + questionLen);
    }
    if (outputLen < 1 || outputLen > RequestSpec.MAX_TOKENS) {
      throw new IllegalArgumentException("shared_prefix: output_len must be in [1, "
          + RequestSpec.MAX_TOKENS + "] (the most tokens a request may have), got " + outputLen);
    }
    if ((long) systemPromptLen + questionLen > RequestSpec.MAX_TOKENS) {
      throw new IllegalArgumentException("shared_prefix: system_prompt_len + question_len = "
          + ((long) systemPromptLen + questionLen) + " tokens, more than the "
          + RequestSpec.MAX_TOKENS + " a request may have");
    }
    if ((long) numGroups * numPromptsPerGroup > MAX_UNIQUE_PROMPTS) {
      throw new IllegalArgumentException("shared_prefix: num_groups x num_prompts_per_group = "
          + (long) numGroups * numPromptsPerGroup + " distinct prompts, more than the "
          + MAX_UNIQUE_PROMPTS + " supported");
    }
  }

  /**
   * The most distinct prompts a profile may have: 1,000,000 (inference-perf profiles have tens to
   * thousands); their lengths are kept in memory.
   */
  public static final int MAX_UNIQUE_PROMPTS = 1_000_000;

  /** Number of distinct prompts, {@code numGroups x numPromptsPerGroup}. */
  @Override
  public int uniquePrompts() {
    return numGroups * numPromptsPerGroup;
  }
}
