package io.blis.workload.inferenceperf;

/**
 * The {@code data} section of an inference-perf profile: what prompts the client sends. Each
 * parametric data type of inference-perf is one implementation: {@link SharedPrefixData} ({@code
 * shared_prefix}) and {@link LengthDistributionData} ({@code synthetic} and {@code random}).
 */
public sealed interface ProfileData permits SharedPrefixData, LengthDistributionData {

  /** Number of distinct prompts; request n of a stage sends prompt n mod this. */
  int uniquePrompts();

  /** Output tokens every request asks for, or 0 when the length varies from prompt to prompt. */
  int outputLen();
}
