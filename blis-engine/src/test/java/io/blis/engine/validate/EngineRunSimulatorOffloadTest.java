package io.blis.engine.validate;

import static org.assertj.core.api.Assertions.assertThat;

import io.blis.api.Coefficients;
import io.blis.workload.inferenceperf.InferencePerfProfile;
import io.blis.workload.inferenceperf.LoadStage;
import io.blis.workload.inferenceperf.SharedPrefixData;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A recorded CPU offload tier changes a run whose GPU KV cache cannot hold its prompts. */
class EngineRunSimulatorOffloadTest {

  private static Experiment withKv(Experiment b, long gpuBlocks, long cpuBytes) {
    // 40 distinct 600-token prompts cycled at 6 req/s: they do not all stay cached in 300 blocks
    InferencePerfProfile p = new InferencePerfProfile(new SharedPrefixData(4, 10, 100, 500, 20),
        List.of(new LoadStage(6, 40)), 1, 300);
    return new Experiment(b.id() + "-kv" + gpuBlocks + "-cpu" + cpuBytes, b.model(), b.modelConfig(),
        b.gpu(), b.tp(), b.dp(), b.maxModelLen(), b.maxNumBatchedTokens(), b.maxNumSeqs(),
        b.gpuMemoryUtilization(), b.blockSizeTokens(), gpuBlocks, cpuBytes, b.workloadName(), p,
        false, b.observed(), b.trace());
  }

  @Test
  void recordedCpuOffloadIsSimulated() {
    Experiment base = ExperimentsFile.read(TraceFixtures.resource("experiments-small.json")).get(0);
    EngineRunSimulator sim = new EngineRunSimulator(EngineRunSimulator.Mode.SYNTHETIC, "trained-physics", 3);
    RunSummary gpuOnly = sim.simulate(withKv(base, 300, 0), Coefficients.empty(), 0);
    RunSummary offload = sim.simulate(withKv(base, 300, 8L << 30), Coefficients.empty(), 0);
    RunSummary roomy = sim.simulate(withKv(base, 20_000, 0), Coefficients.empty(), 0);
    RunSummary roomyOffload = sim.simulate(withKv(base, 20_000, 8L << 30), Coefficients.empty(), 0);
    // prompts evicted from the small GPU cache are reloaded from the CPU tier instead of recomputed
    assertThat(offload).isNotEqualTo(gpuOnly);
    // with room for every prompt on the GPU the tier is never used
    assertThat(roomyOffload).isEqualTo(roomy);
  }
}
