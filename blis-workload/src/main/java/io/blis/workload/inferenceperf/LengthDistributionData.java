package io.blis.workload.inferenceperf;

import io.blis.workload.RequestSpec;
import io.blis.workload.Sampling;
import java.util.Objects;
import java.util.SplittableRandom;

/**
 * The {@code synthetic} and {@code random} data types of inference-perf: {@code total_count}
 * prompts whose lengths inference-perf draws once from {@code input_distribution}, each asking for
 * a length drawn from {@code output_distribution}; request n of a stage sends prompt n mod {@code
 * total_count}. The two types differ in content: {@code synthetic} prompts are the first L tokens
 * of one fixed text (so a prompt is a prefix of every longer one, and they share cache blocks),
 * {@code random} prompts are random token ids (nothing shared).
 *
 * @param kind which of the two types
 * @param input the prompt lengths, tokens
 * @param output the output lengths (max_tokens, with ignore-EOS), tokens
 */
public record LengthDistributionData(Kind kind, Distribution input, Distribution output)
    implements ProfileData {

  /** The two data types with length distributions. */
  public enum Kind {
    /** Prefixes of one fixed text (inference-perf's sonnet text). */
    SYNTHETIC,
    /** Random token ids. */
    RANDOM;

    /** The name in inference-perf's {@code data.type}. */
    public String typeName() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  /**
   * inference-perf's length distribution: {@code total_count} draws of a normal of mean {@code
   * mean} and standard deviation {@code stdDev}, clipped to [min, max] and rounded to the nearest
   * integer (ties to even, as numpy rounds).
   */
  public record Distribution(int min, int max, double mean, double stdDev, int totalCount) {
    public Distribution {
      if (min < 0 || min > RequestSpec.MAX_TOKENS) {
        throw new IllegalArgumentException("min must be in [0, " + RequestSpec.MAX_TOKENS
            + "] tokens, got " + min);
      }
      if (max < min || max > RequestSpec.MAX_TOKENS) {
        throw new IllegalArgumentException("max must be in [min, " + RequestSpec.MAX_TOKENS
            + "] tokens, got " + max + " (min " + min + ")");
      }
      if (!(mean >= min && mean <= max)) {
        throw new IllegalArgumentException("mean must lie in [min, max] = [" + min + ", " + max
            + "] (inference-perf refuses it otherwise), got " + mean);
      }
      if (!(stdDev >= 0) || !Double.isFinite(stdDev)) {
        throw new IllegalArgumentException("std_dev must be a number >= 0, got " + stdDev);
      }
      if (totalCount < 1 || totalCount > SharedPrefixData.MAX_UNIQUE_PROMPTS) {
        throw new IllegalArgumentException("total_count must be in [1, "
            + SharedPrefixData.MAX_UNIQUE_PROMPTS + "], got " + totalCount);
      }
    }

    /** The {@code totalCount} lengths, drawn with {@code rng}. */
    int[] draw(SplittableRandom rng) {
      int[] out = new int[totalCount];
      for (int i = 0; i < totalCount; i++) {
        double x = Math.min(max, Math.max(min, mean + stdDev * Sampling.standardNormal(rng)));
        out[i] = (int) Math.min(max, Math.max(min, Math.rint(x)));
      }
      return out;
    }
  }

  public LengthDistributionData {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(input, "input");
    Objects.requireNonNull(output, "output");
    if (output.min() < 1) {
      throw new IllegalArgumentException(
          "output_distribution.min must be at least 1 token (a request generates at least one), got "
              + output.min());
    }
    if (output.totalCount() < input.totalCount()) {
      throw new IllegalArgumentException("output_distribution.total_count " + output.totalCount()
          + " is below input_distribution.total_count " + input.totalCount()
          + ": prompt i asks for output length i");
    }
  }

  @Override
  public int uniquePrompts() {
    return input.totalCount();
  }

  @Override
  public int outputLen() {
    return 0;
  }
}
