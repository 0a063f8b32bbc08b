package io.blis.latency.catalog;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.blis.latency.coeff.InputTrees;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The bundled HuggingFace model configs, looked up by name, and the parser of {@code config.json}
 * files.
 *
 * <p>Bundled: every model of the ground-truth campaign (Llama-2 7B/70B, Mixtral 8x7B/8x22B,
 * CodeLlama-34B, Llama-3.1 8B/70B, Qwen2.5-7B, Qwen3-14B, Yi-34B, Mistral-Nemo, Llama-4-Scout
 * FP8), and the multi-head latent attention models DeepSeek-V3, DeepSeek-R1 (FP8) and
 * DeepSeek-V2-Lite. Lookup is case-insensitive and accepts the full HF name ({@code meta-llama/Llama-2-7b-hf}),
 * the part after the slash ({@code llama-2-7b-hf}), and short aliases ({@code llama-2-7b}).
 *
 * <p>Keys read from {@code config.json} (a nested {@code text_config} is flattened over the top
 * level): {@code num_hidden_layers}, {@code hidden_size}, {@code num_attention_heads}, {@code
 * intermediate_size} and {@code vocab_size} (required); {@code num_key_value_heads} (default: the
 * attention heads), {@code head_dim} (default hidden / heads), {@code torch_dtype}/{@code dtype},
 * {@code max_position_embeddings} with {@code rope_scaling}, {@code tie_word_embeddings}, {@code
 * model_type} (two-matrix FFN for gpt2/opt/falcon-style models, gated otherwise); MoE: {@code num_local_experts | num_experts | moe_num_experts | n_routed_experts},
 * {@code num_experts_per_tok | moe_top_k}, {@code moe_intermediate_size}, {@code
 * intermediate_size_mlp} (dense FFN of Llama-4), {@code shared_expert_intermediate_size} or {@code
 * n_shared_experts}, {@code interleave_moe_layer_step | decoder_sparse_step | moe_layer_freq},
 * {@code first_k_dense_replace}; multi-head latent attention (when {@code kv_lora_rank} is above
 * 0): {@code kv_lora_rank}, {@code q_lora_rank} (null or absent: 0), {@code qk_nope_head_dim},
 * {@code qk_rope_head_dim} and {@code v_head_dim} (required), the KV heads then being the attention
 * heads and the head dimension {@code qk_nope_head_dim + qk_rope_head_dim}; quantization: {@code quantization_config} ({@code quant_method: fp8},
 * {@code bits}, compressed-tensors {@code config_groups.*.weights.num_bits}; {@code mxfp4}: the
 * routed experts at 4.25 bits, the rest at the checkpoint's dtype); sliding-window layers: the
 * {@code sliding_attention} entries of {@code layer_types}, with {@code sliding_window}. DBRX's
 * nested {@code attn_config} and {@code ffn_config} are read under the top level ({@code d_model},
 * {@code n_heads}, {@code n_layers}, {@code max_seq_len}, {@code kv_n_heads}, {@code ffn_hidden_size},
 * {@code moe_num_experts}, {@code moe_top_k}).
 *
 * <p>Default sampling ({@link ModelConfig#truncatedSampling()}): vLLM takes the sampling parameters
 * of requests that set none from the model's {@code generation_config.json}. Read from a {@code
 * generation_config.json} beside the {@code config.json} when there is one, else from the
 * published defaults of the bundled model of the same name ({@code models/generation-defaults.json}),
 * else none (plain sampling). Truncated = temperature above 0 (default 1) with {@code top_p < 1}
 * or {@code top_k > 0}.
 */
public final class ModelCatalog {

  /**
   * Model types whose configs give the experts' FFN width as {@code moe_intermediate_size}, apart
   * from {@code intermediate_size} (their dense layers' or shared expert's); in other MoE configs
   * (Mixtral, PhiMoE, OLMoE, Llama 4, gpt-oss) {@code intermediate_size} is the experts' width.
   */
  private static final java.util.Set<String> OWN_EXPERT_WIDTH = java.util.Set.of("deepseek_v2", "deepseek_v3",
      "qwen2_moe", "qwen3_moe", "qwen3_next", "glm4_moe", "ernie4_5_moe", "dots1", "hunyuan_v1_moe", "bailing_moe");


  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String RESOURCE_DIR = "/io/blis/latency/models/";

  /** Short aliases; the full name and the part after the slash are always accepted too. */
  private static final Map<String, String> ALIASES =
      Map.ofEntries(
          Map.entry("llama-2-7b", "meta-llama/Llama-2-7b-hf"),
          Map.entry("llama-2-70b", "meta-llama/Llama-2-70b-hf"),
          Map.entry("mixtral-8x7b", "mistralai/Mixtral-8x7B-v0.1"),
          Map.entry("mixtral-8x22b", "mistralai/Mixtral-8x22B-v0.1"),
          Map.entry("mixtral-8x22b-instruct", "mistralai/Mixtral-8x22B-Instruct-v0.1"),
          Map.entry("codellama-34b", "codellama/CodeLlama-34b-Instruct-hf"),
          Map.entry("llama-3.1-8b", "meta-llama/Llama-3.1-8B-Instruct"),
          Map.entry("llama-3.1-70b", "meta-llama/Llama-3.1-70B-Instruct"),
          Map.entry("qwen2.5-7b", "Qwen/Qwen2.5-7B-Instruct"),
          Map.entry("qwen3-14b", "Qwen/Qwen3-14B"),
          Map.entry("yi-34b", "01-ai/Yi-34B"),
          Map.entry("mistral-nemo", "mistralai/Mistral-Nemo-Instruct-2407"),
          Map.entry("llama-4-scout", "RedHatAI/Llama-4-Scout-17B-16E-Instruct-FP8-dynamic"),
          Map.entry("llama-4-scout-fp8", "RedHatAI/Llama-4-Scout-17B-16E-Instruct-FP8-dynamic"),
          Map.entry("deepseek-v3", "deepseek-ai/DeepSeek-V3"),
          Map.entry("deepseek-r1", "deepseek-ai/DeepSeek-R1"),
          Map.entry("deepseek-v2-lite", "deepseek-ai/DeepSeek-V2-Lite"));

  private static final List<String> NAMES = loadIndex();
  private static final Map<String, String> LOOKUP = buildLookup();
  private static final JsonNode GENERATION_DEFAULTS = loadGenerationDefaults();

  private ModelCatalog() {}

  /** The HF names of the bundled models, sorted case-insensitively. */
  public static List<String> names() {
    return NAMES;
  }

  /**
   * Every name (lower case) {@link #byName} takes for the bundled model whose HF name is {@code
   * full}: the full name, the part after the slash, and the short aliases; empty for a model that
   * is not bundled.
   */
  public static java.util.SortedSet<String> namesOf(String full) {
    java.util.SortedSet<String> out = new java.util.TreeSet<>();
    LOOKUP.forEach((name, target) -> {
      if (target.equalsIgnoreCase(full)) {
        out.add(name);
      }
    });
    return out;
  }

  /**
   * The bundled model called {@code name} (case-insensitive; full HF name, the part after the
   * slash, or a short alias such as {@code llama-2-7b}).
   *
   * @throws IllegalArgumentException if no bundled model has that name; the message lists them
   */
  public static ModelConfig byName(String name) {
    if (name == null) {
      throw new IllegalArgumentException("model name must not be null; known models: " + NAMES);
    }
    String full = LOOKUP.get(name.trim().toLowerCase(Locale.ROOT));
    if (full == null) {
      throw new IllegalArgumentException(
          "unknown model '" + name + "'; bundled models: " + String.join(", ", NAMES)
              + " (short aliases: " + String.join(", ", new TreeMap<>(ALIASES).keySet())
              + "); or give a config.json path");
    }
    String resource = RESOURCE_DIR + full.replace("/", "--") + ".json";
    try (InputStream in = ModelCatalog.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("bundled model config missing: " + resource);
      }
      return parse(full, "bundled config of " + full, JSON.readTree(in))
          .withTruncatedSampling(bundledTruncates(full));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read bundled config " + resource, e);
    }
  }

  /**
   * A model given on the command line: a path to a {@code config.json} file or to a directory
   * holding one (when such a path exists), else a bundled model name or alias.
   *
   * @throws IllegalArgumentException if it is neither (the message lists the bundled models)
   */
  public static ModelConfig resolve(String nameOrPath) {
    if (nameOrPath != null && !nameOrPath.isBlank()) {
      try {
        Path p = Path.of(nameOrPath);
        if (Files.isDirectory(p) && Files.isRegularFile(p.resolve("config.json"))) {
          return fromFile(p.resolve("config.json"));
        }
        if (Files.isRegularFile(p)) {
          return fromFile(p);
        }
      } catch (java.nio.file.InvalidPathException notAPath) {
        // fall through to the catalog
      }
    }
    return byName(nameOrPath);
  }

  /**
   * Parses a HuggingFace {@code config.json}. The model is named after the file's parent
   * directory, with {@code org--name} turned into {@code org/name}.
   *
   * @throws IllegalArgumentException if the file cannot be read, is not JSON, or a field is
   *     missing or invalid (the message names the file and the field)
   */
  public static ModelConfig fromFile(Path configJson) {
    Path parent = configJson.toAbsolutePath().getParent();
    String name =
        parent != null && parent.getFileName() != null
            ? parent.getFileName().toString().replace("--", "/")
            : configJson.getFileName().toString();
    return fromFile(configJson, name);
  }

  /**
   * As {@link #fromFile(Path)} with an explicit model name. The default sampling comes from a
   * {@code generation_config.json} beside the file, else from the bundled model called {@code
   * name}, else none.
   */
  public static ModelConfig fromFile(Path configJson, String name) {
    JsonNode root = readJson(configJson, "model config");
    ModelConfig m = parse(name, configJson.toString(), root);
    Path parent = configJson.toAbsolutePath().getParent();
    Path generation = parent == null ? null : parent.resolve("generation_config.json");
    if (generation != null && Files.isRegularFile(generation)) {
      return m.withTruncatedSampling(
          truncates(readJson(generation, "generation config"), generation.toString()));
    }
    String bundled = name == null ? null : LOOKUP.get(name.trim().toLowerCase(Locale.ROOT));
    return bundled == null ? m : m.withTruncatedSampling(bundledTruncates(bundled));
  }

  /** Whether the published generation defaults of bundled model {@code fullName} truncate. */
  private static boolean bundledTruncates(String fullName) {
    return truncates(GENERATION_DEFAULTS.path(fullName), RESOURCE_DIR + "generation-defaults.json");
  }

  private static JsonNode readJson(Path file, String what) {
    JsonNode n = io.blis.latency.coeff.InputTrees.json(io.blis.latency.coeff.InputTrees.readText(file, what),
        file.toString());
    if (n == null) {
      throw new IllegalArgumentException(file + ": the " + what + " is empty");
    }
    return n;
  }

  /**
   * Whether the sampling fields of a generation config make vLLM truncate the distribution (top-p
   * below 1 or top-k above 0, at a temperature above 0; a missing temperature is 1). A missing
   * node means no defaults.
   *
   * @throws IllegalArgumentException if a field is present but not a number
   */
  static boolean truncates(JsonNode generation, String source) {
    if (generation == null || generation.isMissingNode() || generation.isNull()) {
      return false;
    }
    if (!generation.isObject()) {
      throw new IllegalArgumentException(source + ": expected a JSON object (generation_config.json)");
    }
    double temperature = number(generation, "temperature", 1.0, source);
    double topP = number(generation, "top_p", 1.0, source);
    double topK = number(generation, "top_k", 0.0, source);
    return temperature > 0 && (topP < 1.0 || topK > 0);
  }

  private static double number(JsonNode node, String field, double absent, String source) {
    JsonNode v = node.get(field);
    if (v == null || v.isNull()) {
      return absent;
    }
    if (!v.isNumber()) {
      throw new IllegalArgumentException(
          source + ": " + field + " must be a number, got " + v);
    }
    return v.asDouble();
  }

  /**
   * Parses a HuggingFace config already read into a JSON tree.
   *
   * @param name the model name to record
   * @param source where the JSON came from, used in error messages
   */
  static ModelConfig parse(String name, String source, JsonNode root) {
    if (root == null || !root.isObject()) {
      throw new IllegalArgumentException(source + ": expected a JSON object (HF config.json)");
    }
    ObjectNode c = flatten((ObjectNode) root);
    HfFields f = new HfFields(source, c);

    int layers = f.requiredInt("num_hidden_layers", "n_layer", "num_layers", "n_layers");
    int hidden = f.requiredInt("hidden_size", "n_embd", "d_model");
    int heads = f.requiredInt("num_attention_heads", "n_head", "n_heads");
    int kvHeads = f.optionalInt(heads, "num_key_value_heads", "num_kv_heads", "multi_query_group_num",
        "kv_n_heads");
    ModelConfig.Mla mla = latentAttention(f);
    int headDim = f.optionalInt(0, "head_dim");
    if (mla.present()) {
      // Every head attends over the shared latent: there are no KV heads, and a head's query/key
      // width is nope + rope (a head_dim key in such a config is the rope width, as transformers
      // writes it, not a head's width).
      kvHeads = heads;
      headDim = mla.qkHeadDim();
    } else if (headDim == 0) {
      if (hidden % heads != 0) {
        throw new IllegalArgumentException(
            source + ": hidden_size (" + hidden + ") is not a multiple of num_attention_heads ("
                + heads + ") and head_dim is missing");
      }
      headDim = hidden / heads;
    }
    int ffn = f.requiredInt("intermediate_size", "ffn_hidden_size", "n_inner");
    int denseFfn = f.optionalInt(ffn, "intermediate_size_mlp");
    int vocab = f.requiredInt("vocab_size");
    String typeName = f.text("model_type");
    // Gemma's configs leave it out: transformers' Gemma configurations tie them by default
    boolean tied = f.bool("tie_word_embeddings", typeName != null && typeName.toLowerCase(Locale.ROOT).startsWith("gemma"));
    boolean gated = isGated(f.text("model_type"));

    int activationBytes = dtypeBytes(source, f.text("torch_dtype", "dtype"));
    double weightBytes = weightBytesPerParam(source, name, c, activationBytes);

    int experts = f.optionalInt(0, "num_local_experts", "num_experts", "moe_num_experts",
        "n_routed_experts");
    int topK = 0;
    int moeFfn = ffn;
    int sharedFfn = 0;
    int moeLayers = 0;
    if (experts > 1) {
      topK = f.requiredInt("num_experts_per_tok", "moe_top_k");
      String type = f.text("model_type");
      if (type != null && OWN_EXPERT_WIDTH.contains(type) && f.optionalInt(0, "moe_intermediate_size") == 0) {
        // Mixtral-like configs give the experts' width as intermediate_size; these give it apart
        throw new IllegalArgumentException(source + ": moe_intermediate_size is missing: a " + type + " model's"
            + " experts have a width of their own (intermediate_size, " + ffn + ", is its dense layers');"
            + " copy it from the model's config.json");
      }
      moeFfn = f.optionalInt(ffn, "moe_intermediate_size");
      int sharedExperts = f.optionalInt(0, "n_shared_experts", "num_shared_experts");
      sharedFfn = f.optionalInt(0, "shared_expert_intermediate_size");
      if (sharedFfn == 0 && sharedExperts > 0) {
        sharedFfn = sharedExperts * moeFfn;
      }
      String modelType = f.text("model_type");
      if (sharedFfn == 0 && modelType != null && modelType.startsWith("llama4")) {
        sharedFfn = moeFfn; // Llama-4 MoE layers have one shared expert of the expert width
      }
      int step = f.optionalInt(1, "interleave_moe_layer_step", "decoder_sparse_step", "moe_layer_freq");
      if (step < 1) {
        throw new IllegalArgumentException(source + ": the MoE layer step (interleave_moe_layer_step,"
            + " decoder_sparse_step or moe_layer_freq) must be at least 1 (every layer), got " + step);
      }
      int firstDense = f.optionalInt(0, "first_k_dense_replace");
      if (firstDense > layers) {
        throw new IllegalArgumentException(
            source + ": first_k_dense_replace (" + firstDense + ") exceeds num_hidden_layers ("
                + layers + ")");
      }
      for (int i = firstDense; i < layers; i++) {
        if ((i + 1) % step == 0) {
          moeLayers++;
        }
      }
    } else {
      experts = 0;
    }
    int maxPos = maxPositions(f, c);
    try {
      String family = f.text("model_type");
      int[] sliding = slidingLayers(f, c, layers);
      double expertBytes = experts > 0 ? expertWeightBytes(c) : 0;
      Recurrent rec = Recurrent.of(f, c, layers, hidden, activationBytes);
      if (rec.blocks() > 0) {
        // Nemotron-H's blocks each hold one of a Mamba mixer, attention or an MLP: the layers of the
        // model are its mixer blocks, carrying the MLP blocks' weights between them
        layers = rec.mixerLayers();
        denseFfn = (int) Math.round((double) denseFfn * rec.mlpBlocks() / rec.mixerLayers());
        gated = false; // squared-ReLU MLPs of two matrices
      }
      return new ModelConfig(name, layers, hidden, heads, kvHeads, headDim, denseFfn, vocab, maxPos,
          activationBytes, expertBytes > 0 ? activationBytes : weightBytes, tied, experts, topK, moeFfn, sharedFfn,
          moeLayers, gated, false, family == null ? "" : family, mla,
          new ModelConfig.Variants(expertBytes, sliding[0], sliding[1], 0, rec.layers(), rec.stateBytes(),
              rec.params()));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(source + ": " + e.getMessage(), e);
    }
  }

  /**
   * The multi-head latent attention dimensions of a config with {@code kv_lora_rank} above 0 (a
   * missing or null {@code q_lora_rank} is 0: queries projected directly), else {@link
   * ModelConfig.Mla#NONE}. Missing dimensions are read as 0, which {@link ModelConfig} rejects
   * naming the key.
   */
  private static ModelConfig.Mla latentAttention(HfFields f) {
    int kvLoraRank = f.optionalInt(-1, "kv_lora_rank");
    if (kvLoraRank == 0) {
      throw new IllegalArgumentException(f.source() + ": kv_lora_rank must be at least 1 (the latent of multi-head"
          + " latent attention), got 0; leave it out (or null) for a model with ordinary attention");
    }
    if (kvLoraRank < 0) {
      return ModelConfig.Mla.NONE;
    }
    return new ModelConfig.Mla(kvLoraRank, f.optionalInt(0, "q_lora_rank"),
        f.optionalInt(0, "qk_nope_head_dim"), f.optionalInt(0, "qk_rope_head_dim"),
        f.optionalInt(0, "v_head_dim"));
  }

  /**
   * The config with a nested {@code text_config} laid over the top level, and DBRX's nested {@code
   * attn_config} and {@code ffn_config} laid under it (their keys taken only where the top level
   * has none: their {@code model_type} is empty).
   */
  private static ObjectNode flatten(ObjectNode root) {
    ObjectNode merged = root.deepCopy();
    for (String nested : List.of("attn_config", "ffn_config")) {
      JsonNode n = root.get(nested);
      if (n != null && n.isObject()) {
        merged.remove(nested);
        for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext(); ) {
          Map.Entry<String, JsonNode> e = it.next();
          if (!merged.has(e.getKey())) {
            merged.set(e.getKey(), e.getValue());
          }
        }
      }
    }
    JsonNode text = root.get("text_config");
    if (text == null || !text.isObject()) {
      return merged;
    }
    merged.remove("text_config");
    Iterator<Map.Entry<String, JsonNode>> it = text.fields();
    while (it.hasNext()) {
      Map.Entry<String, JsonNode> e = it.next();
      merged.set(e.getKey(), e.getValue());
    }
    return merged;
  }

  /**
   * The layers of {@code layer_types} that attend to a sliding window ({@code sliding_attention}),
   * with {@code sliding_window}; none when the config lists no layer types (a {@code sliding_window}
   * alone is not used by vLLM for Qwen2 and others without {@code use_sliding_window}).
   */
  private static int[] slidingLayers(HfFields f, ObjectNode c, int layers) {
    JsonNode types = c.get("layer_types");
    if (types == null || !types.isArray()) {
      String type = f.text("model_type");
      int window = f.optionalInt(0, "sliding_window");
      int pattern = f.optionalInt(0, "sliding_window_pattern");
      if (pattern > 0 && window > 0) {
        // Gemma 3: layer i attends to the whole context when (i + 1) is a multiple of the pattern
        return new int[] {layers - layers / pattern, window};
      }
      if (type != null && type.startsWith("gemma2") && window > 0) {
        return new int[] {(layers + 1) / 2, window}; // Gemma 2 alternates, the first layer sliding
      }
      return new int[] {0, 0};
    }
    if (types.size() != layers) {
      throw new IllegalArgumentException(f.source() + ": layer_types lists " + types.size() + " layers, but"
          + " num_hidden_layers is " + layers);
    }
    int sliding = 0;
    for (JsonNode t : types) {
      if (t.asText().equals("sliding_attention")) {
        sliding++;
      }
    }
    if (sliding == 0) {
      return new int[] {0, 0};
    }
    int window = f.optionalInt(0, "sliding_window");
    if (window < 1) {
      throw new IllegalArgumentException(f.source() + ": layer_types has sliding_attention layers but"
          + " sliding_window is missing or below 1");
    }
    return new int[] {sliding, window};
  }

  /**
   * Bytes of one routed-expert weight when the config quantizes the experts apart from the rest,
   * else 0: MXFP4 ({@code quant_method: mxfp4}, gpt-oss) stores 4-bit elements with one 8-bit scale
   * per 32, 4.25 bits; its {@code modules_to_not_convert} (attention, router, embeddings, LM head)
   * stay in the checkpoint's dtype.
   */
  private static double expertWeightBytes(ObjectNode c) {
    JsonNode q = c.get("quantization_config");
    if (q != null && q.isObject() && q.path("quant_method").asText("").equalsIgnoreCase("mxfp4")) {
      return 4.25 / 8;
    }
    return 0;
  }

  /** FFNs are gated (three matrices) except in the older two-matrix architectures listed here. */
  private static boolean isGated(String modelType) {
    if (modelType == null) {
      return true;
    }
    return switch (modelType.toLowerCase(Locale.ROOT)) {
      case "gpt2", "gpt_neox", "gptj", "opt", "bloom", "falcon", "phi", "gpt_bigcode",
          "starcoder2", "mpt" -> false;
      default -> true;
    };
  }

  /**
   * Bytes of one activation element. vLLM's {@code dtype=auto} serves fp32 checkpoints in 16 bits,
   * so every known dtype maps to 2 except an explicit 8-bit one.
   */
  /**
   * Bytes of an activation (and of a KV entry) for the config's {@code torch_dtype}: 1 for 8-bit
   * types, else 2 (vLLM runs a float32 checkpoint in 16 bits); a name that is no dtype is refused.
   */
  private static int dtypeBytes(String source, String dtype) {
    if (dtype == null) {
      return 2;
    }
    String d = dtype.toLowerCase(Locale.ROOT).replace("torch.", "");
    if (d.startsWith("float8") || d.equals("fp8") || d.equals("int8") || d.equals("uint8")) {
      return 1;
    }
    if (SIXTEEN_BIT_OR_MORE.contains(d)) {
      return 2;
    }
    throw new IllegalArgumentException(source + ": torch_dtype '" + InputTrees.quote(dtype) + "' is not a"
        + " dtype a checkpoint is stored in (expected one of float16, bfloat16, float32, float8_e4m3fn, int8,"
        + " or their short names fp16, bf16, fp32, fp8)");
  }

  private static final java.util.Set<String> SIXTEEN_BIT_OR_MORE = java.util.Set.of("float16", "fp16", "half",
      "bfloat16", "bf16", "float32", "fp32", "float", "auto");

  /** The quantization methods vLLM knows ({@code quantization_config.quant_method}). */
  private static final java.util.Set<String> QUANT_METHODS = java.util.Set.of("aqlm", "awq", "awq_marlin",
      "auto-round", "bitblas", "bitsandbytes", "compressed-tensors", "deepspeedfp", "experts_int8", "fbgemm_fp8",
      "fp8", "fp_quant", "gguf", "gptq", "gptq_bitblas", "gptq_marlin", "gptq_marlin_24", "hqq", "inc", "ipex",
      "marlin", "modelopt", "modelopt_fp4", "moe_wna16", "mxfp4", "neuron_quant", "petit_nvfp4", "ptpc_fp8", "qqq",
      "quark", "rtn", "torchao", "tpu_int8");

  private static double weightBytesPerParam(String source, String name, ObjectNode c, int activationBytes) {
    JsonNode q = c.get("quantization_config");
    if (q != null && q.isObject()) {
      String method = q.path("quant_method").asText("").toLowerCase(Locale.ROOT);
      if (!method.isEmpty() && !QUANT_METHODS.contains(method)) {
        throw new IllegalArgumentException(source + ": quantization_config.quant_method '" + InputTrees.quote(method)
            + "' is not a quantization method vLLM knows (fp8, awq, gptq, compressed-tensors, bitsandbytes, gguf,"
            + " modelopt, mxfp4, ...)");
      }
      if (method.equals("fp8") || method.equals("fbgemm_fp8")) {
        return 1.0;
      }
      if (q.path("bits").isNumber()) {
        return q.get("bits").asDouble() / 8.0;
      }
      if (q.path("weight_bits").isNumber()) {
        return q.get("weight_bits").asDouble() / 8.0;
      }
      JsonNode groups = q.get("config_groups");
      if (groups != null && groups.isObject()) {
        double bits = 0;
        for (JsonNode g : groups) {
          bits = Math.max(bits, g.path("weights").path("num_bits").asDouble(0));
        }
        if (bits > 0) {
          return bits / 8.0;
        }
      }
      if (method.contains("awq") || method.contains("gptq")) {
        return 0.5;
      }
    }
    String n = name.toLowerCase(Locale.ROOT);
    if (n.contains("w4a16") || n.contains("int4") || n.contains("awq")) {
      return 0.5;
    }
    if (n.contains("fp8") || n.contains("w8a8") || n.contains("int8")) {
      return 1.0;
    }
    return activationBytes;
  }

  private static int maxPositions(HfFields f, ObjectNode c) {
    int base = f.optionalInt(0, "max_position_embeddings", "n_positions", "max_sequence_length", "max_seq_len");
    if (base < 0 || (base == 0 && (c.has("max_position_embeddings") || c.has("n_positions")
        || c.has("max_sequence_length") || c.has("max_seq_len")))) {
      throw new IllegalArgumentException(f.source() + ": max_position_embeddings must be at least 1 (the model's"
          + " context length), got " + base);
    }
    JsonNode rope = c.get("rope_scaling");
    String modelType = f.text("model_type");
    if (base == 0 || rope == null || !rope.isObject()
        || (modelType != null && modelType.toLowerCase(Locale.ROOT).contains("gemma3"))) {
      return base; // vLLM: Gemma 3's max_position_embeddings already counts its rope scaling
    }
    String type = rope.path("rope_type").asText(rope.path("type").asText("")).toLowerCase(Locale.ROOT);
    double factor = rope.path("factor").asDouble(1.0);
    if (!(factor > 1.0)) {
      return base;
    }
    double scaled =
        switch (type) {
          case "linear", "dynamic" -> base * factor;
          case "yarn" -> rope.path("original_max_position_embeddings").asDouble(base) * factor;
          default -> base; // llama3, longrope, su, mrope: config already states the scaled length
        };
    return (int) Math.min(Integer.MAX_VALUE, Math.round(scaled));
  }

  private static List<String> loadIndex() {
    List<String> out = new ArrayList<>();
    try (InputStream in = ModelCatalog.class.getResourceAsStream(RESOURCE_DIR + "index.txt")) {
      if (in == null) {
        throw new IllegalStateException("bundled model index missing: " + RESOURCE_DIR + "index.txt");
      }
      BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
      for (String line = r.readLine(); line != null; line = r.readLine()) {
        if (!line.isBlank()) {
          out.add(line.trim());
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    out.sort(String.CASE_INSENSITIVE_ORDER);
    return Collections.unmodifiableList(out);
  }

  private static JsonNode loadGenerationDefaults() {
    String resource = RESOURCE_DIR + "generation-defaults.json";
    try (InputStream in = ModelCatalog.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("bundled generation defaults missing: " + resource);
      }
      return JSON.readTree(in);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Map<String, String> buildLookup() {
    Map<String, String> m = new TreeMap<>();
    for (String full : NAMES) {
      String lower = full.toLowerCase(Locale.ROOT);
      m.put(lower, full);
      m.put(lower.replace("/", "--"), full);
      m.putIfAbsent(lower.substring(lower.indexOf('/') + 1), full);
    }
    ALIASES.forEach((alias, full) -> m.putIfAbsent(alias, full));
    return m;
  }
}
