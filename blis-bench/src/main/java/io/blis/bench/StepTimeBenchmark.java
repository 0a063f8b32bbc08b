package io.blis.bench;

import io.blis.api.Coefficients;
import io.blis.api.HardwareSpec;
import io.blis.api.LatencyModel;
import io.blis.api.ModelSpec;
import io.blis.latency.LatencyModels;
import io.blis.latency.catalog.GpuCatalog;
import io.blis.latency.catalog.ModelCatalog;
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
 * Time of one {@link LatencyModel#stepTime} call, in nanoseconds, for a 128-request mixed batch
 * (4 prefill chunks of up to 512 tokens, 124 decodes at contexts of 100 to 4000 tokens) on H100,
 * for each ground-truth model deployment and each built-in latency model. Requirement: under 1
 * ms; target: under 1 us.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class StepTimeBenchmark {

  /** Model and tensor parallelism, as {@code name:tp}. */
  @Param({"meta-llama/Llama-2-7b-hf:1", "meta-llama/Llama-2-70b-hf:4", "mistralai/Mixtral-8x7B-v0.1:2"})
  public String deployment;

  /** Latency model name. */
  @Param({"blackbox", "roofline", "trained-physics"})
  public String latencyModel;

  private LatencyModel model;
  private BenchBatch batch;

  @Setup
  public void setUp() {
    int colon = deployment.lastIndexOf(':');
    ModelSpec spec = ModelCatalog.byName(deployment.substring(0, colon));
    int tp = Integer.parseInt(deployment.substring(colon + 1));
    HardwareSpec gpu = GpuCatalog.byName("H100");
    model = LatencyModels.create(latencyModel, spec, gpu, tp, Coefficients.empty());
    batch = BenchBatch.mixed(128, 4, 20260217L);
  }

  @Benchmark
  public long stepTime() {
    return model.stepTime(batch);
  }
}
