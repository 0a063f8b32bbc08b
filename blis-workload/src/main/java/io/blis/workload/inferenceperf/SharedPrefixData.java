package io.blis.workload.inferenceperf;

/**
 * The {@code shared_prefix} data section of an inference-perf profile: {@code numGroups} system
 * prompts of {@code systemPromptLen} tokens, each followed by {@code numPromptsPerGroup} distinct
 * questions of {@code questionLen} tokens; every request asks for exactly {@code outputLen} tokens.
 */
public record SharedPrefixData(
    int numGroups, int numPromptsPerGroup, int systemPromptLen, int questionLen, int outputLen) {

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
    if (outputLen < 1) {
      throw new IllegalArgumentException("shared_prefix: output_len must be >= 1, got " + outputLen);
    }
  }

  /** Number of distinct prompts, {@code numGroups x numPromptsPerGroup}. */
  public int uniquePrompts() {
    return numGroups * numPromptsPerGroup;
  }
}
