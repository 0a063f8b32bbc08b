package io.blis.latency.catalog;

import io.blis.api.ModelSpec;

/**
 * The architecture of a transformer model as read from a HuggingFace {@code config.json}: an
 * immutable, validated {@link ModelSpec}. Sizes are element counts (not bytes) unless the name
 * says otherwise.
 *
 * <p>Build one with {@link ModelCatalog#byName(String)} or {@link ModelCatalog#fromFile} (which
 * parse and validate HF configs), or directly with the canonical constructor, which checks the
 * same invariants and throws {@link IllegalArgumentException} naming the offending field.
 *
 * @param name model name, e.g. {@code meta-llama/Llama-2-7b-hf}
 * @param numLayers transformer blocks ({@code num_hidden_layers})
 * @param hiddenSize model width ({@code hidden_size})
 * @param numAttentionHeads query heads
 * @param numKeyValueHeads key/value heads (fewer than query heads for GQA)
 * @param headDim dimension of one head ({@code head_dim}, else hidden / heads)
 * @param intermediateSize FFN width of the dense layers
 * @param vocabSize vocabulary size
 * @param maxPositionEmbeddings maximum positions after rope scaling, 0 when unknown
 * @param activationBytes bytes of one activation / KV-cache element (2 for fp16/bf16, 4 for fp32)
 * @param weightBytesPerParam bytes of one weight after quantization (2 bf16, 1 fp8/int8, 0.5 int4)
 * @param tieWordEmbeddings whether the LM head shares the input embedding matrix
 * @param numExperts routed experts per MoE layer, 0 for dense models
 * @param expertsPerToken experts each token is routed to (top-k), 0 for dense models
 * @param moeIntermediateSize FFN width of one routed expert
 * @param sharedExpertIntermediateSize total FFN width of the shared experts of an MoE layer
 * @param numMoeLayers layers whose FFN is an MoE block; 0 for dense models
 * @param gatedMlp whether the FFN has three matrices (gate, up, down: SwiGLU/GeGLU) rather than two
 * @param truncatedSampling whether requests that set no sampling parameters are sampled with top-p
 *     or top-k truncation, which sorts each request's logits every step: vLLM takes its default
 *     sampling parameters from the model's {@code generation_config.json} (see {@link
 *     ModelCatalog})
 * @param family {@code config.json}'s {@code model_type} (lower case), empty when unknown
 * @param mla the shape of multi-head latent attention (DeepSeek-V2/V3), {@link Mla#NONE} for
 *     ordinary multi-head or grouped-query attention. For MLA, {@link ModelCatalog} sets {@code
 *     numKeyValueHeads} to {@code numAttentionHeads} and {@code headDim} to {@code
 *     qk_nope_head_dim + qk_rope_head_dim} (the query/key width of one head); neither describes the
 *     KV cache, which holds one latent of {@code kv_lora_rank + qk_rope_head_dim} elements per token
 *     and layer (see {@link ModelSizes})
 * @param variants what sets a few architectures apart: experts stored at another precision,
 *     sliding-window layers ({@link Variants#NONE} for none)
 */
public record ModelConfig(
    String name,
    int numLayers,
    int hiddenSize,
    int numAttentionHeads,
    int numKeyValueHeads,
    int headDim,
    int intermediateSize,
    int vocabSize,
    int maxPositionEmbeddings,
    int activationBytes,
    double weightBytesPerParam,
    boolean tieWordEmbeddings,
    int numExperts,
    int expertsPerToken,
    int moeIntermediateSize,
    int sharedExpertIntermediateSize,
    int numMoeLayers,
    boolean gatedMlp,
    boolean truncatedSampling,
    String family,
    Mla mla,
    Variants variants)
    implements ModelSpec {

  /**
   * Architecture details of some models, validated by {@link ModelConfig}.
   *
   * @param expertWeightBytes bytes of one routed-expert weight when the experts are quantized apart
   *     from the rest (gpt-oss: MXFP4, 4.25 bits); 0 when they are stored like every other weight
   * @param slidingWindowLayers layers that attend only to the last {@code slidingWindow} tokens
   * @param slidingWindow the window of those layers in tokens (0 when there are none)
   * @param kvCacheBytes bytes of one KV-cache element when the cache is stored apart from the
   *     activations (1 for vLLM's {@code --kv-cache-dtype fp8}); 0 for the activations' width
   * @param recurrentLayers layers with a constant state per request (Mamba mixers, linear
   *     attention) instead of KV per token
   * @param recurrentStateBytes bytes of one request's state in one such layer, all TP ranks together
   * @param recurrentParams weights of one recurrent layer's mixer (0: as an attention layer's)
   */
  public record Variants(double expertWeightBytes, int slidingWindowLayers, int slidingWindow,
      int kvCacheBytes, int recurrentLayers, long recurrentStateBytes, long recurrentParams) {

    /** Nothing apart. */
    public static final Variants NONE = new Variants(0, 0, 0, 0, 0, 0, 0);

    /** Experts stored apart and sliding-window layers only. */
    public Variants(double expertWeightBytes, int slidingWindowLayers, int slidingWindow) {
      this(expertWeightBytes, slidingWindowLayers, slidingWindow, 0, 0, 0, 0);
    }

    /** These variants with the KV cache stored at {@code bytes} bytes an element (0: the activations'). */
    public Variants withKvCacheBytes(int bytes) {
      return new Variants(expertWeightBytes, slidingWindowLayers, slidingWindow, bytes, recurrentLayers,
          recurrentStateBytes, recurrentParams);
    }

    private void check(String model, int layers) {
      if (!(expertWeightBytes >= 0) || expertWeightBytes > 4) {
        throw new IllegalArgumentException(model + ": expert weight bytes must be in [0, 4], got " + expertWeightBytes);
      }
      if (slidingWindowLayers < 0 || slidingWindowLayers > layers) {
        throw new IllegalArgumentException(model + ": sliding-window layers must be in [0, " + layers + "], got "
            + slidingWindowLayers);
      }
      if ((slidingWindowLayers > 0) != (slidingWindow > 0) || slidingWindow < 0) {
        throw new IllegalArgumentException(model + ": sliding_window (" + slidingWindow + ") must be above 0 exactly"
            + " when some layer slides (" + slidingWindowLayers + " do)");
      }
      if (kvCacheBytes != 0 && kvCacheBytes != 1 && kvCacheBytes != 2 && kvCacheBytes != 4) {
        throw new IllegalArgumentException(model + ": KV-cache element bytes must be 1, 2 or 4 (0: the activations'),"
            + " got " + kvCacheBytes);
      }
      if (recurrentLayers < 0 || (recurrentLayers > 0 && recurrentLayers + slidingWindowLayers >= layers)) {
        throw new IllegalArgumentException(model + ": recurrent (Mamba / linear-attention) layers must be in [0, "
            + (layers - 1 - slidingWindowLayers) + "] so that some layer attends, got " + recurrentLayers);
      }
      if (recurrentParams < 0) {
        throw new IllegalArgumentException(model + ": a recurrent layer's weights must be >= 0, got " + recurrentParams);
      }
      if ((recurrentLayers > 0) != (recurrentStateBytes > 0) || recurrentStateBytes < 0) {
        throw new IllegalArgumentException(model + ": a recurrent layer's state per request (" + recurrentStateBytes
            + " bytes) must be above 0 exactly when there are recurrent layers (" + recurrentLayers + ")");
      }
    }
  }

  /** As the canonical constructor, with no {@link Variants}. */
  public ModelConfig(String name, int numLayers, int hiddenSize, int numAttentionHeads,
      int numKeyValueHeads, int headDim, int intermediateSize, int vocabSize,
      int maxPositionEmbeddings, int activationBytes, double weightBytesPerParam,
      boolean tieWordEmbeddings, int numExperts, int expertsPerToken, int moeIntermediateSize,
      int sharedExpertIntermediateSize, int numMoeLayers, boolean gatedMlp, boolean truncatedSampling,
      String family, Mla mla) {
    this(name, numLayers, hiddenSize, numAttentionHeads, numKeyValueHeads, headDim,
        intermediateSize, vocabSize, maxPositionEmbeddings, activationBytes, weightBytesPerParam,
        tieWordEmbeddings, numExperts, expertsPerToken, moeIntermediateSize,
        sharedExpertIntermediateSize, numMoeLayers, gatedMlp, truncatedSampling, family, mla, Variants.NONE);
  }

  /**
   * The dimensions of multi-head latent attention, as named in a DeepSeek {@code config.json}.
   * Validated by {@link ModelConfig}, whose messages name the model.
   *
   * @param kvLoraRank rank of the compressed key/value latent ({@code kv_lora_rank}); 0 = no MLA
   * @param qLoraRank rank of the low-rank query projection ({@code q_lora_rank}); 0 when queries
   *     are projected directly from the hidden state (DeepSeek-V2-Lite)
   * @param qkNopeHeadDim per-head query/key width without rotary embedding ({@code qk_nope_head_dim})
   * @param qkRopeHeadDim per-head query/key width with rotary embedding, shared by all heads on the
   *     key side ({@code qk_rope_head_dim})
   * @param vHeadDim per-head value width ({@code v_head_dim})
   */
  public record Mla(
      int kvLoraRank, int qLoraRank, int qkNopeHeadDim, int qkRopeHeadDim, int vHeadDim) {

    /** Ordinary (not latent) attention. */
    public static final Mla NONE = new Mla(0, 0, 0, 0, 0);

    /** Whether these are the dimensions of latent attention ({@code kvLoraRank} above 0). */
    public boolean present() {
      return kvLoraRank > 0;
    }

    /** Query/key width of one head, {@code qk_nope_head_dim + qk_rope_head_dim}. */
    public int qkHeadDim() {
      return qkNopeHeadDim + qkRopeHeadDim;
    }

    private void check(String model) {
      nonNegative(model, "kv_lora_rank", kvLoraRank);
      nonNegative(model, "q_lora_rank", qLoraRank);
      nonNegative(model, "qk_nope_head_dim", qkNopeHeadDim);
      nonNegative(model, "qk_rope_head_dim", qkRopeHeadDim);
      nonNegative(model, "v_head_dim", vHeadDim);
      if (present()) {
        forLatent(model, "qk_nope_head_dim", qkNopeHeadDim);
        forLatent(model, "qk_rope_head_dim", qkRopeHeadDim);
        forLatent(model, "v_head_dim", vHeadDim);
      }
    }

    private static void nonNegative(String model, String key, int value) {
      if (value < 0) {
        throw new IllegalArgumentException(model + ": " + key + " must be >= 0, got " + value);
      }
    }

    private void forLatent(String model, String key, int value) {
      if (value == 0) {
        throw new IllegalArgumentException(
            model + ": " + key + " is missing or 0, but multi-head latent attention (kv_lora_rank "
                + kvLoraRank + ") needs it above 0");
      }
    }
  }

  /** A model sampled without truncation by default (no top-p or top-k). */
  public ModelConfig(String name, int numLayers, int hiddenSize, int numAttentionHeads,
      int numKeyValueHeads, int headDim, int intermediateSize, int vocabSize,
      int maxPositionEmbeddings, int activationBytes, double weightBytesPerParam,
      boolean tieWordEmbeddings, int numExperts, int expertsPerToken, int moeIntermediateSize,
      int sharedExpertIntermediateSize, int numMoeLayers, boolean gatedMlp) {
    this(name, numLayers, hiddenSize, numAttentionHeads, numKeyValueHeads, headDim,
        intermediateSize, vocabSize, maxPositionEmbeddings, activationBytes, weightBytesPerParam,
        tieWordEmbeddings, numExperts, expertsPerToken, moeIntermediateSize,
        sharedExpertIntermediateSize, numMoeLayers, gatedMlp, false, "");
  }

  /** As the canonical constructor, without a known family. */
  public ModelConfig(String name, int numLayers, int hiddenSize, int numAttentionHeads,
      int numKeyValueHeads, int headDim, int intermediateSize, int vocabSize,
      int maxPositionEmbeddings, int activationBytes, double weightBytesPerParam,
      boolean tieWordEmbeddings, int numExperts, int expertsPerToken, int moeIntermediateSize,
      int sharedExpertIntermediateSize, int numMoeLayers, boolean gatedMlp, boolean truncatedSampling) {
    this(name, numLayers, hiddenSize, numAttentionHeads, numKeyValueHeads, headDim,
        intermediateSize, vocabSize, maxPositionEmbeddings, activationBytes, weightBytesPerParam,
        tieWordEmbeddings, numExperts, expertsPerToken, moeIntermediateSize,
        sharedExpertIntermediateSize, numMoeLayers, gatedMlp, truncatedSampling, "", Mla.NONE);
  }

  /** As the canonical constructor, for ordinary (not latent) attention. */
  public ModelConfig(String name, int numLayers, int hiddenSize, int numAttentionHeads,
      int numKeyValueHeads, int headDim, int intermediateSize, int vocabSize,
      int maxPositionEmbeddings, int activationBytes, double weightBytesPerParam,
      boolean tieWordEmbeddings, int numExperts, int expertsPerToken, int moeIntermediateSize,
      int sharedExpertIntermediateSize, int numMoeLayers, boolean gatedMlp, boolean truncatedSampling,
      String family) {
    this(name, numLayers, hiddenSize, numAttentionHeads, numKeyValueHeads, headDim,
        intermediateSize, vocabSize, maxPositionEmbeddings, activationBytes, weightBytesPerParam,
        tieWordEmbeddings, numExperts, expertsPerToken, moeIntermediateSize,
        sharedExpertIntermediateSize, numMoeLayers, gatedMlp, truncatedSampling, family, Mla.NONE);
  }

  /** Validates every field; messages name the field and the model. */
  public ModelConfig {
    if (name == null || name.isBlank()) {
      throw new IllegalArgumentException("model name must not be empty");
    }
    family = family == null ? "" : family.strip().toLowerCase(java.util.Locale.ROOT);
    mla = mla == null ? Mla.NONE : mla;
    mla.check(name);
    variants = variants == null ? Variants.NONE : variants;
    variants.check(name, numLayers);
    positive(name, "num_hidden_layers", numLayers);
    positive(name, "hidden_size", hiddenSize);
    positive(name, "num_attention_heads", numAttentionHeads);
    positive(name, "num_key_value_heads", numKeyValueHeads);
    positive(name, "head_dim", headDim);
    positive(name, "intermediate_size", intermediateSize);
    positive(name, "vocab_size", vocabSize);
    if (maxPositionEmbeddings < 0) {
      throw new IllegalArgumentException(
          name + ": max_position_embeddings must be >= 0, got " + maxPositionEmbeddings);
    }
    if (activationBytes != 1 && activationBytes != 2 && activationBytes != 4) {
      throw new IllegalArgumentException(
          name + ": activation bytes must be 1, 2 or 4 (from torch_dtype), got " + activationBytes);
    }
    if (!(weightBytesPerParam > 0) || weightBytesPerParam > 4) {
      throw new IllegalArgumentException(
          name + ": weight bytes per parameter must be in (0, 4], got " + weightBytesPerParam);
    }
    if (numAttentionHeads % numKeyValueHeads != 0) {
      throw new IllegalArgumentException(
          name + ": num_attention_heads (" + numAttentionHeads
              + ") must be a multiple of num_key_value_heads (" + numKeyValueHeads + ")");
    }
    if (numExperts < 0 || expertsPerToken < 0 || numMoeLayers < 0
        || sharedExpertIntermediateSize < 0) {
      throw new IllegalArgumentException(
          name + ": expert counts and sizes must be >= 0 (num_experts " + numExperts
              + ", num_experts_per_tok " + expertsPerToken + ", MoE layers " + numMoeLayers
              + ", shared expert size " + sharedExpertIntermediateSize + ")");
    }
    if (numExperts > 1) {
      if (expertsPerToken < 1 || expertsPerToken > numExperts) {
        throw new IllegalArgumentException(
            name + ": num_experts_per_tok must be in [1, " + numExperts + "] for an MoE model, got "
                + expertsPerToken);
      }
      positive(name, "moe_intermediate_size", moeIntermediateSize);
      if (numMoeLayers < 1 || numMoeLayers > numLayers) {
        throw new IllegalArgumentException(
            name + ": the number of MoE layers must be in [1, " + numLayers + "], got "
                + numMoeLayers);
      }
    } else if (numMoeLayers != 0) {
      throw new IllegalArgumentException(
          name + ": a dense model (num_experts " + numExperts + ") cannot have " + numMoeLayers
              + " MoE layers");
    }
  }

  private static void positive(String model, String field, int value) {
    if (value <= 0) {
      throw new IllegalArgumentException(model + ": " + field + " must be > 0, got " + value);
    }
  }

  /** Width of all query heads together ({@code heads x head_dim}). */
  public int queryDim() {
    return numAttentionHeads * headDim;
  }

  /**
   * Width of all key (or value) heads together ({@code kv_heads x head_dim}). Not the width of the
   * KV cache under multi-head latent attention, which caches one shared latent instead.
   */
  public int kvDim() {
    return numKeyValueHeads * headDim;
  }

  /** Layers whose FFN is dense ({@code numLayers - numMoeLayers}). */
  public int numDenseLayers() {
    return numLayers - numMoeLayers;
  }

  /** Total number of weight parameters (embeddings, attention, FFN or experts, norms, LM head). */
  public long parameterCount() {
    return ModelSizes.parameterCount(this);
  }

  /** Bytes of all weights, the routed experts at {@link #expertWeightBytesPerParam()}. */
  public double weightBytes() {
    return ModelSizes.weightBytes(this);
  }

  /**
   * Whether {@code m}'s default sampling truncates the distribution: {@link #truncatedSampling()}
   * of a {@code ModelConfig}; any other {@link ModelSpec} carries no generation config and is
   * sampled plainly.
   */
  public static boolean truncatesSampling(ModelSpec m) {
    return m instanceof ModelConfig c && c.truncatedSampling();
  }

  /** The same model with another default sampling (top-p/top-k truncation or not). */
  public ModelConfig withTruncatedSampling(boolean truncated) {
    return new ModelConfig(name, numLayers, hiddenSize, numAttentionHeads, numKeyValueHeads,
        headDim, intermediateSize, vocabSize, maxPositionEmbeddings, activationBytes,
        weightBytesPerParam, tieWordEmbeddings, numExperts, expertsPerToken, moeIntermediateSize,
        sharedExpertIntermediateSize, numMoeLayers, gatedMlp, truncated, family, mla, variants);
  }

  /**
   * The same model served with its KV cache in {@code dtype}, vLLM's {@code --kv-cache-dtype}:
   * {@code auto} (the activations' width), {@code fp8}, {@code fp8_e4m3} or {@code fp8_e5m2} (one
   * byte), {@code bfloat16}/{@code float16}/{@code half} (two).
   *
   * @throws IllegalArgumentException for another name, naming the ones accepted
   */
  public ModelConfig withKvCacheDtype(String dtype) {
    return withVariants(variants.withKvCacheBytes(kvCacheBytesOf(dtype)));
  }

  /**
   * Bytes of one KV-cache element of vLLM's {@code --kv-cache-dtype} {@code dtype}, 0 for {@code
   * auto} (the model's activation width).
   *
   * @throws IllegalArgumentException for a name vLLM does not accept here
   */
  public static int kvCacheBytesOf(String dtype) {
    String d = dtype == null ? "auto" : dtype.strip().toLowerCase(java.util.Locale.ROOT);
    return switch (d) {
      case "auto" -> 0;
      case "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc", "fp8_ds_mla" -> 1;
      case "bfloat16", "float16", "half", "bf16", "fp16" -> 2;
      default -> throw new IllegalArgumentException("kv-cache-dtype must be auto, fp8, fp8_e4m3, fp8_e5m2, bfloat16"
          + " or float16, got '" + dtype + "'");
    };
  }

  /** The same model with other {@link Variants}. */
  public ModelConfig withVariants(Variants v) {
    return new ModelConfig(name, numLayers, hiddenSize, numAttentionHeads, numKeyValueHeads,
        headDim, intermediateSize, vocabSize, maxPositionEmbeddings, activationBytes,
        weightBytesPerParam, tieWordEmbeddings, numExperts, expertsPerToken, moeIntermediateSize,
        sharedExpertIntermediateSize, numMoeLayers, gatedMlp, truncatedSampling, family, mla, v);
  }

  /**
   * The first {@code layers} layers of this model on their own, named {@code name}, with its
   * embedding and LM head: what a speculative drafter built from the model's own layers runs (an
   * EAGLE head, DeepSeek's MTP module). MoE layers stay MoE as far as there are any; no sliding or
   * recurrent layers are kept.
   *
   * @throws IllegalArgumentException when {@code layers} is not in [1, numLayers]
   */
  public ModelConfig truncated(String name, int layers) {
    if (layers < 1 || layers > numLayers) {
      throw new IllegalArgumentException(this.name + ": a drafter of " + layers + " layers must have 1 to "
          + numLayers + " layers");
    }
    int moe = Math.min(numMoeLayers, layers);
    return new ModelConfig(name, layers, hiddenSize, numAttentionHeads, numKeyValueHeads,
        headDim, intermediateSize, vocabSize, maxPositionEmbeddings, activationBytes,
        weightBytesPerParam, tieWordEmbeddings, moe > 0 ? numExperts : 0, moe > 0 ? expertsPerToken : 0,
        moeIntermediateSize, moe > 0 ? sharedExpertIntermediateSize : 0, moe, gatedMlp, false, family, mla,
        new Variants(variants.expertWeightBytes(), 0, 0, variants.kvCacheBytes(), 0, 0, 0));
  }

  @Override
  public int kvCacheBytesPerElement() {
    return variants.kvCacheBytes() > 0 ? variants.kvCacheBytes() : activationBytes;
  }

  @Override
  public int recurrentLayers() {
    return variants.recurrentLayers();
  }

  @Override
  public long recurrentStateBytesPerLayer() {
    return variants.recurrentStateBytes();
  }

  @Override
  public long recurrentParamsPerLayer() {
    return variants.recurrentParams();
  }

  @Override
  public double expertWeightBytesPerParam() {
    return variants.expertWeightBytes() > 0 ? variants.expertWeightBytes() : weightBytesPerParam;
  }

  @Override
  public int slidingWindowLayers() {
    return variants.slidingWindowLayers();
  }

  @Override
  public int slidingWindow() {
    return variants.slidingWindow();
  }

  @Override
  public int kvLoraRank() {
    return mla.kvLoraRank();
  }

  @Override
  public int qLoraRank() {
    return mla.qLoraRank();
  }

  @Override
  public int qkNopeHeadDim() {
    return mla.qkNopeHeadDim();
  }

  @Override
  public int qkRopeHeadDim() {
    return mla.qkRopeHeadDim();
  }

  @Override
  public int vHeadDim() {
    return mla.vHeadDim();
  }
}
