package io.blis.workload.inferenceperf;

/**
 * How many tokens the server prefills for an inference-perf shared-prefix prompt. inference-perf
 * decodes {@code system_prompt_len} and {@code question_len} random token ids to text and joins
 * them with a space; the server re-tokenizes that text, which does not round-trip, and adds BOS.
 *
 * <p>A group's system prompt becomes {@code round(systemPromptLen (1 + expansion) + e_g)} tokens and
 * a question {@code round(questionLen (1 + expansion) + e_p)} tokens, with Gaussian jitter {@code
 * e} of standard deviation {@code jitterPerSqrtToken x sqrt(len)} (drawn once per group and once per
 * prompt, seeded). The prompt is {@code fixedTokens} (BOS and the joining space) + system +
 * question. The shared prefix is BOS + the system tokens.
 *
 * <p>{@link #DEFAULT} is fitted to the 12 measured H100 runs: {@code prompt_len_mean} exceeds
 * {@code system_prompt_len + question_len} by 2 + 4.4% on average (Llama-2 tokenizer 4.2-4.8%,
 * Mixtral 3.8-4.0%), and the per-prompt lengths of a run spread with a standard deviation of about
 * 0.27 sqrt(system + question) tokens (e.g. 580-604 tokens for codegen).
 *
 * @param expansion relative growth of random text on re-tokenization
 * @param jitterPerSqrtToken standard deviation of the per-part jitter divided by sqrt(part length)
 * @param fixedTokens tokens added to every prompt (BOS and the joining space)
 */
public record PromptLengthModel(double expansion, double jitterPerSqrtToken, int fixedTokens) {

  /** Fitted to the measured runs (see the class comment). */
  public static final PromptLengthModel DEFAULT = new PromptLengthModel(0.044, 0.27, 2);

  /** Exactly {@code system_prompt_len + question_len} tokens, no BOS, no jitter. */
  public static final PromptLengthModel EXACT = new PromptLengthModel(0, 0, 0);

  public PromptLengthModel {
    if (!(expansion > -1) || !Double.isFinite(expansion)) {
      throw new IllegalArgumentException("prompt expansion must be > -1, got " + expansion);
    }
    if (!(jitterPerSqrtToken >= 0) || !Double.isFinite(jitterPerSqrtToken)) {
      throw new IllegalArgumentException("prompt jitter must be >= 0, got " + jitterPerSqrtToken);
    }
    if (fixedTokens < 0) {
      throw new IllegalArgumentException("fixed prompt tokens must be >= 0, got " + fixedTokens);
    }
  }
}
