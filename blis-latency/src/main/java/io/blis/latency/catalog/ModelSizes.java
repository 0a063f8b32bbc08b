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
 *
 * <p>Multi-head latent attention (DeepSeek-V2/V3, {@link ModelSpec#usesLatentAttention()}), with H
 * heads, hidden d, r_q = {@code q_lora_rank}, r_kv = {@code kv_lora_rank}, n = {@code
 * qk_nope_head_dim}, p = {@code qk_rope_head_dim}, v = {@code v_head_dim}, as vLLM loads it:
 *
 * <pre>
 *   query      r_q &gt; 0: d x r_q (q_a_proj) + r_q (q_a_layernorm) + r_q x H(n+p) (q_b_proj)
 *              r_q = 0: d x H(n+p) (q_proj)
 *   KV down    d x (r_kv + p)   (kv_a_proj_with_mqa: the latent and the shared rope key)
 *              + r_kv           (kv_a_layernorm)
 *   KV up      r_kv x H(n+v)    (kv_b_proj: per-head nope keys and values from the latent)
 *   output     H v x d          (o_proj)
 *   KV cache   layers x (r_kv + p) elements per token: one latent, not K and V per head, and the
 *              same on every tensor-parallel rank (vLLM replicates it rather than splitting heads)
 * </pre>
 *
 * The multi-token-prediction layers of DeepSeek-V3 ({@code num_nextn_predict_layers}) are not
 * counted: vLLM loads them only for speculative decoding.
 */
public final class ModelSizes {

  private ModelSizes() {}

  /** Matrices of one FFN: 3 for gated (SwiGLU/GeGLU) FFNs, 2 otherwise. */
  public static int mlpMatrices(ModelSpec m) {
    return m instanceof ModelConfig c && !c.gatedMlp() ? 2 : 3;
  }

  /**
   * Parameters of the attention block of one layer: Q, K, V, O projections; for latent attention
   * the four {@code mla*} matrices below plus the {@code q_a_layernorm} (r_q) and {@code
   * kv_a_layernorm} (r_kv) weights.
   */
  public static long attentionParamsPerLayer(ModelSpec m) {
    if (m.usesLatentAttention()) {
      return mlaQueryParamsPerLayer(m) + mlaKvDownParamsPerLayer(m) + mlaKvUpParamsPerLayer(m)
          + mlaOutputParamsPerLayer(m) + m.qLoraRank() + m.kvLoraRank();
    }
    long d = m.hiddenSize();
    long q = (long) m.numAttentionHeads() * m.headDim();
    long kv = (long) m.numKeyValueHeads() * m.headDim();
    return d * (2 * q + 2 * kv);
  }

  /**
   * Weights of the query projection of one latent-attention layer (matrices only): {@code d x r_q
   * + r_q x H(n+p)} through the low-rank query ({@code q_a_proj}, {@code q_b_proj}) when {@code
   * q_lora_rank} r_q is above 0, else {@code d x H(n+p)} ({@code q_proj}). 0 for ordinary attention.
   */
  public static long mlaQueryParamsPerLayer(ModelSpec m) {
    if (!m.usesLatentAttention()) {
      return 0;
    }
    long d = m.hiddenSize();
    long q = (long) m.numAttentionHeads() * (m.qkNopeHeadDim() + m.qkRopeHeadDim());
    long rq = m.qLoraRank();
    return rq > 0 ? d * rq + rq * q : d * q;
  }

  /**
   * Weights of the KV down-projection of one latent-attention layer, {@code d x (r_kv + p)} ({@code
   * kv_a_proj_with_mqa}: the compressed latent and the rope key shared by all heads, which together
   * are what the KV cache holds). 0 for ordinary attention.
   */
  public static long mlaKvDownParamsPerLayer(ModelSpec m) {
    if (!m.usesLatentAttention()) {
      return 0;
    }
    return (long) m.hiddenSize() * (m.kvLoraRank() + m.qkRopeHeadDim());
  }

  /**
   * Weights of the KV up-projection of one latent-attention layer, {@code r_kv x H(n+v)} ({@code
   * kv_b_proj}: every head's nope key and value from the latent). 0 for ordinary attention.
   */
  public static long mlaKvUpParamsPerLayer(ModelSpec m) {
    if (!m.usesLatentAttention()) {
      return 0;
    }
    return (long) m.kvLoraRank() * m.numAttentionHeads() * (m.qkNopeHeadDim() + m.vHeadDim());
  }

  /**
   * Weights of the output projection of one latent-attention layer, {@code H v x d} ({@code
   * o_proj}). 0 for ordinary attention.
   */
  public static long mlaOutputParamsPerLayer(ModelSpec m) {
    if (!m.usesLatentAttention()) {
      return 0;
    }
    return (long) m.numAttentionHeads() * m.vHeadDim() * m.hiddenSize();
  }

  /**
   * Weights of one latent-attention layer that vLLM keeps whole on every tensor-parallel GPU: the
   * query and latent down-projections and their norms ({@code d r_q + r_q + d (r_kv + p) + r_kv}).
   * 0 for ordinary attention.
   */
  public static long mlaReplicatedParamsPerLayer(ModelSpec m) {
    if (!m.usesLatentAttention()) {
      return 0;
    }
    long d = m.hiddenSize();
    long rq = m.qLoraRank();
    return (rq > 0 ? d * rq + rq : 0) + mlaKvDownParamsPerLayer(m) + m.kvLoraRank();
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
        + mixerParams(m) + m.numLayers() * 2 * d
        + denseLayers * denseMlpParamsPerLayer(m)
        + moeLayers * moeParamsPerLayer(m);
  }

  /**
   * Parameters of every layer's token mixer: attention in the attending layers, the recurrent mixer
   * (Mamba, linear attention) in the others ({@link ModelSpec#recurrentParamsPerLayer()}, or an
   * attention layer's when unknown).
   */
  public static long mixerParams(ModelSpec m) {
    return (long) mixerParams(m, attentionParamsPerLayer(m));
  }

  /**
   * As {@link #mixerParams(ModelSpec)} with {@code attention} parameters in an attending layer (a
   * GPU's count under tensor parallelism, say); a recurrent layer whose mixer is unknown counts as
   * one of those.
   */
  public static double mixerParams(ModelSpec m, double attention) {
    double recurrent = m.recurrentParamsPerLayer() > 0 ? m.recurrentParamsPerLayer() : attention;
    return attentionLayers(m) * attention + m.recurrentLayers() * recurrent;
  }

  /** Parameters of all routed experts of the model (0 for a dense model). */
  public static double routedExpertParams(ModelSpec m) {
    return m.isMoe() ? (double) m.numMoeLayers() * m.numExperts() * expertParams(m) : 0.0;
  }

  /**
   * Bytes of all weights of the model: the routed experts at {@link
   * ModelSpec#expertWeightBytesPerParam()}, the rest at its weight precision.
   */
  public static double weightBytes(ModelSpec m) {
    double experts = routedExpertParams(m);
    return (parameterCount(m) - experts) * m.weightBytesPerParam() + experts * m.expertWeightBytesPerParam();
  }

  /**
   * The share of the layers that attend to the whole context (1 without sliding-window layers): the
   * share of a token's KV bytes that stays in the cache for as long as its request.
   */
  public static double fullAttentionShare(ModelSpec m) {
    return (double) (attentionLayers(m) - m.slidingWindowLayers()) / attentionLayers(m);
  }

  /**
   * Layers that attend and so keep KV per token: all but the recurrent (Mamba, linear-attention)
   * ones, sliding-window layers included.
   */
  public static int attentionLayers(ModelSpec m) {
    return m.numLayers() - m.recurrentLayers();
  }

  /** Bytes of one request's recurrent state over all its recurrent layers and TP ranks (0 for a transformer). */
  public static long recurrentStateBytes(ModelSpec m) {
    return m.recurrentLayers() * m.recurrentStateBytesPerLayer();
  }

  /**
   * KV heads one GPU holds under tensor parallelism {@code tp}: KV heads are split over the GPUs,
   * and replicated (one per GPU) when there are fewer KV heads than GPUs, as vLLM does. Meaningless
   * under latent attention, whose cache has no heads (every GPU holds the whole latent): use {@link
   * #kvBytesPerTokenPerGpu} for sizes.
   */
  public static int kvHeadsPerGpu(ModelSpec m, int tp) {
    return Math.max(1, (m.numKeyValueHeads() + tp - 1) / tp);
  }

  /**
   * Bytes of KV cache one token occupies on one GPU: {@code 2 (K and V) x layers x KV heads per GPU
   * x head_dim x KV-cache element bytes}; under latent attention the whole-model figure of {@link
   * #kvBytesPerToken} whatever {@code tp}, since every GPU keeps the whole latent.
   */
  public static long kvBytesPerTokenPerGpu(ModelSpec m, int tp) {
    if (m.usesLatentAttention()) {
      return kvBytesPerToken(m);
    }
    return 2L * attentionLayers(m) * kvHeadsPerGpu(m, tp) * m.headDim() * m.kvCacheBytesPerElement();
  }

  /**
   * Bytes of KV cache one token occupies over the whole model: {@code 2 x layers x KV heads x
   * head_dim x activation bytes}; under latent attention {@code layers x (kv_lora_rank +
   * qk_rope_head_dim) x activation bytes} (one latent per token and layer, no separate K and V).
   */
  public static long kvBytesPerToken(ModelSpec m) {
    if (m.usesLatentAttention()) {
      return (long) attentionLayers(m) * (m.kvLoraRank() + m.qkRopeHeadDim()) * m.kvCacheBytesPerElement();
    }
    return 2L * attentionLayers(m) * m.numKeyValueHeads() * m.headDim() * m.kvCacheBytesPerElement();
  }

  /** Whether vLLM can split the model's attention over {@code tp} GPUs (see {@link #checkTensorParallel}). */
  public static boolean splitsOver(ModelSpec m, int tp) {
    int kv = m.numKeyValueHeads();
    return tp >= 1 && m.numAttentionHeads() % tp == 0
        && (m.usesLatentAttention() || kv % tp == 0 || tp % kv == 0);
  }

  /**
   * Checks that the model can be split over {@code tp} GPUs as vLLM requires: the attention heads
   * divide over the GPUs, and the KV heads and {@code tp} divide one another (not required under
   * latent attention, whose cache is replicated on every GPU and has no KV heads to divide).
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
    if (!m.usesLatentAttention() && kv % tp != 0 && tp % kv != 0) {
      throw new IllegalArgumentException(
          m.name() + ": num_key_value_heads (" + kv + ") and tensor parallelism " + tp
              + " must divide one another");
    }
  }
}
