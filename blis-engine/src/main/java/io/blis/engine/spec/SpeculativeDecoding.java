package io.blis.engine.spec;

import io.blis.api.LatencyModel;
import io.blis.api.LatencyModelProvider;
import io.blis.api.ModelSpec;
import io.blis.api.ProviderContext;
import io.blis.latency.catalog.ModelCatalog;
import io.blis.latency.catalog.ModelConfig;
import io.blis.latency.catalog.ModelSizes;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.IntFunction;

/**
 * Builds a pool's speculative decoding: the drafter's model, the latency models that charge its
 * passes, and what it takes from the KV cache.
 */
public final class SpeculativeDecoding {

  private SpeculativeDecoding() {}

  /**
   * The drafter's architecture: a head of {@code config.draftLayers()} layers of the target's shape
   * (EAGLE, EAGLE-3, MTP, Medusa), the separate draft model's config, or null for n-gram.
   *
   * @throws IllegalArgumentException when the target is not a catalog model a head can be cut
   *     from, or the draft model cannot be read
   */
  public static ModelSpec drafter(ModelSpec target, SpeculativeConfig config) {
    SpeculativeMethod m = config.method();
    if (!m.gpuDrafter()) {
      return null;
    }
    if (m == SpeculativeMethod.DRAFT_MODEL) {
      String d = config.draftModel();
      ModelConfig c = Files.isRegularFile(Path.of(d)) ? ModelCatalog.fromFile(Path.of(d)) : ModelCatalog.byName(d);
      if (c.vocabSize() != target.vocabSize()) {
        throw new IllegalArgumentException("draft model " + c.name() + " has a vocabulary of " + c.vocabSize()
            + " tokens and " + target.name() + " one of " + target.vocabSize() + "; vLLM needs them to be the same");
      }
      return target.kvCacheBytesPerElement() != c.activationBytes() ? c.withKvCacheDtype(
          target.kvCacheBytesPerElement() == 1 ? "fp8" : "auto") : c;
    }
    if (!(target instanceof ModelConfig t)) {
      throw new IllegalArgumentException(m.vllmName() + " drafts with layers of " + target.name()
          + "'s own shape, which needs a model read from a config.json");
    }
    return t.truncated(t.name() + " " + m.vllmName() + " drafter", Math.min(config.draftLayers(), t.numLayers()));
  }

  /**
   * The latency models of a pool's instances with speculation: each instance's target model wrapped
   * in a {@link SpeculativeModel} with its own drafter model and {@link Speculator}.
   *
   * @param targets the pool's latency models by instance index
   * @param gpuModels the provider of the pool's GPU model (the drafter's passes are GPU time only)
   * @param target the pool's provider context
   * @param draft the drafter's architecture ({@link #drafter}), null for n-gram
   * @param config the speculation
   * @param seed the simulation's seed
   * @param pool the pool's name (instances of different pools draw apart)
   */
  public static IntFunction<LatencyModel> models(IntFunction<LatencyModel> targets, LatencyModelProvider gpuModels,
      ProviderContext target, ModelSpec draft, SpeculativeConfig config, long seed, String pool) {
    ProviderContext draftContext = draft == null ? null : new DrafterContext(draft, target);
    if (draftContext != null) {
      gpuModels.create(draftContext); // fails fast on a drafter the provider cannot price
    }
    long poolSeed = seed ^ ((long) pool.hashCode() << 32);
    return i -> new SpeculativeModel(targets.apply(i), draftContext == null ? null : gpuModels.create(draftContext),
        new Speculator(config, poolSeed, i));
  }

  /** The target's provider context with the drafter's model. */
  private record DrafterContext(ModelSpec model, ProviderContext target) implements ProviderContext {
    @Override
    public io.blis.api.HardwareSpec hardware() {
      return target.hardware();
    }

    @Override
    public io.blis.api.DeploymentSpec deployment() {
      return target.deployment();
    }

    @Override
    public io.blis.api.Coefficients coefficients() {
      return target.coefficients();
    }

    @Override
    public java.util.Map<String, String> options() {
      return target.options();
    }

    @Override
    public long seed() {
      return target.seed();
    }
  }

  /**
   * The share of the KV cache left to the target's blocks when the drafter's layers keep their KV in
   * the same blocks (vLLM allocates the drafter's attention layers beside the target's): target
   * bytes per token over target and drafter bytes per token; 1 without a GPU drafter.
   */
  public static double targetKvShare(ModelSpec target, ModelSpec drafter, int tp) {
    if (drafter == null) {
      return 1.0;
    }
    double t = ModelSizes.kvBytesPerTokenPerGpu(target, tp);
    double d = ModelSizes.kvBytesPerTokenPerGpu(drafter, tp);
    return t / (t + d);
  }

  /**
   * The drafter's weights on one GPU of the target's tensor-parallel group (vLLM loads them before it
   * sizes the KV cache); 0 without a GPU drafter. A head built from the target shares its embedding
   * and LM head, so only its layers count.
   */
  public static double drafterWeightBytesPerGpu(ModelSpec drafter, SpeculativeConfig config, int tp) {
    if (drafter == null) {
      return 0.0;
    }
    double bytes = ModelSizes.weightBytes(drafter);
    if (config.method().headOfTarget()) {
      bytes -= ModelSizes.embeddingParams(drafter) * drafter.weightBytesPerParam();
    }
    return Math.max(0.0, bytes) / tp;
  }
}
