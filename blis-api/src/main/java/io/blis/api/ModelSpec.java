package io.blis.api;

/**
 * The architecture of a served model, as read from its HuggingFace {@code config.json}. Sizes are
 * counts (not bytes) unless the name says otherwise. Dense models report 0 experts.
 */
public interface ModelSpec {

  /** Model name, e.g. {@code meta-llama/Llama-2-7b-hf}. */
  String name();

  int numLayers();

  int hiddenSize();

  int numAttentionHeads();

  /** Key/value heads (equal to attention heads for multi-head attention, fewer for GQA). */
  int numKeyValueHeads();

  /** Dimension of one attention head ({@code head_dim}, or hidden size / heads). */
  int headDim();

  /** FFN width of dense layers. */
  int intermediateSize();

  int vocabSize();

  /** Maximum positions after rope scaling, or 0 when unknown. */
  int maxPositionEmbeddings();

  /** Bytes of one activation / KV element (2 for fp16 and bf16, 4 for fp32). */
  int activationBytes();

  /** Bytes of one weight parameter after quantization (2 for bf16, 1 for fp8/int8, 0.5 for 4-bit). */
  double weightBytesPerParam();

  /** Whether input embeddings and LM head share weights. */
  boolean tieWordEmbeddings();

  /** Routed experts per MoE layer; 0 for a dense model. */
  int numExperts();

  /** Experts each token is routed to (top-k); 0 for a dense model. */
  int expertsPerToken();

  /** FFN width of one routed expert (equal to intermediate size when not given separately). */
  int moeIntermediateSize();

  /** Total FFN width of the shared experts of an MoE layer; 0 when there are none. */
  int sharedExpertIntermediateSize();

  /** Number of layers with an MoE FFN; the others are dense. 0 for a dense model. */
  int numMoeLayers();

  /**
   * The architecture family, as {@code config.json}'s {@code model_type} names it ({@code llama},
   * {@code qwen3}, {@code mixtral}, ...); empty when unknown. Latency models need not read it; it
   * tells how far a model is from those a model's coefficients were fitted on.
   */
  default String family() {
    return "";
  }

  /** True when the model routes tokens to experts. */
  default boolean isMoe() {
    return numExperts() > 1;
  }

  // ---------------------------------------------------------------- multi-head latent attention

  /**
   * Rank of the compressed key/value latent of multi-head latent attention (DeepSeek-V2/V3 {@code
   * kv_lora_rank}); 0 for ordinary (multi-head or grouped-query) attention. When it is above 0 the
   * KV cache holds {@code kvLoraRank + qkRopeHeadDim} elements per token and layer, and {@link
   * #numKeyValueHeads()} and {@link #headDim()} do not describe the cache.
   */
  default int kvLoraRank() {
    return 0;
  }

  /** Rank of the low-rank query projection ({@code q_lora_rank}); 0 when queries are projected directly. */
  default int qLoraRank() {
    return 0;
  }

  /** Per-head query/key dimension without rotary embedding ({@code qk_nope_head_dim}); MLA only. */
  default int qkNopeHeadDim() {
    return 0;
  }

  /** Per-head query/key dimension carrying the rotary embedding ({@code qk_rope_head_dim}); MLA only. */
  default int qkRopeHeadDim() {
    return 0;
  }

  /** Per-head value dimension ({@code v_head_dim}); MLA only. */
  default int vHeadDim() {
    return 0;
  }

  /** True when attention is multi-head latent attention ({@link #kvLoraRank()} above 0). */
  default boolean usesLatentAttention() {
    return kvLoraRank() > 0;
  }
}
