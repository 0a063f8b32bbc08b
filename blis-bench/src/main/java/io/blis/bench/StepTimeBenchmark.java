package io.blis.bench;

import io.blis.api.Coefficients;
import io.blis.api.DeploymentSpec;
import io.blis.api.HardwareSpec;
import io.blis.api.LatencyModel;
import io.blis.api.LatencyModelProvider;
import io.blis.api.ModelSpec;
import io.blis.api.ProviderContext;
import io.blis.api.Providers;
import io.blis.latency.catalog.GpuCatalog;
import io.blis.latency.catalog.ModelCatalog;
import java.util.Map;
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
    model =
        Providers.select(LatencyModelProvider.class, latencyModel)
            .create(new Context(spec, gpu, new Deployment(tp)));
    batch = BenchBatch.mixed(128, 4, 20260217L);
  }

  @Benchmark
  public long stepTime() {
    return model.stepTime(batch);
  }

  private record Deployment(int tensorParallel) implements DeploymentSpec {
    @Override
    public int blockSizeTokens() {
      return 16;
    }

    @Override
    public int maxNumSeqs() {
      return 128;
    }

    @Override
    public int maxNumBatchedTokens() {
      return 2048;
    }

    @Override
    public int maxModelLen() {
      return 4096;
    }

    @Override
    public long totalKvBlocks() {
      return 0;
    }

    @Override
    public double gpuMemoryUtilization() {
      return 0.9;
    }
  }

  private record Context(ModelSpec model, HardwareSpec hardware, DeploymentSpec deployment)
      implements ProviderContext {
    @Override
    public Coefficients coefficients() {
      return Coefficients.empty();
    }

    @Override
    public Map<String, String> options() {
      return Map.of();
    }
  }
}
