package io.blis.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.blis.engine.result.RequestRecord;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The free order of vLLM 0.23 and later through the engine: a freed block without a hash is reused
 * before cached blocks, so a cached prefix survives longer.
 */
class FreeOrderEngineTest {

  /**
   * Six blocks of 4 tokens, requests one after another. X caches three blocks; A (5 tokens) leaves
   * one cached block and one partial block; B (12 tokens) needs three blocks. In 0.15's order B
   * takes the unused block and two of X's cached blocks; in 0.23's it takes A's partial block first
   * and evicts only X's third block. C, X's prompt again, then hits two blocks (at most two: a hit
   * never covers the last prompt token) instead of one.
   */
  private static RequestRecord promptAgain(boolean freshBlocksFirst) {
    List<RequestSpec> reqs = List.of(
        RequestSpec.simple(1, 0, TestRequests.tokens(1000, 12), 1),
        RequestSpec.simple(2, 10_000, TestRequests.tokens(2000, 5), 1),
        RequestSpec.simple(3, 20_000, TestRequests.tokens(3000, 12), 1),
        RequestSpec.simple(4, 30_000, TestRequests.tokens(1000, 12), 1));
    RecordedRun run = RecordedRun.of(Simulation.builder().latencyModel(LinearTestModel.constant(1000))
        .limits(new EngineLimits(256, 8192, 0, 4096, false)).totalKvBlocks(6).blockSizeTokens(4)
        .freshBlocksFirst(freshBlocksFirst).source(RequestSource.of(reqs)));
    return run.byId().get(3);
  }

  @Test
  void aCachedPrefixOutlivesAFreedPartialBlockFromVllm023On() {
    assertThat(promptAgain(false).cachedPromptTokens()).isEqualTo(4);
    assertThat(promptAgain(true).cachedPromptTokens()).isEqualTo(8);
  }
}
