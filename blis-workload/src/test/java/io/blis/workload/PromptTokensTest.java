package io.blis.workload;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Prompts in the form a trace without token ids records them: rebuilt from the trace, the same ids. */
class PromptTokensTest {

  @Test
  void aRebuildablePromptIsRebuiltFromItsFingerprintExactly() {
    SplittableRandom rnd = new SplittableRandom(3);
    for (int i = 0; i < 500; i++) {
      int input = 1 + rnd.nextInt(300);
      int prefix = rnd.nextInt(3) == 0 ? 0 : rnd.nextInt(input + 1); // own content of 0..input tokens
      String group = prefix > 0 ? "g" + rnd.nextInt(4) : "";
      long contentId = rnd.nextLong(1_000_000);
      int[] prompt = PromptTokens.rebuildable(42, group, prefix, contentId, input);
      assertThat(prompt).hasSize(input);
      // what a trace row keeps of it (TraceWriter), and what the reader makes of that
      long recorded = PromptTokens.fingerprint(prompt, prefix, input - prefix);
      assertThat(PromptTokens.rebuild(42, group, prefix, recorded, input)).as("prompt %d", i).isEqualTo(prompt);
      // the group's prefix is build's, shared with every other prompt of the group
      assertThat(java.util.Arrays.copyOf(prompt, prefix))
          .isEqualTo(java.util.Arrays.copyOf(PromptTokens.build(42, group, prefix, contentId + 1, input), prefix));
    }
  }
}
