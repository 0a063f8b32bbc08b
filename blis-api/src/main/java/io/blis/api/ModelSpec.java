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
}
