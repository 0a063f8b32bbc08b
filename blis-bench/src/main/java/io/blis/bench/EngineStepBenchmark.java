package io.blis.bench;

import io.blis.api.LatencyModel;
import io.blis.engine.EngineLimits;
import io.blis.engine.Simulation;
import io.blis.engine.result.SimulationResult;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
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
 * Cost of the engine loop per step: batch formation, KV growth, event queue, token emission and
 * metrics, with a constant-time latency model (10 ms per step) so that nothing but the engine is
 * measured.
 *
 * <p>One operation is one whole simulation, through the public API: {@code runningRequests}
 * requests with distinct 64-token prompts arrive at time 0 and each decodes 768 tokens, on a pool
 * of 7462 blocks of 16 tokens (large enough: no preemption), so all but the first few steps are
 * steady-state decode steps of {@code runningRequests} requests. The primary score is
 * simulations per second; the secondary {@code steps} score is engine steps per second of wall
 * time (its inverse is the cost of one step), {@code requests} is completed requests per second.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class EngineStepBenchmark {

  static final int PROMPT_TOKENS = 64;
  static final int OUTPUT_TOKENS = 768;
  static final long STEP_US = 10_000;

  /** Requests decoding together in the steady state. */
  @Param({"128"})
  public int runningRequests;

  private List<RequestSpec> requests;

  /** A latency model that charges {@link #STEP_US} per step and nothing else. */
  static final LatencyModel CONSTANT = io.blis.latency.LatencyModels.constantStep(STEP_US);

  @Setup
  public void setUp() {
    SplittableRandom rnd = new SplittableRandom(20260217L);
    requests = new ArrayList<>(runningRequests);
    for (int i = 0; i < runningRequests; i++) {
      int[] prompt = new int[PROMPT_TOKENS];
      for (int k = 0; k < prompt.length; k++) {
        prompt[k] = 3 + rnd.nextInt(31997);
      }
      requests.add(RequestSpec.simple(i, 0, prompt, OUTPUT_TOKENS));
    }
  }

  /** One simulation of the whole batch; its steps and completions feed the counters. */
  SimulationResult simulate() {
    return Simulation.builder()
        .latencyModel(CONSTANT)
        .limits(new EngineLimits(256, 2048, 0, 0))
        .totalKvBlocks(KvCacheBenchmark.TOTAL_BLOCKS)
        .blockSizeTokens(KvCacheBenchmark.BLOCK_TOKENS)
        .source(RequestSource.of(requests))
        .streamingMetrics(true)
        .build()
        .run();
  }

  @Benchmark
  public SimulationResult steadyDecode(SimRunCounters counters) {
    SimulationResult result = simulate();
    counters.add(result);
    return result;
  }
}
