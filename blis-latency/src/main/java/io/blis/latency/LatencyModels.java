package io.blis.latency;

import io.blis.api.Coefficients;
import io.blis.api.DeploymentSpec;
import io.blis.api.HardwareSpec;
import io.blis.api.LatencyModel;
import io.blis.api.LatencyModelProvider;
import io.blis.api.ModelSpec;
import io.blis.api.ProviderContext;
import io.blis.api.Providers;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Entry point for building latency models without an engine (calibrators, benchmarks, tools):
 * selects a {@link LatencyModelProvider} by name through {@link Providers} and hands it a context
 * made of the given model, GPU, deployment and coefficients.
 */
public final class LatencyModels {

  /** Name of the default latency model. */
  public static final String DEFAULT = "trained-physics";

  private LatencyModels() {}

  /**
   * A model in which every step takes {@code stepUs} and nothing else takes time (no queueing,
   * scheduling, output-token or preemption time): for benchmarks, warm-ups and tests that exercise
   * the engine or a server rather than a latency model.
   *
   * @throws IllegalArgumentException if {@code stepUs} is below 1
   */
  public static LatencyModel constantStep(long stepUs) {
    if (stepUs < 1) {
      throw new IllegalArgumentException("a step must take at least 1 us, got " + stepUs);
    }
    return new LatencyModel() {
      @Override
      public long stepTime(io.blis.api.BatchView batch) {
        return stepUs;
      }

      @Override
      public long queueingTime(io.blis.api.RequestView request) {
        return 0;
      }

      @Override
      public long outputTokenProcessingTime() {
        return 0;
      }

      @Override
      public long schedulingProcessingTime() {
        return 0;
      }

      @Override
      public long preemptionProcessingTime() {
        return 0;
      }
    };
  }

  /** Names of every latency model on the class path, sorted. */
  public static List<String> names() {
    return Providers.names(LatencyModelProvider.class);
  }

  /**
   * Builds the latency model {@code name} for one instance.
   *
   * @param coefficients user coefficients, or {@link Coefficients#empty()} for the bundled defaults
   * @throws IllegalArgumentException if no model has that name (the message lists them) or the
   *     model rejects the inputs
   */
  public static LatencyModel create(
      String name, ModelSpec model, HardwareSpec gpu, DeploymentSpec deployment,
      Coefficients coefficients) {
    return create(name, model, gpu, deployment, coefficients, Map.of());
  }

  /**
   * As {@link #create(String, ModelSpec, HardwareSpec, DeploymentSpec, Coefficients)} with
   * free-form provider options, the ones {@code --option KEY=VALUE} gives (for example {@code
   * sampling=plain} for trained-physics).
   */
  public static LatencyModel create(
      String name, ModelSpec model, HardwareSpec gpu, DeploymentSpec deployment,
      Coefficients coefficients, Map<String, String> options) {
    return Providers.select(LatencyModelProvider.class, name)
        .create(new Context(model, gpu, deployment, coefficients, Map.copyOf(options)));
  }

  /**
   * As {@link #create(String, ModelSpec, HardwareSpec, DeploymentSpec, Coefficients)} for a
   * deployment of which only the tensor parallelism matters (vLLM defaults for the rest: blocks of
   * 16 tokens, 256 sequences, 8192 batched tokens, utilization 0.9).
   */
  public static LatencyModel create(
      String name, ModelSpec model, HardwareSpec gpu, int tensorParallel,
      Coefficients coefficients) {
    return create(name, model, gpu, new TpOnly(tensorParallel), coefficients);
  }

  /** As {@link #create(String, ModelSpec, HardwareSpec, int, Coefficients)} with provider options. */
  public static LatencyModel create(
      String name, ModelSpec model, HardwareSpec gpu, int tensorParallel,
      Coefficients coefficients, Map<String, String> options) {
    return create(name, model, gpu, new TpOnly(tensorParallel), coefficients, options);
  }

  private record Context(
      ModelSpec model,
      HardwareSpec hardware,
      DeploymentSpec deployment,
      Coefficients coefficients,
      Map<String, String> options)
      implements ProviderContext {
    Context {
      Objects.requireNonNull(model, "model");
      Objects.requireNonNull(hardware, "hardware");
      Objects.requireNonNull(deployment, "deployment");
      Objects.requireNonNull(coefficients, "coefficients");
    }
  }

  private record TpOnly(int tensorParallel) implements DeploymentSpec {
    @Override
    public int blockSizeTokens() {
      return 16;
    }

    @Override
    public int maxNumSeqs() {
      return 256;
    }

    @Override
    public int maxNumBatchedTokens() {
      return 8192;
    }

    @Override
    public int maxModelLen() {
      return 0;
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
}
