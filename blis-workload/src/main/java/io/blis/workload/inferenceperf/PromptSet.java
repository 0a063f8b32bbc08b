package io.blis.workload.inferenceperf;

import io.blis.workload.PromptTokens;
import io.blis.workload.RequestSpec;
import io.blis.workload.Sampling;
import java.util.SplittableRandom;

/**
 * The {@code num_groups x num_prompts_per_group} distinct prompts of a shared-prefix profile, in
 * the order inference-perf sends them (shuffled once with the seed). Prompt {@code p} in send order
 * belongs to group {@link #group(int)}; its token ids are built once and reused, so every reuse of
 * a prompt carries identical ids.
 */
final class PromptSet {

  private final long seed;
  private final SharedPrefixData data;
  /** Send position to generation index (group-major). */
  private final int[] order;
  /** Per generation index: shared-prefix tokens (BOS + system) and total prompt tokens. */
  private final int[] prefixTokens;
  private final int[] inputTokens;
  /** Null when the prompts would take too much memory to keep (they are then rebuilt). */
  private final int[][] cache;

  /** Prompts are cached only while they hold at most this many tokens in total. */
  static final long CACHE_LIMIT_TOKENS = 32L << 20;

  PromptSet(SharedPrefixData data, PromptLengthModel model, long seed) {
    this.seed = seed;
    this.data = data;
    int n = data.uniquePrompts();
    this.order = new int[n];
    for (int i = 0; i < n; i++) {
      order[i] = i;
    }
    Sampling.shuffle(order, new SplittableRandom(Sampling.subSeed(seed, "inference-perf:shuffle")));
    this.prefixTokens = new int[n];
    this.inputTokens = new int[n];
    SplittableRandom rng = new SplittableRandom(Sampling.subSeed(seed, "inference-perf:lengths"));
    int bos = Math.min(1, model.fixedTokens());
    int join = model.fixedTokens() - bos;
    for (int g = 0; g < data.numGroups(); g++) {
      int system = part(data.systemPromptLen(), model, rng);
      for (int q = 0; q < data.numPromptsPerGroup(); q++) {
        int i = g * data.numPromptsPerGroup() + q;
        int question = part(data.questionLen(), model, rng);
        prefixTokens[i] = bos + system;
        long input = Math.max(1L, (long) bos + system + join + question);
        if (input > RequestSpec.MAX_TOKENS) {
          throw new IllegalArgumentException("shared_prefix: system_prompt_len "
              + data.systemPromptLen() + " + question_len " + data.questionLen() + " make prompts of "
              + input + " tokens as the server tokenizes them, more than the "
              + RequestSpec.MAX_TOKENS + " a request may have");
        }
        inputTokens[i] = (int) input;
      }
    }
    long total = 0;
    for (int len : inputTokens) {
      total += len;
    }
    this.cache = total <= CACHE_LIMIT_TOKENS ? new int[n][] : null;
  }

  private static int part(int len, PromptLengthModel m, SplittableRandom rng) {
    if (len == 0) {
      return 0;
    }
    double jitter = m.jitterPerSqrtToken() * StrictMath.sqrt(len) * Sampling.standardNormal(rng);
    return Math.max(1, (int) StrictMath.floor(len * (1 + m.expansion()) + jitter + 0.5));
  }

  int size() {
    return order.length;
  }

  /** Generation index (group-major) of the prompt at send position {@code p}. */
  int identity(int p) {
    return order[p];
  }

  int group(int p) {
    return order[p] / data.numPromptsPerGroup();
  }

  static String groupName(int group) {
    return "group-" + group;
  }

  int prefixTokens(int p) {
    return prefixTokens[order[p]];
  }

  int inputTokens(int p) {
    return inputTokens[order[p]];
  }

  /** Token ids of the prompt at send position {@code p} (shared array: do not modify). */
  int[] tokens(int p) {
    int i = order[p];
    if (cache == null) {
      return build(p, inputTokens[i]);
    }
    int[] t = cache[i];
    if (t == null) {
      t = build(p, inputTokens[i]);
      cache[i] = t;
    }
    return t;
  }

  /**
   * Token ids of the prompt at send position {@code p} cut or extended to {@code length} tokens
   * (for replayed requests whose recorded length differs from the prompt's usual length).
   */
  int[] build(int p, int length) {
    int i = order[p];
    int prefix = Math.min(prefixTokens[i], length - 1);
    return PromptTokens.build(seed, groupName(group(p)), Math.max(0, prefix), i, length);
  }

  /** Prefix length of a prompt of the given length at send position {@code p}. */
  int prefixTokens(int p, int length) {
    return Math.max(0, Math.min(prefixTokens[order[p]], length - 1));
  }
}
