package io.blis.engine.spec;

import com.fasterxml.jackson.databind.JsonNode;
import io.blis.latency.coeff.InputTrees;
import java.util.Iterator;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * One deployment's speculative decoding: how drafts are proposed, how many per step, how often
 * they are accepted, and what drafts them.
 *
 * @param method how drafts are proposed
 * @param tokens drafts per decoding request and step ({@code num_speculative_tokens}, {@code K}),
 *     at least 1
 * @param acceptance how likely each position is accepted
 * @param acceptanceSource where the acceptance came from, for results and logs
 * @param draftModel the separate draft model's name or config path ({@link
 *     SpeculativeMethod#DRAFT_MODEL}); for a head of the target, its checkpoint's name if given
 *     (informational); empty when none was named
 * @param draftLayers layers of a head built from the target's shape (EAGLE, MTP, Medusa); 1 by
 *     default; ignored for a separate draft model and n-gram
 * @param hostUsPerPass the engine's host time of one drafter pass and of the step's speculative
 *     bookkeeping, microseconds ({@link #DEFAULT_HOST_US_PER_PASS} unless measured otherwise)
 * @param acceptanceByWorkload the acceptance of the requests of a workload apart (code against
 *     chat): keyed by a request's tenant, or else its SLO class; the others take {@code acceptance}
 */
public record SpeculativeConfig(SpeculativeMethod method, int tokens, AcceptanceProfile acceptance,
    String acceptanceSource, String draftModel, int draftLayers, double hostUsPerPass,
    java.util.Map<String, AcceptanceProfile> acceptanceByWorkload) {

  /** One acceptance for every request. */
  public SpeculativeConfig(SpeculativeMethod method, int tokens, AcceptanceProfile acceptance,
      String acceptanceSource, String draftModel, int draftLayers, double hostUsPerPass) {
    this(method, tokens, acceptance, acceptanceSource, draftModel, draftLayers, hostUsPerPass, java.util.Map.of());
  }

  /**
   * The host time of one drafter pass, and of the speculative bookkeeping of a step (drafts checked
   * against the target's tokens, the next pass's inputs prepared), in microseconds: chosen on the
   * choosing half of the published speculative measurements (docs/speculative-decoding.md), from
   * the step times of EAGLE and EAGLE-3 at batch 1 for K = 2 to 7 on one H100 (vLLM of July 2025),
   * which rise by about this much per draft and start about this much above the plain step.
   */
  public static final double DEFAULT_HOST_US_PER_PASS = 900.0;

  /** With the default host time per pass. */
  public SpeculativeConfig(SpeculativeMethod method, int tokens, AcceptanceProfile acceptance,
      String acceptanceSource, String draftModel, int draftLayers) {
    this(method, tokens, acceptance, acceptanceSource, draftModel, draftLayers, DEFAULT_HOST_US_PER_PASS);
  }

  /** The most drafts per step accepted: vLLM's own tests and published runs stay well below it. */
  public static final int MAX_TOKENS = 16;

  /**
   * vLLM's {@code --speculative-config} keys read here, and those accepted but without effect on
   * the simulation (they change what a draft is, not when and how much it costs here).
   */
  private static final Set<String> READ = Set.of("method", "model", "num_speculative_tokens", "num_draft_layers");
  private static final Set<String> IGNORED = Set.of("draft_tensor_parallel_size", "quantization", "max_model_len",
      "revision", "code_revision", "prompt_lookup_max", "prompt_lookup_min", "disable_by_batch_size",
      "disable_mqa_scorer", "disable_logprobs", "disable_padded_drafter_batch", "speculative_token_tree",
      "enforce_eager", "draft_model_config", "acceptance_method", "posterior_threshold", "posterior_alpha",
      "typical_acceptance_sampler_posterior_threshold", "typical_acceptance_sampler_posterior_alpha",
      "parallel_drafting", "use_local_argmax_reduction", "use_heterogeneous_vocab", "tensor_parallel_size",
      "moe_backend", "attention_backend", "kv_cache_dtype", "target_model_config", "target_parallel_config",
      "draft_parallel_config", "draft_load_config", "num_speculative_tokens_per_batch_size",
      "suffix_decoding_max_tree_depth", "suffix_decoding_max_cached_requests", "suffix_decoding_max_spec_factor",
      "suffix_decoding_min_token_prob",
      "draft_sample_method", "rejection_sample_method");

  public SpeculativeConfig {
    Objects.requireNonNull(method, "method");
    Objects.requireNonNull(acceptance, "acceptance");
    acceptanceSource = acceptanceSource == null ? "" : acceptanceSource;
    acceptanceByWorkload = java.util.Collections.unmodifiableMap(new java.util.TreeMap<>(
        acceptanceByWorkload == null ? java.util.Map.of() : acceptanceByWorkload));
    draftModel = draftModel == null ? "" : draftModel.strip();
    if (tokens < 1 || tokens > MAX_TOKENS) {
      throw new IllegalArgumentException("num_speculative_tokens must be in [1, " + MAX_TOKENS + "], got " + tokens);
    }
    if (!(hostUsPerPass >= 0 && hostUsPerPass <= 1e6)) {
      throw new IllegalArgumentException("a drafter pass's host time must be in [0, 1000000] us, got " + hostUsPerPass);
    }
    if (draftLayers < 1) {
      throw new IllegalArgumentException("a drafter needs at least 1 layer, got " + draftLayers);
    }
    if (method == SpeculativeMethod.DRAFT_MODEL && draftModel.isEmpty()) {
      throw new IllegalArgumentException("speculative method draft_model needs the draft model (\"model\" in"
          + " --speculative-config, or --speculative-model)");
    }
  }

  /**
   * {@return the acceptance of a request of tenant {@code tenant} and SLO class {@code sloClass}}
   * The tenant's own when {@link #acceptanceByWorkload()} names it, else its class's, else {@link
   * #acceptance()}.
   */
  public AcceptanceProfile acceptanceFor(String tenant, String sloClass) {
    if (acceptanceByWorkload.isEmpty()) {
      return acceptance;
    }
    AcceptanceProfile p = acceptanceByWorkload.get(tenant);
    if (p == null) {
      p = acceptanceByWorkload.get(sloClass);
    }
    return p == null ? acceptance : p;
  }

  /** {@return the lookahead KV slots vLLM reserves per request for the drafter: {@code K} or 0} */
  public int lookaheadSlots() {
    return method.reservesLookahead() ? tokens : 0;
  }

  /**
   * What vLLM's {@code --speculative-config} JSON says: method, draft model, drafts per step.
   *
   * @param json the flag's value
   * @param flag the flag's name, for messages
   * @throws IllegalArgumentException naming the flag and the key at fault
   */
  public static Parsed parseVllm(String json, String flag) {
    JsonNode root = InputTrees.json(json, flag); // its message names the flag, line and column
    if (root == null || !root.isObject()) {
      throw new IllegalArgumentException(flag + ": expected a JSON object such as {\"method\": \"eagle3\", \"model\":"
          + " \"...\", \"num_speculative_tokens\": 3}");
    }
    for (Iterator<String> it = root.fieldNames(); it.hasNext(); ) {
      String key = it.next();
      if (!READ.contains(key) && !IGNORED.contains(key)) {
        Set<String> known = new TreeSet<>(READ);
        known.addAll(IGNORED);
        throw new IllegalArgumentException(flag + ": unknown key '" + InputTrees.quote(key) + "'; vLLM's keys are "
            + known);
      }
    }
    JsonNode k = root.get("num_speculative_tokens");
    if (k == null || !k.canConvertToInt() || !k.isIntegralNumber()) {
      throw new IllegalArgumentException(flag + ": num_speculative_tokens must be a whole number, got "
          + (k == null ? "nothing" : k.toString()));
    }
    String model = text(root, "model", flag);
    String methodName = text(root, "method", flag);
    SpeculativeMethod method;
    if (!methodName.isEmpty()) {
      try {
        method = SpeculativeMethod.of(methodName);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(flag + ": " + e.getMessage(), e);
      }
    } else if (model.isEmpty()) {
      throw new IllegalArgumentException(flag + ": give \"method\" (ngram, eagle, eagle3, mtp, medusa, draft_model)"
          + " or a draft \"model\"");
    } else {
      method = inferMethod(model); // as vLLM infers it from the draft's name
    }
    int layers = 1;
    JsonNode l = root.get("num_draft_layers");
    if (l != null) {
      if (!l.isIntegralNumber() || l.asInt() < 1) {
        throw new IllegalArgumentException(flag + ": num_draft_layers must be a whole number >= 1, got " + l);
      }
      layers = l.asInt();
    }
    return new Parsed(method, k.asInt(), model, layers);
  }

  private static String text(JsonNode root, String key, String flag) {
    JsonNode v = root.get(key);
    if (v == null || v.isNull()) {
      return "";
    }
    if (!v.isTextual()) {
      throw new IllegalArgumentException(flag + ": \"" + key + "\" must be a string, got " + v);
    }
    return v.asText().strip();
  }

  /**
   * The method a draft model's name implies when {@code method} is not given: {@code [ngram]} is
   * n-gram, a name with {@code eagle3} or {@code eagle} or {@code medusa} or {@code mtp} in it that
   * method, anything else a separate draft model.
   */
  static SpeculativeMethod inferMethod(String model) {
    String m = model.toLowerCase(Locale.ROOT);
    if (m.equals("[ngram]") || m.equals("ngram")) {
      return SpeculativeMethod.NGRAM;
    }
    if (m.contains("eagle3") || m.contains("eagle-3")) {
      return SpeculativeMethod.EAGLE3;
    }
    if (m.contains("eagle")) {
      return SpeculativeMethod.EAGLE;
    }
    if (m.contains("medusa")) {
      return SpeculativeMethod.MEDUSA;
    }
    if (m.contains("mtp")) {
      return SpeculativeMethod.MTP;
    }
    return SpeculativeMethod.DRAFT_MODEL;
  }

  /**
   * What {@code --speculative-config} says before an acceptance is chosen.
   *
   * @param method how drafts are proposed
   * @param tokens drafts per step
   * @param model the draft model or head checkpoint named, empty when none
   * @param draftLayers layers of a head of the target's shape
   */
  public record Parsed(SpeculativeMethod method, int tokens, String model, int draftLayers) {}
}
