package io.blis.latency.catalog;

import io.blis.api.ModelSpec;

/**
 * Parameter counts and KV-cache sizes derived from a {@link ModelSpec}: the one place where the
 * shape of a decoder-only transformer is turned into element and byte counts. Counts are
 * parameters (elements); byte figures say so in their name.
 *
 * <p>Layout assumed: per layer, Q/K/V/O projections ({@code d x (2 q + 2 kv)} with q = heads x
 * head_dim, kv = KV heads x head_dim) and two RMS norms; an FFN of three matrices (gated, SwiGLU)
 * or two; MoE layers hold every routed expert, a router ({@code d x experts}) and optional shared
 * experts; input embedding, final norm, and an LM head unless tied.
 */
public final class ModelSizes {

  private ModelSizes() {}

  /** Matrices of one FFN: 3 for gated (SwiGLU/GeGLU) FFNs, 2 otherwise. */
  public static int mlpMatrices(ModelSpec m) {
    return m instanceof ModelConfig c && !c.gatedMlp() ? 2 : 3;
  }

  /** Parameters of the attention block of one layer (Q, K, V, O projections). */
  public static long attentionParamsPerLayer(ModelSpec m) {
    long d = m.hiddenSize();
    long q = (long) m.numAttentionHeads() * m.headDim();
    long kv = (long) m.numKeyValueHeads() * m.headDim();
    return d * (2 * q + 2 * kv);
  }

  /** Parameters of one dense FFN. */
  public static long denseMlpParamsPerLayer(ModelSpec m) {
    return (long) mlpMatrices(m) * m.hiddenSize() * m.intermediateSize();
  }

  /** Parameters of one routed expert. */
  public static long expertParams(ModelSpec m) {
    return (long) mlpMatrices(m) * m.hiddenSize() * m.moeIntermediateSize();
  }

  /** Parameters of the shared experts of one MoE layer (0 when none). */
  public static long sharedExpertParamsPerLayer(ModelSpec m) {
    return (long) mlpMatrices(m) * m.hiddenSize() * m.sharedExpertIntermediateSize();
  }

  /** Parameters of the FFN of one MoE layer: all experts, router and shared experts. */
  public static long moeParamsPerLayer(ModelSpec m) {
    return m.numExperts() * expertParams(m)
        + (long) m.hiddenSize() * m.numExperts()
        + sharedExpertParamsPerLayer(m);
  }

  /** Input embedding plus (unless tied) LM head parameters. */
  public static long embeddingParams(ModelSpec m) {
    long table = (long) m.vocabSize() * m.hiddenSize();
    return m.tieWordEmbeddings() ? table : 2 * table;
  }

  /** Total weight parameters of the model. */
  public static long parameterCount(ModelSpec m) {
    long d = m.hiddenSize();
    int moeLayers = m.isMoe() ? m.numMoeLayers() : 0;
    int denseLayers = m.numLayers() - moeLayers;
    return embeddingParams(m)
        + d // final norm
        + m.numLayers() * (attentionParamsPerLayer(m) + 2 * d)
        + denseLayers * denseMlpParamsPerLayer(m)
        + moeLayers * moeParamsPerLayer(m);
  }

  /** Bytes of all weights of the model, at its weight precision. */
  public static double weightBytes(ModelSpec m) {
    return parameterCount(m) * m.weightBytesPerParam();
  }

  /**
   * KV heads one GPU holds under tensor parallelism {@code tp}: KV heads are split over the GPUs,
   * and replicated (one per GPU) when there are fewer KV heads than GPUs, as vLLM does.
   */
  public static int kvHeadsPerGpu(ModelSpec m, int tp) {
    return Math.max(1, (m.numKeyValueHeads() + tp - 1) / tp);
  }

  /**
   * Bytes of KV cache one token occupies on one GPU: {@code 2 (K and V) x layers x KV heads per GPU
   * x head_dim x activation bytes}.
   */
  public static long kvBytesPerTokenPerGpu(ModelSpec m, int tp) {
    return 2L * m.numLayers() * kvHeadsPerGpu(m, tp) * m.headDim() * m.activationBytes();
  }

  /** Bytes of KV cache one token occupies over the whole model (all layers and KV heads). */
  public static long kvBytesPerToken(ModelSpec m) {
    return 2L * m.numLayers() * m.numKeyValueHeads() * m.headDim() * m.activationBytes();
  }

  /** Whether vLLM can split the model's attention over {@code tp} GPUs (see {@link #checkTensorParallel}). */
  public static boolean splitsOver(ModelSpec m, int tp) {
    int kv = m.numKeyValueHeads();
    return tp >= 1 && m.numAttentionHeads() % tp == 0 && (kv % tp == 0 || tp % kv == 0);
  }

  /**
   * Checks that the model can be split over {@code tp} GPUs as vLLM requires.
   *
   * @throws IllegalArgumentException naming the model and the count that does not divide
   */
  public static void checkTensorParallel(ModelSpec m, int tp) {
    if (tp < 1) {
      throw new IllegalArgumentException("tensor parallelism must be >= 1, got " + tp);
    }
    if (m.numAttentionHeads() % tp != 0) {
      throw new IllegalArgumentException(
          m.name() + ": num_attention_heads (" + m.numAttentionHeads()
              + ") is not divisible by tensor parallelism " + tp);
    }
    int kv = m.numKeyValueHeads();
    if (kv % tp != 0 && tp % kv != 0) {
      throw new IllegalArgumentException(
          m.name() + ": num_key_value_heads (" + kv + ") and tensor parallelism " + tp
              + " must divide one another");
    }
  }
}
