package io.blis.workload.inferenceperf;

import io.blis.workload.PromptTokens;
import io.blis.workload.RequestSpec;
import io.blis.workload.Sampling;
import java.util.SplittableRandom;

/**
 * The distinct prompts of a profile, in the order inference-perf sends them. For {@code
 * shared_prefix} data, the {@code num_groups x num_prompts_per_group} prompts shuffled once with
 * the seed; prompt {@code p} in send order belongs to group {@link #groupName(int)}. For {@code
 * synthetic} and {@code random} data, the {@code total_count} prompts in the order their lengths
 * were drawn. A prompt's token ids are built once and reused, so every reuse of a prompt carries
 * identical ids.
 */
final class PromptSet {

  private final long seed;
  /** Send position to generation index (group-major for shared_prefix). */
  private final int[] order;
  /** Per generation index: shared-prefix tokens (BOS + system) and total prompt tokens. */
  private final int[] prefixTokens;
  private final int[] inputTokens;
  /** Per generation index, output tokens; null when every prompt asks for {@link #fixedOutput}. */
  private final int[] outputTokens;
  private final int fixedOutput;
  /** Prompts per group (shared_prefix); 0 when every prompt is in {@link #soleGroup}. */
  private final int perGroup;
  private final String soleGroup;
  /** Null when the prompts would take too much memory to keep (they are then rebuilt). */
  private final int[][] cache;

  /** Prompts are cached only while they hold at most this many tokens in total. */
  static final long CACHE_LIMIT_TOKENS = 32L << 20;

  /** Group of every synthetic prompt: they are all prefixes of one text. */
  static final String SYNTHETIC_TEXT = "synthetic-text";

  PromptSet(ProfileData data, PromptLengthModel model, long seed) {
    this.seed = seed;
    int n = data.uniquePrompts();
    this.order = new int[n];
    for (int i = 0; i < n; i++) {
      order[i] = i;
    }
    this.prefixTokens = new int[n];
    this.inputTokens = new int[n];
    int bos = Math.min(1, model.fixedTokens());
    if (data instanceof SharedPrefixData d) {
      Sampling.shuffle(order, new SplittableRandom(Sampling.subSeed(seed, "inference-perf:shuffle")));
      SplittableRandom rng = new SplittableRandom(Sampling.subSeed(seed, "inference-perf:lengths"));
      int join = model.fixedTokens() - bos;
      for (int g = 0; g < d.numGroups(); g++) {
        int system = part(d.systemPromptLen(), model, rng);
        for (int q = 0; q < d.numPromptsPerGroup(); q++) {
          int i = g * d.numPromptsPerGroup() + q;
          int question = part(d.questionLen(), model, rng);
          prefixTokens[i] = bos + system;
          inputTokens[i] = length("system_prompt_len " + d.systemPromptLen() + " + question_len "
              + d.questionLen(), (long) bos + system + join + question);
        }
      }
      this.outputTokens = null;
      this.fixedOutput = d.outputLen();
      this.perGroup = d.numPromptsPerGroup();
      this.soleGroup = "";
    } else {
      LengthDistributionData d = (LengthDistributionData) data;
      int[] lengths = d.input().draw(
          new SplittableRandom(Sampling.subSeed(seed, "inference-perf:input-lengths")));
      this.outputTokens = d.output().draw(
          new SplittableRandom(Sampling.subSeed(seed, "inference-perf:output-lengths")));
      boolean synthetic = d.kind() == LengthDistributionData.Kind.SYNTHETIC;
      SplittableRandom rng = new SplittableRandom(Sampling.subSeed(seed, "inference-perf:lengths"));
      for (int i = 0; i < n; i++) {
        // synthetic text re-tokenizes to itself; random ids decode to text that re-tokenizes longer
        int body = synthetic ? lengths[i] : part(lengths[i], model, rng);
        inputTokens[i] = length("a prompt of " + lengths[i] + " tokens", Math.max(1L, (long) bos + body));
        prefixTokens[i] = synthetic ? inputTokens[i] : 0;
      }
      this.fixedOutput = 0;
      this.perGroup = 0;
      this.soleGroup = synthetic ? SYNTHETIC_TEXT : "";
    }
    long total = 0;
    for (int len : inputTokens) {
      total += len;
    }
    this.cache = total <= CACHE_LIMIT_TOKENS ? new int[n][] : null;
  }

  private static int length(String what, long input) {
    if (input > RequestSpec.MAX_TOKENS) {
      throw new IllegalArgumentException(what + " make prompts of " + input
          + " tokens as the server tokenizes them, more than the " + RequestSpec.MAX_TOKENS
          + " a request may have");
    }
    return (int) input;
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

  /** Name of the prefix group of the prompt at send position {@code p} ("" for none). */
  String groupName(int p) {
    return perGroup == 0 ? soleGroup : "group-" + order[p] / perGroup;
  }

  /** Output tokens the prompt at send position {@code p} asks for. */
  int outputTokens(int p) {
    return outputTokens == null ? fixedOutput : outputTokens[order[p]];
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
    int prefix = perGroup == 0 && prefixTokens[i] > 0 ? Math.min(prefixTokens[i], length)
        : Math.min(prefixTokens[i], length - 1);
    return PromptTokens.build(seed, groupName(p), Math.max(0, prefix), i, length);
  }

  /** Prefix length of a prompt of the given length at send position {@code p}. */
  int prefixTokens(int p, int length) {
    return Math.max(0, Math.min(prefixTokens[order[p]], length - 1));
  }
}
