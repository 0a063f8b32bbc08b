package io.blis.bench;

import io.blis.api.Coefficients;
import io.blis.api.HardwareSpec;
import io.blis.api.LatencyModel;
import io.blis.api.ModelSpec;
import io.blis.engine.Deployment;
import io.blis.engine.EngineLimits;
import io.blis.engine.Simulation;
import io.blis.engine.result.SimulationResult;
import io.blis.latency.LatencyModels;
import io.blis.latency.catalog.GpuCatalog;
import io.blis.latency.catalog.ModelCatalog;
import io.blis.workload.RequestSource;
import io.blis.workload.inferenceperf.InferencePerfProfile;
import io.blis.workload.inferenceperf.InferencePerfProfiles;
import io.blis.workload.inferenceperf.InferencePerfWorkload;
import io.blis.workload.synthetic.LengthSpec;
import io.blis.workload.synthetic.SyntheticWorkload;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Whole simulations, end to end through the public API: Llama-2-7B on one H100 with the
 * {@code trained-physics} latency model and the ground-truth deployment (128 sequences, 2048
 * tokens per step, max-model-len 4096, 7462 KV blocks of 16 tokens).
 *
 * <ul>
 *   <li>{@code codegen-9000}: the codegen ground-truth workload regenerated as inference-perf sent
 *       it (10 x 10 shared-prefix prompts of 100 + 466 tokens, 247 output tokens; 5 req/s for
 *       600 s, then 10 req/s for 600 s: 9000 requests, about 1200 simulated seconds);
 *   <li>{@code synthetic-10k}: 10,000 Poisson arrivals at 20 req/s, prompts of 512 +- 128 tokens,
 *       outputs of 128 +- 32 tokens.
 * </ul>
 *
 * <p>One operation is one whole run (the primary score is runs per second); the secondary scores
 * are simulated requests completed and engine steps executed per second of wall time.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(1)
public class SimulationBenchmark {

  /** The codegen profile of the ground truth, in inference-perf's YAML shape (load and data). */
  static final String CODEGEN_PROFILE = """
      load:
        type: constant
        interval: 1
        stages:
        - rate: 5
          duration: 600
        - rate: 10
          duration: 600
      data:
        type: shared_prefix
        shared_prefix:
          num_groups: 10
          num_prompts_per_group: 10
          system_prompt_len: 100
          question_len: 466
          output_len: 247
      """;

  static final EngineLimits LIMITS = new EngineLimits(128, 2048, 0, 4096);
  static final long KV_BLOCKS = 7462;
  static final int BLOCK_TOKENS = 16;
  static final long SEED = 42;

  /** Which workload. */
  @Param({"codegen-9000", "synthetic-10k"})
  public String workload;

  private LatencyModel model;
  private InferencePerfProfile codegen;

  @Setup
  public void setUp() {
    ModelSpec spec = ModelCatalog.byName("meta-llama/Llama-2-7b-hf");
    HardwareSpec gpu = GpuCatalog.byName("H100");
    model = LatencyModels.create("trained-physics", spec, gpu,
        Deployment.of(LIMITS, 1, BLOCK_TOKENS, KV_BLOCKS, 0.9), Coefficients.empty());
    codegen = InferencePerfProfiles.parse(CODEGEN_PROFILE, "codegen profile");
  }

  RequestSource source() {
    return switch (workload) {
      case "codegen-9000" -> InferencePerfWorkload.synthetic(codegen, SEED);
      case "synthetic-10k" -> SyntheticWorkload.poissonGaussian(20.0, 10_000,
          new LengthSpec(512, 128, 1, 3000), new LengthSpec(128, 32, 1, 1000), 0, SEED);
      default -> throw new IllegalArgumentException(
          "unknown workload '" + workload + "'; expected codegen-9000 or synthetic-10k");
    };
  }

  /** One whole run with streaming metrics. */
  SimulationResult simulate() {
    return Simulation.builder()
        .latencyModel(model)
        .limits(LIMITS)
        .totalKvBlocks(KV_BLOCKS)
        .blockSizeTokens(BLOCK_TOKENS)
        .source(source())
        .streamingMetrics(true)
        .build()
        .run();
  }

  @Benchmark
  public SimulationResult run(SimRunCounters counters) {
    SimulationResult result = simulate();
    counters.add(result);
    return result;
  }
}
