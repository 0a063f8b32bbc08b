package io.blis.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.blis.engine.result.RequestRecord;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.util.Arrays;
import java.util.List;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * vLLM's {@code tests/v1/core/test_prefix_caching.py} (commit 003df2961dd8) scenarios seen through
 * engine steps: a request's prefix hit is the {@code computedTokens} of its first step, and what
 * the hit spared is its first {@code scheduledTokens}. vLLM's pool of {@code N} blocks has {@code
 * N - 1} usable ones (block 0 is its null block): the same scenario runs on {@code N - 1} blocks
 * here.
 */
class VllmPrefixCachingEngineParityTest {

  private static final int BS = 16;

  private static int[] same(int token, int count) {
    int[] out = new int[count];
    Arrays.fill(out, token);
    return out;
  }

  private static int[] concat(int[]... parts) {
    return Stream.of(parts).flatMapToInt(IntStream::of).toArray();
  }

  private static int[] common() {
    return concat(same(0, BS), same(1, BS), same(2, BS));
  }

  private static RecordedRun run(long kvBlocks, List<RequestSpec> reqs) {
    return RecordedRun.of(Simulation.builder().latencyModel(LinearTestModel.constant(1000))
        .limits(new EngineLimits(16, 8192, 0, 8192, false)).totalKvBlocks(kvBlocks).blockSizeTokens(BS)
        .source(RequestSource.of(reqs)));
  }

  /** The request's entry in the first step that scheduled it. */
  private static StepRecord.RequestState first(RecordedRun run, long id) {
    return run.steps().stream().flatMap(s -> s.requests().stream()).filter(r -> r.requestId() == id)
        .findFirst().orElseThrow();
  }

  /** The first step that scheduled request {@code id}. */
  private static StepRecord firstStep(RecordedRun run, long id) {
    return run.steps().stream().filter(s -> s.requests().stream().anyMatch(r -> r.requestId() == id))
        .findFirst().orElseThrow();
  }

  /**
   * vLLM {@code tests/v1/core/test_prefix_caching.py::test_prefill} through the scheduler, on
   * vLLM's 11-block pool (10 usable): the first request misses; a second request sharing the
   * three-block prefix, admitted while the first runs, computes only its 5 last tokens and holds 3
   * shared blocks plus 1 (5 blocks left free); a third, admitted after both finished, hits the same
   * 48 tokens from the freed blocks; a 160-token request of other tokens misses and takes all 10
   * blocks, after which the common prefix is no longer cached.
   */
  @Test
  void prefillHitsThroughTheScheduler() {
    int[] common = common();
    RecordedRun run = run(10, List.of(
        RequestSpec.simple(0, 0, concat(common, same(3, 7)), 3),
        RequestSpec.simple(1, 500, concat(common, same(3, 5)), 3),
        RequestSpec.simple(2, 20_000, concat(common, same(3, 6)), 2),
        RequestSpec.simple(3, 40_000, same(99, 160), 1),
        RequestSpec.simple(4, 60_000, concat(common, same(3, 6)), 1)));

    StepRecord.RequestState r0 = first(run, 0);
    assertThat(r0.computedTokens()).isZero();
    assertThat(r0.scheduledTokens()).isEqualTo(55);
    assertThat(r0.cachedBlocks()).isZero();

    StepRecord.RequestState r1 = first(run, 1);
    StepRecord step1 = firstStep(run, 1);
    assertThat(step1.requests()).extracting(StepRecord.RequestState::requestId).contains(0L); // still running
    assertThat(r1.computedTokens()).isEqualTo(48);
    assertThat(r1.scheduledTokens()).isEqualTo(5);
    assertThat(r1.cachedBlocks()).isEqualTo(3);
    assertThat(r1.cachedPromptTokens()).isEqualTo(48);
    assertThat(r1.blocksAllocated()).isEqualTo(4);
    // 4 blocks of request 0, 1 more of request 1: 5 of 10 free
    assertThat(step1.kvBlocksTotal() - step1.kvBlocksFree()).isEqualTo(5);

    StepRecord.RequestState r2 = first(run, 2);
    assertThat(firstStep(run, 2).requests()).hasSize(1); // the others finished
    assertThat(r2.computedTokens()).isEqualTo(48);
    assertThat(r2.scheduledTokens()).isEqualTo(6);
    assertThat(r2.cachedBlocks()).isEqualTo(3);

    StepRecord.RequestState r3 = first(run, 3);
    assertThat(r3.computedTokens()).isZero();
    assertThat(r3.scheduledTokens()).isEqualTo(160);
    assertThat(r3.blocksAllocated()).isEqualTo(10);

    assertThat(first(run, 4).computedTokens()).isZero();
    List<RequestRecord> recs = run.byId();
    assertThat(recs).extracting(RequestRecord::cachedPromptTokens).containsExactly(0, 48, 48, 0, 0);
  }

  /**
   * vLLM {@code tests/v1/core/test_prefix_caching.py::test_computed_blocks_not_evicted} through the
   * scheduler, on vLLM's 3-block pool (2 usable): the request hitting the first cached block takes
   * the second for its new block, so afterwards the first prompt still hits and the second misses.
   */
  @Test
  void computedBlocksNotEvictedThroughTheScheduler() {
    int[] a = IntStream.range(0, 16).toArray();
    int[] b = IntStream.range(16, 32).toArray();
    RecordedRun run = run(2, List.of(
        RequestSpec.simple(0, 0, a, 1),
        RequestSpec.simple(1, 5_000, b, 1),
        RequestSpec.simple(2, 10_000, concat(a, b), 1),
        RequestSpec.simple(3, 15_000, concat(a, same(7, 1)), 1),
        RequestSpec.simple(4, 20_000, concat(b, same(7, 1)), 1)));
    StepRecord.RequestState r2 = first(run, 2);
    assertThat(r2.computedTokens()).isEqualTo(16);
    assertThat(r2.scheduledTokens()).isEqualTo(16);
    assertThat(r2.cachedBlocks()).isEqualTo(1);
    assertThat(r2.blocksAllocated()).isEqualTo(2);
    assertThat(first(run, 3).computedTokens()).isEqualTo(16);
    assertThat(first(run, 4).computedTokens()).isZero();
  }

  /**
   * vLLM {@code
   * tests/v1/core/test_prefix_caching.py::test_prefill_not_enough_free_blocks_with_computed_blocks}
   * through the scheduler, on vLLM's 11-block pool (10 usable): request 1 (the common prefix twice)
   * hits the prefix request 0 holds and is freed after its prefill, leaving its own 3 blocks cached
   * and free; request 2 (two other blocks) and request 3 (the prefix three times) arrive together.
   * Request 2 takes 2 blocks, leaving 4 free (request 0 holds 4); request 3 hits 6 blocks, 3 of them
   * free, and needs 3 new: 6 free blocks it does not have, so it is refused and waits. Its computed
   * blocks are untouched by the refusal: once request 2 is done, it is admitted with the same
   * 6-block hit.
   */
  @Test
  void notEnoughFreeBlocksWithComputedBlocksThroughTheScheduler() {
    int[] common = common();
    RecordedRun run = run(10, List.of(
        RequestSpec.simple(0, 0, common, 40),
        RequestSpec.simple(1, 500, concat(common, common), 1),
        RequestSpec.simple(2, 4_500, same(7, 32), 1),
        RequestSpec.simple(3, 4_600, concat(common, common, common), 1)));
    assertThat(first(run, 1).computedTokens()).isEqualTo(48);
    assertThat(first(run, 2).computedTokens()).isZero();
    StepRecord.RequestState r3 = first(run, 3);
    StepRecord step3 = firstStep(run, 3);
    // admitted only once request 2 has finished
    long r2Last = run.steps().stream().filter(s -> s.requests().stream().anyMatch(r -> r.requestId() == 2))
        .mapToLong(StepRecord::stepId).max().orElseThrow();
    assertThat(step3.stepId()).isEqualTo(r2Last + 1);
    assertThat(r3.computedTokens()).isEqualTo(96);
    assertThat(r3.scheduledTokens()).isEqualTo(48);
    assertThat(r3.cachedBlocks()).isEqualTo(6);
  }
}
