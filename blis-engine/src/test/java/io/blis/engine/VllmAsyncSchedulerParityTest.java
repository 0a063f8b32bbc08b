package io.blis.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.blis.api.ModelSpec;
import io.blis.engine.cluster.Cluster;
import io.blis.engine.lora.LoraCosts;
import io.blis.engine.lora.LoraSpec;
import io.blis.engine.result.RequestRecord;
import io.blis.latency.catalog.GpuCatalog;
import io.blis.latency.catalog.ModelCatalog;
import io.blis.workload.RequestOutcome;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * vLLM's async-scheduler tests (tests/v1/core/test_async_scheduler.py), re-expressed as scenarios of
 * this engine with async scheduling on. The upstream scheduler defaults (tests/v1/core/utils.py):
 * 16 sequences, 8,192 batched tokens, max model length equal to the token budget, 10,000 blocks of
 * 16 tokens, 10-token prompts. Steps take a constant 1 ms here, so "the k-th step" ends at k ms.
 */
class VllmAsyncSchedulerParityTest {

  private static final long STEP_US = 1000;

  private static Simulation.Builder engine(int maxNumBatchedTokens, List<RequestSpec> reqs) {
    return Simulation.builder().latencyModel(LinearTestModel.constant(STEP_US))
        .limits(new EngineLimits(16, maxNumBatchedTokens, 0, 8192, true))
        .totalKvBlocks(10_000).blockSizeTokens(16).source(RequestSource.of(reqs));
  }

  /** A prompt of {@code n} copies of one token id (the upstream helper's prompts). */
  private static int[] repeated(int token, int n) {
    int[] p = new int[n];
    Arrays.fill(p, token);
    return p;
  }

  private static long scheduledTokens(RecordedRun run) {
    return run.steps().stream().mapToLong(s -> s.prefillTokens() + s.decodeTokens()).sum();
  }

  /** The entry of request {@code id} in the first step that scheduled it. */
  private static StepRecord.RequestState firstScheduled(RecordedRun run, long id) {
    return run.steps().stream().flatMap(s -> s.requests().stream()).filter(q -> q.requestId() == id)
        .findFirst().orElseThrow();
  }

  /**
   * vLLM tests/v1/core/test_async_scheduler.py::test_stop_by_max_tokens. Two requests, the second
   * queued while the first one's prefill runs, each stopping at {@code maxTokens}: both finish with
   * exactly that many tokens, and the steps schedule no token beyond need: prompt + maxTokens - 1
   * per request (the last sampled token is never fed back).
   */
  @ParameterizedTest(name = "max_tokens {0}")
  @ValueSource(ints = {1, 2, 3, 5})
  void stopsAtMaxTokensWithoutSchedulingSpareTokens(int maxTokens) {
    List<RequestSpec> reqs = List.of(
        RequestSpec.simple(0, 0, repeated(0, 10), maxTokens),
        RequestSpec.simple(1, STEP_US / 2, repeated(1, 10), maxTokens));
    RecordedRun run = RecordedRun.of(engine(8192, reqs));
    assertThat(run.byId()).extracting(RequestRecord::outcome)
        .containsExactly(RequestOutcome.COMPLETED, RequestOutcome.COMPLETED);
    assertThat(run.byId()).extracting(RequestRecord::outputTokens).containsExactly(maxTokens, maxTokens);
    assertThat(scheduledTokens(run)).isEqualTo(2L * (10 + maxTokens - 1));
  }

  /**
   * vLLM tests/v1/core/test_async_scheduler.py::test_abort and ::test_preempt (the two have the same
   * body upstream). Ten requests (10-token prompts, 20 output tokens) all start together; one is
   * aborted while each step runs, in the order 0, 8, 3, 1, 6, 4, 2, 5, 7, 9. The k-th aborted one
   * ends aborted with exactly k output tokens: the step in flight when it is aborted gives it none.
   * Here an abort is the client giving up mid-step (the request's timeout).
   */
  @Test
  void abortsInFlightLeaveExactlyTheTokensOfTheStepsAlreadyCompleted() {
    int[] abortOrder = {0, 8, 3, 1, 6, 4, 2, 5, 7, 9};
    List<RequestSpec> reqs = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      int k = indexOf(abortOrder, i);
      reqs.add(TestRequests.withTimeout(RequestSpec.simple(i, 0, repeated(i, 10), 20), k * STEP_US + STEP_US / 2));
    }
    RecordedRun run = RecordedRun.of(engine(8192, reqs));
    for (RequestRecord r : run.byId()) {
      assertThat(r.outcome()).as("request %d", r.id()).isEqualTo(RequestOutcome.TIMED_OUT);
      assertThat(r.outputTokens()).as("request %d", r.id()).isEqualTo(indexOf(abortOrder, (int) r.id()));
    }
  }

  private static int indexOf(int[] a, int v) {
    for (int i = 0; i < a.length; i++) {
      if (a[i] == v) {
        return i;
      }
    }
    throw new IllegalArgumentException(v + " not found");
  }

  /**
   * vLLM tests/v1/core/test_async_scheduler.py::test_prefix_caching_for_prefill_dedup. Token budget
   * 1,000, blocks of 16, five requests with the same 100-token prompt and 3 output tokens. The first
   * two are scheduled in the same step: the second already hits the first one's full blocks, so it
   * is scheduled only 100 % 16 = 4 tokens. Each later one, queued one per step, is scheduled 4
   * tokens too, and all finish.
   */
  @Test
  void samePromptsInOneStepShareAllButTheLastPartialBlock() {
    List<RequestSpec> reqs = new ArrayList<>();
    reqs.add(RequestSpec.simple(0, 0, repeated(0, 100), 3));
    reqs.add(RequestSpec.simple(1, 0, repeated(0, 100), 3));
    for (int i = 2; i < 5; i++) {
      reqs.add(RequestSpec.simple(i, (i - 2) * STEP_US + STEP_US / 2, repeated(0, 100), 3));
    }
    RecordedRun run = RecordedRun.of(engine(1000, reqs));
    StepRecord first = run.steps().get(0);
    assertThat(first.requests()).extracting(StepRecord.RequestState::requestId).containsExactly(0L, 1L);
    assertThat(first.requests()).extracting(StepRecord.RequestState::scheduledTokens).containsExactly(100, 4);
    for (long id = 2; id < 5; id++) {
      assertThat(firstScheduled(run, id).scheduledTokens()).as("request %d", id).isEqualTo(100 % 16);
    }
    assertThat(run.byId()).extracting(RequestRecord::outcome).containsOnly(RequestOutcome.COMPLETED);
  }

  /**
   * vLLM tests/v1/core/test_async_scheduler.py::test_prefix_caching_for_multi_turn. Five requests
   * (100-token prompts, 200 output tokens) run to the end; then five next-turn requests whose
   * prompts are the previous prompt followed by its 200 output tokens arrive together. vLLM caches
   * the full blocks of generated tokens as well as of the prompt, so each next-turn request is
   * scheduled only 300 % 16 = 12 tokens.
   */
  @Disabled("differs: only prompt blocks enter the prefix cache; a next turn hits 96 of 300 tokens and schedules 204, not 12")
  @Test
  void aNextTurnHitsThePreviousTurnsPromptAndOutput() {
    List<RequestSpec> reqs = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      reqs.add(RequestSpec.simple(i, 0, repeated(i, 100), 200));
    }
    // the previous turn ends after 200 steps (200 ms); the next turn comes a little later. Its
    // prompt repeats the previous prompt and then stands for the 200 generated tokens (whatever
    // ids: this engine does not know which tokens were generated)
    for (int i = 0; i < 5; i++) {
      int[] prompt = TestRequests.concat(repeated(i, 100), repeated(i, 200));
      reqs.add(RequestSpec.simple(10 + i, 300 * STEP_US, prompt, 200));
    }
    RecordedRun run = RecordedRun.of(engine(1000, reqs));
    for (long id = 10; id < 15; id++) {
      assertThat(firstScheduled(run, id).scheduledTokens()).as("request %d", id).isEqualTo(300 % 16);
    }
  }

  private static final String LORA_MODEL = "meta-llama/llama-3.1-8b-instruct";

  private static RecordedRun twoAdapters(String first, String second) {
    List<RequestSpec> reqs = List.of(
        RequestSpec.simple(0, 0, TestRequests.tokens(0, 64), 2).withAdapter(first),
        RequestSpec.simple(1, 500_000, TestRequests.tokens(0, 64), 2).withAdapter(second));
    LoraCosts costs = LoraCosts.of(LoraSpec.of(4), ModelCatalog.resolve(LORA_MODEL), GpuCatalog.resolve("H100"), 1, 32);
    return RecordedRun.of(engine(8192, reqs).lora("", costs));
  }

  /**
   * vLLM tests/v1/core/test_kv_cache_utils.py::test_generate_block_hash_extra_keys_lora, as its
   * consequence for the prefix cache: the LoRA adapter's name is part of every block's hash, so a
   * request served with one adapter never reuses the blocks another adapter computed for the same
   * prompt, while the same adapter does (48 of 64 prompt tokens: three full blocks, the last token
   * always computed). This half, the same adapter reusing its blocks, holds here.
   */
  @Test
  void theSameAdapterReusesItsPromptBlocks() {
    assertThat(twoAdapters("a", "a").byId().get(1).cachedPromptTokens()).isEqualTo(48);
  }

  /**
   * vLLM tests/v1/core/test_kv_cache_utils.py::test_generate_block_hash_extra_keys_lora: the other
   * half. A request with adapter "b" gets no prefix-cache hit on blocks adapter "a" computed for the
   * same prompt.
   */
  @Test
  void anotherAdapterDoesNotReuseThePromptBlocks() {
    assertThat(twoAdapters("a", "b").byId().get(1).cachedPromptTokens()).isZero();
  }

  // ---------------------------------------------------------------- max model length fitted to the cache

  @TempDir Path dir;

  /** A small model whose context is 1,024 tokens. */
  private ModelSpec context1024() throws IOException {
    Path d = Files.createDirectories(dir.resolve("t--ctx-1024"));
    return ModelCatalog.fromFile(Files.writeString(d.resolve("config.json"), """
        {"model_type": "llama", "hidden_size": 256, "intermediate_size": 512, "num_attention_heads": 4,
         "num_key_value_heads": 2, "head_dim": 64, "num_hidden_layers": 2, "vocab_size": 1000,
         "max_position_embeddings": 1024, "torch_dtype": "float16"}
        """));
  }

  /**
   * vLLM tests/v1/core/test_kv_cache_utils.py::test_auto_fit_max_model_len. A model of 1,024
   * tokens' context with its max model length fitted to the cache (blocks of 16): with room for
   * 1,024 blocks it keeps 1,024; with 32 blocks (512 tokens) it is cut, above 0 and below 1,024.
   */
  @Test
  void theMaxModelLengthIsCutToWhatTheCacheHolds() throws IOException {
    ModelSpec m = context1024();
    assertThat(Cluster.autoMaxModelLen(m, 1024, 16)).isEqualTo(1024);
    assertThat(Cluster.autoMaxModelLen(m, 32, 16)).isLessThan(1024).isPositive();
  }

  /**
   * vLLM tests/v1/core/test_kv_cache_utils.py::test_auto_fit_max_model_len_respects_num_gpu_blocks_override.
   * A model of 16,384 tokens' context on a cache overridden to 32 blocks of 16 (ample memory
   * otherwise) is fitted to at most 512 tokens: the fit uses the overridden block count (here the
   * block count the cluster passes, the override when one is given).
   */
  @Test
  void theFitUsesTheOverriddenBlockCount() throws IOException {
    Path d = Files.createDirectories(dir.resolve("t--ctx-16k"));
    ModelSpec m = ModelCatalog.fromFile(Files.writeString(d.resolve("config.json"), """
        {"model_type": "llama", "hidden_size": 256, "intermediate_size": 512, "num_attention_heads": 4,
         "num_key_value_heads": 2, "head_dim": 64, "num_hidden_layers": 2, "vocab_size": 1000,
         "max_position_embeddings": 16384, "torch_dtype": "float16"}
        """));
    assertThat(Cluster.autoMaxModelLen(m, 32, 16)).isPositive().isLessThanOrEqualTo(32 * 16);
  }

  /**
   * vLLM tests/v1/core/test_kv_cache_utils.py::test_auto_fit_max_model_len_reserves_null_block.
   * With exactly the 64 blocks of 16 a 1,024-token request needs, one of them is vLLM's null block,
   * so the fitted max model length is 63 x 16 = 1,008 tokens.
   */
  @Disabled("differs: no null block; autoMaxModelLen fits 64 x 16 = 1,024 tokens into 64 blocks, vLLM 1,008")
  @Test
  void theFitLeavesOutTheNullBlock() throws IOException {
    assertThat(Cluster.autoMaxModelLen(context1024(), 64, 16)).isEqualTo(63 * 16);
  }
}
