package io.blis.api;

/**
 * The architecture of a served model, as read from its HuggingFace {@code config.json}. Sizes are
 * counts (not bytes) unless the name says otherwise. Dense models report 0 experts.
 */
public interface ModelSpec {

  /** {@return the model name, e.g. {@code meta-llama/Llama-2-7b-hf}} */
  String name();

  /** {@return the number of transformer blocks ({@code num_hidden_layers})} */
  int numLayers();

  /** {@return the model width ({@code hidden_size})} */
  int hiddenSize();

  /** {@return the number of query heads ({@code num_attention_heads})} */
  int numAttentionHeads();

  /**
   * {@return the number of key/value heads} Equal to {@link #numAttentionHeads()} for multi-head
   * attention, fewer for GQA.
   */
  int numKeyValueHeads();

  /** {@return the dimension of one attention head ({@code head_dim}, or hidden size / heads)} */
  int headDim();

  /** {@return the FFN width of dense layers ({@code intermediate_size})} */
  int intermediateSize();

  /** {@return the vocabulary size ({@code vocab_size})} */
  int vocabSize();

  /** {@return the maximum positions after rope scaling, or 0 when unknown} */
  int maxPositionEmbeddings();

  /** {@return the bytes of one activation / KV element (2 for fp16 and bf16, 4 for fp32)} */
  int activationBytes();

  /**
   * {@return the bytes of one weight parameter after quantization (2 for bf16, 1 for fp8/int8, 0.5
   * for 4-bit)}
   */
  double weightBytesPerParam();

  /** {@return whether input embeddings and LM head share weights} */
  boolean tieWordEmbeddings();

  /** {@return the routed experts per MoE layer; 0 for a dense model} */
  int numExperts();

  /** {@return the experts each token is routed to (top-k); 0 for a dense model} */
  int expertsPerToken();

  /**
   * {@return the FFN width of one routed expert} Equal to {@link #intermediateSize()} when not
   * given separately.
   */
  int moeIntermediateSize();

  /** {@return the total FFN width of the shared experts of an MoE layer; 0 when there are none} */
  int sharedExpertIntermediateSize();

  /** {@return the number of layers with an MoE FFN} The others are dense. 0 for a dense model. */
  int numMoeLayers();

  /**
   * The architecture family, as {@code config.json}'s {@code model_type} names it ({@code llama},
   * {@code qwen3}, {@code mixtral}, ...); empty when unknown. Latency models need not read it; it
   * tells how far a model is from those a model's coefficients were fitted on.
   *
   * @return the lower-case {@code model_type}, or empty
   */
  default String family() {
    return "";
  }

  /** {@return true when the model routes tokens to experts (more than one expert)} */
  default boolean isMoe() {
    return numExperts() > 1;
  }

  /**
   * Bytes of one routed-expert weight after quantization, when the experts are stored apart from the
   * rest (gpt-oss keeps its experts in MXFP4, 4.25 bits a weight, and attention in bf16); by default
   * the model's {@link #weightBytesPerParam()}.
   *
   * @return bytes per expert weight parameter
   */
  default double expertWeightBytesPerParam() {
    return weightBytesPerParam();
  }

  /**
   * Bytes of one KV-cache element as the server stores it: 1 when vLLM runs with {@code
   * --kv-cache-dtype fp8} (e4m3 or e5m2), else the model's {@link #activationBytes()} ({@code
   * auto}). It sizes the KV cache and the bytes decode attention reads; the activations keep their
   * width.
   *
   * @return bytes per KV-cache element, at least 1
   */
  default int kvCacheBytesPerElement() {
    return activationBytes();
  }

  // ---------------------------------------------------------------- sliding-window attention

  /**
   * {@return how many layers attend only to the last {@link #slidingWindow()} tokens (gpt-oss,
   * Gemma 2/3); 0 when every layer attends to the whole context}
   */
  default int slidingWindowLayers() {
    return 0;
  }

  /** {@return the sliding window of those layers in tokens; 0 when no layer has one} */
  default int slidingWindow() {
    return 0;
  }

  // ---------------------------------------------------------------- recurrent-state layers

  /**
   * {@return how many layers keep a constant state per request instead of a KV entry per token:
   * Mamba/Mamba2 mixers and linear attention (Qwen3-Next's gated delta net, Kimi's KDA); 0 for a
   * transformer} They count in {@link #numLayers()}; the other layers attend.
   */
  default int recurrentLayers() {
    return 0;
  }

  /**
   * {@return the bytes of one request's state in one recurrent layer (convolution and SSM or
   * linear-attention state together), over all tensor-parallel ranks; 0 without such layers}
   */
  default long recurrentStateBytesPerLayer() {
    return 0L;
  }

  /**
   * {@return the weights of one recurrent layer's mixer (its projections in and out, convolution and
   * gates), which replace the attention weights in those layers; 0 when unknown (counted as an
   * attention layer's)}
   */
  default long recurrentParamsPerLayer() {
    return 0L;
  }

  // ---------------------------------------------------------------- multi-head latent attention

  /**
   * Rank of the compressed key/value latent of multi-head latent attention (DeepSeek-V2/V3 {@code
   * kv_lora_rank}); 0 for ordinary (multi-head or grouped-query) attention. When it is above 0 the
   * KV cache holds {@code kvLoraRank + qkRopeHeadDim} elements per token and layer, and {@link
   * #numKeyValueHeads()} and {@link #headDim()} do not describe the cache.
   *
   * @return the latent rank, or 0
   */
  default int kvLoraRank() {
    return 0;
  }

  /**
   * {@return the rank of the low-rank query projection ({@code q_lora_rank}); 0 when queries are
   * projected directly}
   */
  default int qLoraRank() {
    return 0;
  }

  /**
   * {@return the per-head query/key dimension without rotary embedding ({@code qk_nope_head_dim})}
   * MLA only; 0 otherwise.
   */
  default int qkNopeHeadDim() {
    return 0;
  }

  /**
   * {@return the per-head query/key dimension carrying the rotary embedding ({@code
   * qk_rope_head_dim})} MLA only; 0 otherwise.
   */
  default int qkRopeHeadDim() {
    return 0;
  }

  /** {@return the per-head value dimension ({@code v_head_dim})} MLA only; 0 otherwise. */
  default int vHeadDim() {
    return 0;
  }

  /**
   * {@return true when attention is multi-head latent attention ({@link #kvLoraRank()} above 0)}
   */
  default boolean usesLatentAttention() {
    return kvLoraRank() > 0;
  }
}
