package io.blis.engine;

import static io.blis.engine.TestRequests.tokens;
import static org.assertj.core.api.Assertions.assertThat;

import io.blis.engine.result.RequestRecord;
import io.blis.engine.result.SimulationResult;
import io.blis.kvcache.OffloadTier;
import io.blis.kvcache.OffloadTiers;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A prefix found only on a secondary offload tier, timed by hand. */
class SecondaryTierScenarioTest {

  /** One read and one write thread; a transfer of b bytes takes 10 + b/100 us; a block is 1,000 bytes. */
  private static final OffloadTiers DISK = new OffloadTiers(List.of(new OffloadTier(1, 1, 100, 100, 10)), 1000);

  private static SimulationResult run(List<RequestSpec> reqs, OffloadTiers tiers) {
    // every step 100 us plus 10 per token; CPU tier of 3 blocks, each loaded to the GPU in 100 us
    return Simulation.builder().latencyModel(new LinearTestModel(100, 10, 0, 0, 0, 0))
        .source(RequestSource.of(reqs)).recordRequests(true)
        .totalKvBlocks(5).cpuKvTier(3, 100).offloadTiers(tiers).build().run();
  }

  private static RequestRecord only(SimulationResult r, long id) {
    return r.requests().stream().filter(x -> x.id() == id).findFirst().orElseThrow();
  }

  @Test
  void aPrefixOnlyOnTheTierWaitsARoundAndTheReadThenLoadsFromTheCpuTier() {
    int[] prompt = tokens(5, 64);
    List<RequestSpec> reqs = List.of(
        RequestSpec.simple(1, 0, prompt, 2),
        RequestSpec.simple(2, 100_000, tokens(900, 64), 2), // evicts 1's blocks from the GPU and the CPU tier
        RequestSpec.simple(3, 200_000, prompt, 2));
    SimulationResult cpuOnly = run(reqs, OffloadTiers.NONE);
    SimulationResult tiered = run(reqs, DISK);

    // CPU tier alone: request 2's blocks pushed request 1's out, so 3 recomputes 64 tokens
    assertThat(only(cpuOnly, 3).cachedPromptTokens()).isZero();
    assertThat(only(cpuOnly, 3).ttftUs()).isEqualTo(100 + 640);

    // With the tier: a round asking it (1,000 us, the engine has nothing else to run), one read of
    // the 3 blocks into the CPU tier (10 + 3,000/100 us), their load to the GPU (3 x 100 us), then
    // a step of the last 16 tokens
    RequestRecord r = only(tiered, 3);
    assertThat(r.cachedPromptTokens()).isEqualTo(48);
    assertThat(r.schedulingDelayUs()).isEqualTo(Instance.IDLE_ROUND_US + 40 + 300);
    assertThat(r.ttftUs()).isEqualTo(Instance.IDLE_ROUND_US + 40 + 300 + 100 + 160);
    assertThat(tiered.engine().secondaryReadBlocks()).isEqualTo(3);
    assertThat(tiered.engine().cpuLoadedBlocks()).isEqualTo(3);
    // written: 1's first three blocks, 2's first three, 3's fourth; the fourth blocks of 1 and 2
    // found every CPU slot held by a write and were not stored
    assertThat(tiered.engine().secondaryWrittenBlocks()).isEqualTo(7);
    assertThat(tiered.engine().skippedCpuStores()).isEqualTo(2);
    assertThat(tiered.toJson()).contains("\"kv_secondary_read_blocks\" : 3").contains("\"kv_secondary_tiers\" : 1");
    assertThat(cpuOnly.toJson()).doesNotContain("kv_secondary");
    assertThat(run(reqs, DISK).toJson()).isEqualTo(tiered.toJson());
  }

  @Test
  void aSecondRequestForTheSameBlocksWaitsForTheReadAlreadyUnderWay() {
    int[] prompt = tokens(5, 64);
    List<RequestSpec> reqs = List.of(
        RequestSpec.simple(1, 0, prompt, 2),
        RequestSpec.simple(2, 100_000, tokens(900, 64), 2),
        RequestSpec.simple(3, 200_000, prompt, 2),
        RequestSpec.simple(4, 201_010, prompt, 2)); // the read for 3 started at 201,000
    SimulationResult tiered = run(reqs, DISK);
    // 4 arrives while 3 waits for its read (done at 201,040): one read only. At 201,040 3 starts
    // loading the blocks (they are in the GPU's prefix cache from then on, as this project's CPU
    // tier has it) and 4 takes them from there: its 16 tokens run at once, first token at 201,300,
    // second at 201,410 (a decode step of 110 us). 3's load ends at 201,340, during 4's decode
    // step; its 16 tokens run from 201,410 to 201,670.
    assertThat(tiered.engine().secondaryReadBlocks()).isEqualTo(3);
    assertThat(only(tiered, 4).cachedPromptTokens()).isEqualTo(48);
    assertThat(only(tiered, 4).ttftUs()).isEqualTo(201_300 - 201_010);
    assertThat(only(tiered, 3).ttftUs()).isEqualTo(201_670 - 200_000);
  }
}
