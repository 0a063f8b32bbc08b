package io.blis.cli.serve;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.blis.latency.coeff.InputTrees;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The OpenAI-compatible request and response bodies of {@code blis serve}, shaped as vLLM's
 * server shapes them.
 *
 * <p>Prompt length without a tokenizer: a completions prompt given as token ids (a JSON array of
 * integers, which vLLM accepts) is used as it is, exactly. A text prompt counts one token per
 * whitespace-separated word plus 1 for the beginning-of-sequence token; a chat request counts, in
 * addition to its words and that token, {@value #CHAT_TOKENS_PER_MESSAGE} template tokens per
 * message and {@value #CHAT_REPLY_TOKENS} for the assistant's reply header. A word becomes a fixed token id derived from
 * its text, so identical texts give identical ids and shared text prefixes are shared prefixes in
 * the simulated prefix cache.
 */
public final class OpenAiProtocol {

  /**
   * Template tokens per chat message, as Llama 3's chat template renders one: the role header
   * {@code <|start_header_id|>ROLE<|end_header_id|>\n\n} (four tokens: the role is one, the
   * blank line another) before the content and {@code <|eot_id|>} after it.
   */
  public static final int CHAT_TOKENS_PER_MESSAGE = 5;
  /**
   * Template tokens that open the assistant's reply in a chat prompt: Llama 3's {@code
   * <|start_header_id|>assistant<|end_header_id|>\n\n}.
   */
  public static final int CHAT_REPLY_TOKENS = 4;
  /** Token id of the beginning of a text prompt. */
  static final int BOS = 1;
  private static final int FIRST_WORD_ID = 3;
  private static final int WORD_IDS = 31_997;
  private static final int TEMPLATE_ID = 2;

  private static final String[] OUTPUT_WORDS = {"the", "of", "and", "to", "in", "a", "is", "that",
      "for", "it", "as", "was", "with", "be", "by", "on", "not", "he", "this", "are", "or", "his",
      "from", "at", "which", "but", "have", "an", "had", "they", "you", "were", "their", "one",
      "all", "we", "can", "her", "has", "there", "been", "if", "more", "when", "will", "would",
      "who", "so", "no", "she"};

  static final ObjectMapper JSON = new ObjectMapper();

  /** Largest {@code logprobs}, {@code top_logprobs} and {@code prompt_logprobs}: vLLM's default {@code --max-logprobs}. */
  public static final int MAX_LOGPROBS = 20;
  /** Most names {@link ServeRequest#ignored()} lists; more are summed up in one last entry. */
  static final int MAX_IGNORED = 32;
  /** Longest name {@link ServeRequest#ignored()} lists (longer ones are cut). */
  static final int MAX_IGNORED_NAME = 64;
  /** What a completion generates without {@code max_tokens}, as vLLM and OpenAI do. */
  public static final int DEFAULT_COMPLETION_MAX_TOKENS = 16;

  /** Fields that shape the simulated request on both endpoints (the rest are ignored). */
  private static final Set<String> HONOURED = Set.of("model", "stream", "stream_options", "n",
      "best_of", "use_beam_search", "max_tokens", "min_tokens", "ignore_eos",
      "truncate_prompt_tokens", "add_special_tokens");
  private static final Set<String> HONOURED_COMPLETION = Set.of("prompt");
  private static final Set<String> HONOURED_CHAT = Set.of("messages", "max_completion_tokens",
      "add_generation_prompt", "continue_final_message");
  private static final Set<String> RESPONSE_FORMATS = Set.of("text", "json_object", "json_schema",
      "structural_tag");

  private OpenAiProtocol() {}

  /**
   * Parses a request body, with the model's vocabulary unknown (token ids are not range-checked).
   *
   * @see #parse(byte[], boolean, int)
   */
  public static ServeRequest parse(byte[] body, boolean chat) {
    return parse(body, chat, 0);
  }

  /**
   * Parses a request body, validating its fields as vLLM's OpenAI server does (see
   * docs/serve-and-observe.md for the table of fields). The fields the simulation cannot honour
   * (sampling parameters, stop strings, logprobs, tools, fields vLLM does not know) are accepted
   * and listed in {@link ServeRequest#ignored()}; the few that would change what is generated in a
   * way the simulation cannot reproduce ({@code n} or {@code best_of} above 1, beam search,
   * {@code suffix}, {@code prompt_embeds}) are refused.
   *
   * @param chat whether it came to {@code /v1/chat/completions}
   * @param vocabSize the model's vocabulary size, or 0 or less when unknown; token ids of a prompt
   *     (and of {@code stop_token_ids}, {@code allowed_token_ids}) must lie below it
   * @throws IllegalArgumentException in one line naming the field and what was expected
   */
  public static ServeRequest parse(byte[] body, boolean chat, int vocabSize) {
    JsonNode root;
    try {
      root = JSON.readTree(body);
    } catch (JacksonException e) {
      throw new IllegalArgumentException("request body, " + notJson(e));
    } catch (java.io.IOException e) {
      throw new IllegalArgumentException("request body cannot be read: " + e.getMessage());
    }
    if (root == null || !root.isObject()) {
      throw new IllegalArgumentException("request body must be a JSON object");
    }
    String model = string(root, "model");
    if (model == null) {
      model = "";
    }

    // ---- what is generated: n sequences of max_tokens tokens (n > 1: parallel sampling)
    JsonNode nNode = value(root, "n");
    if (isHugeInteger(nNode)) {
      throw bad("n", "an integer in [1, " + MAX_N + "] (vLLM's VLLM_MAX_N_SEQUENCES)", nNode);
    }
    int n = (int) integer(root, "n", 1, MAX_N, "an integer in [1, " + MAX_N + "] (vLLM's VLLM_MAX_N_SEQUENCES)", 1);
    JsonNode bestOfNode = value(root, "best_of");
    if (bestOfNode != null) {
      if (isHugeInteger(bestOfNode)) {
        throw parallelBestOf(bestOfNode, n);
      }
      long bestOf = integer(root, "best_of", n, Long.MAX_VALUE, "an integer of at least n (" + n + ")", n);
      if (bestOf > n) {
        throw parallelBestOf(bestOfNode, n);
      }
    }
    if (bool(root, "use_beam_search", false)) {
      throw new IllegalArgumentException("'use_beam_search' is true: the simulated server does not"
          + " simulate beam search; leave it out or set it to false");
    }
    int maxTokens;
    if (chat) {
      int mt = maxTokens(root, "max_tokens");
      int mct = maxTokens(root, "max_completion_tokens");
      maxTokens = mct > 0 ? mct : mt;
    } else if (!root.has("max_tokens")) {
      maxTokens = DEFAULT_COMPLETION_MAX_TOKENS;
    } else {
      maxTokens = maxTokens(root, "max_tokens");
    }
    long minTokens = integer(root, "min_tokens", 0, Integer.MAX_VALUE, "an integer of at least 0", 0);
    if (maxTokens > 0 && minTokens > maxTokens) {
      throw new IllegalArgumentException("'min_tokens' must be at most max_tokens (" + maxTokens
          + "), got " + minTokens);
    }
    bool(root, "ignore_eos", false);

    // ---- streaming
    boolean stream = bool(root, "stream", false);
    JsonNode opts = value(root, "stream_options");
    boolean includeUsage = false;
    boolean continuousUsage = false;
    if (opts != null) {
      if (!opts.isObject()) {
        throw bad("stream_options", "an object such as {\"include_usage\": true}", opts);
      }
      if (!opts.isEmpty() && !stream) {
        throw new IllegalArgumentException("'stream_options' can only be given when 'stream' is true"
            + " (vLLM refuses it otherwise)");
      }
      includeUsage = stream && bool(opts, "include_usage", true, "stream_options.include_usage");
      continuousUsage = bool(opts, "continuous_usage_stats", false, "stream_options.continuous_usage_stats");
    }

    // ---- sampling parameters: validated as vLLM's SamplingParams does, then ignored
    range(root, "temperature", 0, true, 2, true);
    range(root, "top_p", 0, false, 1, true);
    integer(root, "top_k", -1, Long.MAX_VALUE, "0 (disabled), -1 (disabled) or an integer of at least 1", 0);
    range(root, "min_p", 0, true, 1, true);
    range(root, "presence_penalty", -2, true, 2, true);
    range(root, "frequency_penalty", -2, true, 2, true);
    Double rp = number(root, "repetition_penalty");
    if (rp != null && rp <= 0) {
      throw bad("repetition_penalty", "a number greater than 0", root.get("repetition_penalty"));
    }
    number(root, "length_penalty");
    integer(root, "seed", Long.MIN_VALUE, Long.MAX_VALUE, "an integer in [-2^63, 2^63)", 0);
    stopStrings(root, "stop");
    stopStrings(root, "bad_words");
    tokenIds(root, "stop_token_ids", vocabSize);
    tokenIds(root, "allowed_token_ids", vocabSize);
    logitBias(root);
    for (String flag : List.of("echo", "skip_special_tokens", "spaces_between_special_tokens",
        "include_stop_str_in_output", "return_tokens_as_token_ids")) {
      bool(root, flag, false);
    }
    if (chat) {
      boolean logprobs = bool(root, "logprobs", false);
      long top = integer(root, "top_logprobs", 0, MAX_LOGPROBS, "an integer in [0, " + MAX_LOGPROBS + "]", 0);
      if (top > 0 && !logprobs) {
        throw new IllegalArgumentException("'top_logprobs' needs 'logprobs' to be true, as vLLM requires");
      }
      bool(root, "parallel_tool_calls", false);
      tools(root);
    } else {
      integer(root, "logprobs", 0, MAX_LOGPROBS, "an integer in [0, " + MAX_LOGPROBS + "]", 0);
      if (value(root, "suffix") != null) {
        throw new IllegalArgumentException("'suffix' is not currently supported (vLLM refuses it too)");
      }
    }
    long promptLogprobs = integer(root, "prompt_logprobs", 0, MAX_LOGPROBS,
        "an integer in [0, " + MAX_LOGPROBS + "]", 0);
    if (promptLogprobs > 0 && stream) {
      throw new IllegalArgumentException("'prompt_logprobs' is not available when 'stream' is true,"
          + " as in vLLM");
    }
    responseFormat(root);
    string(root, "user");
    string(root, "request_id");
    integer(root, "priority", Long.MIN_VALUE, Long.MAX_VALUE, "an integer", 0);
    JsonNode salt = value(root, "cache_salt");
    if (salt != null && (!salt.isTextual() || salt.asText().isEmpty())) {
      throw bad("cache_salt", "a non-empty string", salt);
    }
    if (value(root, "prompt_embeds") != null) {
      throw new IllegalArgumentException("'prompt_embeds' is not supported by the simulated server:"
          + " send the prompt as 'prompt' (text or token ids)");
    }

    // ---- the prompt
    long truncate = integer(root, "truncate_prompt_tokens", 1, Long.MAX_VALUE, "an integer of at least 1", 0);
    boolean specialTokens = bool(root, "add_special_tokens", !chat);
    int[] prompt;
    if (chat) {
      JsonNode agp = value(root, "add_generation_prompt");
      boolean continueFinal = bool(root, "continue_final_message", false);
      boolean generationPrompt = bool(root, "add_generation_prompt", true);
      if (continueFinal && agp != null && generationPrompt) {
        throw new IllegalArgumentException("'continue_final_message' and 'add_generation_prompt'"
            + " cannot both be true, as in vLLM");
      }
      prompt = chatPrompt(root.get("messages"), specialTokens, generationPrompt && !continueFinal,
          continueFinal);
    } else {
      prompt = completionPrompt(root.get("prompt"), specialTokens, vocabSize);
    }
    if (truncate > 0 && truncate < prompt.length) {
      prompt = Arrays.copyOfRange(prompt, prompt.length - (int) truncate, prompt.length);
    }

    List<String> ignored = ignored(root, chat);
    if (continuousUsage) {
      ignored.add("stream_options.continuous_usage_stats");
    }
    return new ServeRequest(chat, model, prompt, maxTokens, stream, includeUsage, ignored, n);
  }

  /** The largest {@code n}: vLLM's default {@code VLLM_MAX_N_SEQUENCES}. */
  static final int MAX_N = 16_384;

  // ------------------------------------------------------------------ field checks

  /** The field's value, or null when it is absent or JSON null (which vLLM takes as the default). */
  private static JsonNode value(JsonNode root, String field) {
    JsonNode n = root.get(field);
    return n == null || n.isNull() ? null : n;
  }

  private static IllegalArgumentException bad(String field, String expected, JsonNode got) {
    return new IllegalArgumentException("'" + field + "' must be " + expected + ", got "
        + InputTrees.quote(got.toString()));
  }

  private static IllegalArgumentException parallelBestOf(JsonNode got, int n) {
    return new IllegalArgumentException("'best_of' is " + InputTrees.quote(got.toString())
        + ": the simulated server does not pick the best n of best_of sequences; send best_of = n (" + n
        + ") or leave it out");
  }

  private static boolean isHugeInteger(JsonNode n) {
    return n != null && n.isIntegralNumber() && !n.canConvertToLong() && n.bigIntegerValue().signum() > 0;
  }

  private static String string(JsonNode root, String field) {
    JsonNode n = value(root, field);
    if (n == null) {
      return null;
    }
    if (!n.isTextual()) {
      throw new IllegalArgumentException("'" + field + "' must be a string, got "
          + n.getNodeType().name().toLowerCase(java.util.Locale.ROOT));
    }
    return n.asText();
  }

  private static boolean bool(JsonNode root, String field, boolean dflt) {
    return bool(root, field, dflt, field);
  }

  private static boolean bool(JsonNode root, String field, boolean dflt, String name) {
    JsonNode n = value(root, field);
    if (n == null) {
      return dflt;
    }
    if (!n.isBoolean()) {
      throw new IllegalArgumentException("'" + name + "' must be true or false, got "
          + InputTrees.quote(n.toString()));
    }
    return n.asBoolean();
  }

  /** An integer in [min, max], or {@code dflt} when absent. */
  private static long integer(JsonNode root, String field, long min, long max, String expected, long dflt) {
    JsonNode n = value(root, field);
    if (n == null) {
      return dflt;
    }
    if (!n.isIntegralNumber() || !n.canConvertToLong() || n.asLong() < min || n.asLong() > max) {
      throw bad(field, expected, n);
    }
    return n.asLong();
  }

  private static int maxTokens(JsonNode root, String field) {
    return (int) integer(root, field, 1, Integer.MAX_VALUE, "an integer of at least 1", -1);
  }

  /** A finite JSON number, or null when absent. */
  private static Double number(JsonNode root, String field) {
    JsonNode n = value(root, field);
    if (n == null) {
      return null;
    }
    if (n.isNumber() && !Double.isFinite(n.asDouble())) {
      throw new IllegalArgumentException("'" + field + "' must be a finite number, got a number"
          + " beyond the range of a double");
    }
    if (!n.isNumber()) {
      throw bad(field, "a finite number", n);
    }
    return n.asDouble();
  }

  private static void range(JsonNode root, String field, double lo, boolean loIn, double hi, boolean hiIn) {
    Double v = number(root, field);
    if (v == null) {
      return;
    }
    if ((loIn ? v < lo : v <= lo) || (hiIn ? v > hi : v >= hi)) {
      throw bad(field, "a number in " + (loIn ? "[" : "(") + fmt(lo) + ", " + fmt(hi) + (hiIn ? "]" : ")"),
          root.get(field));
    }
  }

  private static String fmt(double d) {
    return d == Math.rint(d) ? Long.toString((long) d) : Double.toString(d);
  }

  /** A string or a list of strings, none empty (vLLM: "stop cannot contain an empty string"). */
  private static void stopStrings(JsonNode root, String field) {
    JsonNode n = value(root, field);
    if (n == null) {
      return;
    }
    String expected = "a non-empty string or a list of non-empty strings";
    if (n.isTextual()) {
      if (n.asText().isEmpty() && field.equals("stop")) {
        throw bad(field, expected, n);
      }
      if (field.equals("stop")) {
        return;
      }
    }
    if (!n.isArray()) {
      throw bad(field, field.equals("stop") ? expected : "a list of non-empty strings", n);
    }
    for (int i = 0; i < n.size(); i++) {
      JsonNode s = n.get(i);
      if (!s.isTextual() || s.asText().isEmpty()) {
        throw new IllegalArgumentException("'" + field + "[" + i + "]' must be a non-empty string, got "
            + InputTrees.quote(s.toString()));
      }
    }
  }

  private static void tokenIds(JsonNode root, String field, int vocabSize) {
    JsonNode n = value(root, field);
    if (n == null) {
      return;
    }
    if (!n.isArray()) {
      throw bad(field, "a list of token ids", n);
    }
    for (int i = 0; i < n.size(); i++) {
      JsonNode t = n.get(i);
      if (!t.isIntegralNumber() || !t.canConvertToInt() || t.asInt() < 0) {
        throw new IllegalArgumentException("'" + field + "[" + i + "]' must be a token id (an integer"
            + " of at least 0), got " + InputTrees.quote(t.toString()));
      }
      if (vocabSize > 0 && t.asInt() >= vocabSize) {
        throw outOfVocabulary(field, i, t.asInt(), vocabSize);
      }
    }
  }

  private static IllegalArgumentException outOfVocabulary(String field, int i, int id, int vocabSize) {
    return new IllegalArgumentException("'" + field + "[" + i + "]': token id " + id
        + " is out of vocabulary (the model's ids lie in [0, " + vocabSize + "))");
  }

  private static void logitBias(JsonNode root) {
    JsonNode n = value(root, "logit_bias");
    if (n == null) {
      return;
    }
    if (!n.isObject()) {
      throw bad("logit_bias", "an object of token ids to numbers", n);
    }
    var it = n.fields();
    while (it.hasNext()) {
      var e = it.next();
      if (!e.getKey().strip().matches("[+-]?\\d{1,9}")) {
        throw new IllegalArgumentException("'logit_bias' keys must be token ids, got "
            + InputTrees.quote(JSON.getNodeFactory().textNode(e.getKey()).toString()));
      }
      if (!e.getValue().isNumber() || !Double.isFinite(e.getValue().asDouble())) {
        throw new IllegalArgumentException("'logit_bias' values must be numbers, got "
            + InputTrees.quote(e.getValue().toString()));
      }
    }
  }

  private static void responseFormat(JsonNode root) {
    JsonNode n = value(root, "response_format");
    if (n == null) {
      return;
    }
    String expected = "an object whose 'type' is text, json_object, json_schema or structural_tag";
    if (!n.isObject() || !n.path("type").isTextual() || !RESPONSE_FORMATS.contains(n.get("type").asText())) {
      throw bad("response_format", expected, n);
    }
    if (n.get("type").asText().equals("json_schema") && !n.path("json_schema").isObject()) {
      throw new IllegalArgumentException("'response_format' of type json_schema needs a 'json_schema' object");
    }
  }

  private static void tools(JsonNode root) {
    JsonNode tools = value(root, "tools");
    List<String> names = new ArrayList<>();
    if (tools != null) {
      if (!tools.isArray()) {
        throw bad("tools", "a list of tools", tools);
      }
      for (int i = 0; i < tools.size(); i++) {
        JsonNode t = tools.get(i);
        if (!t.isObject() || !t.path("function").isObject() || !t.path("function").path("name").isTextual()) {
          throw new IllegalArgumentException("'tools[" + i + "]' must be an object such as"
              + " {\"type\": \"function\", \"function\": {\"name\": \"f\"}}");
        }
        names.add(t.get("function").get("name").asText());
      }
    }
    JsonNode choice = value(root, "tool_choice");
    if (choice == null || (choice.isTextual() && choice.asText().equals("none"))) {
      return;
    }
    String expected = "\"none\", \"auto\", \"required\" or {\"type\": \"function\", \"function\": {\"name\": ...}}";
    if (choice.isTextual()) {
      if (!choice.asText().equals("auto") && !choice.asText().equals("required")) {
        throw bad("tool_choice", expected, choice);
      }
    } else if (!choice.isObject() || !choice.path("function").path("name").isTextual()
        || choice.get("function").get("name").asText().isEmpty()) {
      throw bad("tool_choice", expected, choice);
    }
    if (tools == null) {
      throw new IllegalArgumentException("'tool_choice' needs 'tools', as in vLLM");
    }
    if (choice.isObject() && !names.contains(choice.get("function").get("name").asText())) {
      throw new IllegalArgumentException("'tool_choice' names a function that is not in 'tools'");
    }
  }

  /** The present, non-null fields that do not shape the simulated request, header-safe. */
  private static List<String> ignored(JsonNode root, boolean chat) {
    List<String> names = new ArrayList<>();
    int more = 0;
    var it = root.fieldNames();
    while (it.hasNext()) {
      String f = it.next();
      if (root.get(f).isNull() || HONOURED.contains(f)
          || (chat ? HONOURED_CHAT : HONOURED_COMPLETION).contains(f)) {
        continue;
      }
      if (names.size() < MAX_IGNORED) {
        names.add(headerSafe(f));
      } else {
        more++;
      }
    }
    if (more > 0) {
      names.add("+" + more + "-more");
    }
    return names;
  }

  /** {@code name} with every character but letters, digits and {@code _ . -} percent-encoded, cut. */
  static String headerSafe(String name) {
    StringBuilder b = new StringBuilder();
    for (byte c : name.getBytes(StandardCharsets.UTF_8)) {
      if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'
          || c == '.' || c == '-') {
        b.append((char) c);
      } else {
        b.append('%').append(String.format(Locale.ROOT, "%02X", c & 0xff));
      }
      if (b.length() >= MAX_IGNORED_NAME) {
        break;
      }
    }
    return b.isEmpty() ? "%22%22" : b.toString();
  }

  // ------------------------------------------------------------------ prompts

  private static int[] completionPrompt(JsonNode p, boolean bos, int vocabSize) {
    if (p == null || p.isNull()) {
      throw new IllegalArgumentException("'prompt' is required");
    }
    if (p.isTextual()) {
      int[] ids = textTokens(p.asText(), bos);
      if (ids.length == 0) {
        throw new IllegalArgumentException("'prompt' is empty: the decoder prompt cannot be empty"
            + " (an empty text with add_special_tokens false has no token)");
      }
      return ids;
    }
    if (p.isArray()) {
      if (p.size() == 1 && (p.get(0).isTextual() || p.get(0).isArray())) {
        return completionPrompt(p.get(0), bos, vocabSize);
      }
      if (p.isEmpty()) {
        throw new IllegalArgumentException("'prompt' must not be empty");
      }
      int[] ids = new int[p.size()];
      for (int i = 0; i < ids.length; i++) {
        JsonNode t = p.get(i);
        if (!t.isIntegralNumber() || !t.canConvertToInt() || t.asInt() < 0) {
          throw new IllegalArgumentException("'prompt' must be a string or a list of token ids"
              + " (non-negative integers); element " + i + " is " + InputTrees.quote(t.toString())
              + (t.isTextual() || t.isArray() ? " (a batch of prompts is not supported: send one per request)" : ""));
        }
        if (vocabSize > 0 && t.asInt() >= vocabSize) {
          throw outOfVocabulary("prompt", i, t.asInt(), vocabSize);
        }
        ids[i] = t.asInt();
      }
      return ids;
    }
    throw new IllegalArgumentException("'prompt' must be a string or a list of token ids");
  }

  private static int[] chatPrompt(JsonNode messages, boolean extraBos, boolean generationPrompt,
      boolean continueFinal) {
    if (messages == null || !messages.isArray() || messages.isEmpty()) {
      throw new IllegalArgumentException("'messages' must be a non-empty list");
    }
    List<Integer> ids = new ArrayList<>();
    if (extraBos) {
      ids.add(BOS);
    }
    ids.add(BOS);
    for (int i = 0; i < messages.size(); i++) {
      JsonNode m = messages.get(i);
      if (!m.isObject()) {
        throw new IllegalArgumentException("'messages[" + i + "]' must be an object");
      }
      for (int k = 0; k < CHAT_TOKENS_PER_MESSAGE - 1; k++) {
        ids.add(TEMPLATE_ID);
      }
      JsonNode content = m.get("content");
      if (content != null && content.isTextual()) {
        for (int id : textTokens(content.asText(), false)) {
          ids.add(id);
        }
      } else if (content != null && content.isArray()) {
        for (JsonNode part : content) {
          if (part.isObject() && part.path("text").isTextual()) {
            for (int id : textTokens(part.get("text").asText(), false)) {
              ids.add(id);
            }
          }
        }
      } else if (content != null && !content.isNull()) {
        throw new IllegalArgumentException("'messages[" + i + "].content' must be a string or a list of parts");
      }
      JsonNode role = m.get("role");
      if (role == null || !role.isTextual()) {
        throw new IllegalArgumentException("'messages[" + i + "].role' must be a string such as \"user\", got "
            + (role == null ? "none" : InputTrees.quote(role.toString())));
      }
      if (!(continueFinal && i == messages.size() - 1)) {
        ids.add(TEMPLATE_ID);
      }
    }
    if (generationPrompt) {
      for (int k = 0; k < CHAT_REPLY_TOKENS; k++) {
        ids.add(TEMPLATE_ID);
      }
    }
    return ids.stream().mapToInt(Integer::intValue).toArray();
  }

  /** One id per whitespace-separated word (a fixed function of the word), after a BOS if asked. */
  static int[] textTokens(String text, boolean bos) {
    String trimmed = text.strip();
    String[] words = trimmed.isEmpty() ? new String[0] : trimmed.split("\\s+");
    int[] ids = new int[words.length + (bos ? 1 : 0)];
    int k = 0;
    if (bos) {
      ids[k++] = BOS;
    }
    for (String w : words) {
      ids[k++] = FIRST_WORD_ID + Math.floorMod(w.hashCode(), WORD_IDS);
    }
    return ids;
  }

  /** The synthetic text of output token {@code index} of request {@code id}. */
  static String tokenText(long id, int index) {
    return " " + OUTPUT_WORDS[(int) Math.floorMod(id * 31 + index, (long) OUTPUT_WORDS.length)];
  }

  // ------------------------------------------------------------------ responses

  /** The {@code id} field of request {@code id}'s answers. */
  static String responseId(long id, boolean chat) {
    return (chat ? "chatcmpl-blis-" : "cmpl-blis-") + id;
  }

  /** One streamed chunk carrying {@code text}; {@code finishReason} null except on the last. */
  static String chunk(long id, boolean chat, String model, long created, String text, boolean first,
      String finishReason) {
    return new ChunkFormat(id, chat, model, created).chunk(text, first, finishReason);
  }

  /**
   * The streamed chunks of one request, rendered from fixed pieces (the request's id, object,
   * time and model are the same in every chunk; the token texts need no escaping): tokens are
   * rendered on the simulation thread, so this keeps each one to a string concatenation.
   */
  static final class ChunkFormat {
    private final String head;
    private final boolean chat;

    ChunkFormat(long id, boolean chat, String model, long created) {
      this(id, 0, chat, model, created);
    }

    /** The chunks of choice {@code choice} of answer {@code id}. */
    ChunkFormat(long id, int choice, boolean chat, String model, long created) {
      this.chat = chat;
      this.head = "data: {\"id\":\"" + responseId(id, chat) + "\",\"object\":\""
          + (chat ? "chat.completion.chunk" : "text_completion") + "\",\"created\":" + created
          + ",\"model\":" + quoted(model) + ",\"choices\":[{\"index\":" + choice + ",";
    }

    /** The chunk carrying {@code text} (plain words: no character that JSON escapes). */
    String chunk(String text, boolean first, String finishReason) {
      String tail = "\",\"logprobs\":null,\"finish_reason\":"
          + (finishReason == null ? "null" : "\"" + finishReason + "\"") + "}]}\n\n";
      if (chat) {
        return head + (first ? "\"delta\":{\"role\":\"assistant\",\"content\":\"" : "\"delta\":{\"content\":\"")
            + text + "\"}" + tail.substring(1);
      }
      return head + "\"text\":\"" + text + tail;
    }
  }

  /** Jackson's "Non-standard token 'NaN'" (NaN, Infinity, -Infinity, +Infinity). */
  private static final java.util.regex.Pattern NON_NUMERIC = java.util.regex.Pattern.compile("^Non-standard token '([^']*)'");
  /** Jackson's hints naming its own switches, which mean nothing to a client. */
  private static final java.util.regex.Pattern PARSER_HINT = java.util.regex.Pattern.compile(
      ":? ?enable `[A-Za-z_.]+` to allow| ?\\(not recognized as one since Feature '[A-Za-z_]+' not enabled for parser\\)");

  /**
   * Where and why a request body is not JSON, in one line of the JSON's terms: a NaN or an
   * Infinity (which JSON has no number for) names its field; the parser's switches are left out.
   */
  static String notJson(JacksonException e) {
    String message = e.getOriginalMessage() == null ? "" : e.getOriginalMessage();
    java.util.regex.Matcher m = NON_NUMERIC.matcher(message);
    if (m.find()) {
      com.fasterxml.jackson.core.JsonLocation at = e.getLocation();
      String field = null;
      if (e.getProcessor() instanceof com.fasterxml.jackson.core.JsonParser p) {
        for (com.fasterxml.jackson.core.JsonStreamContext c = p.getParsingContext(); c != null && field == null;
            c = c.getParent()) {
          field = c.getCurrentName();
        }
      }
      return (at == null ? "" : "line " + at.getLineNr() + ", column " + at.getColumnNr() + ": ")
          + "not valid JSON: " + (field == null ? "" : "'" + InputTrees.quote(field) + "' is ")
          + InputTrees.quote(m.group(1)) + ", which is not a JSON number (JSON has no NaN or Infinity):"
          + " give a finite number";
    }
    return PARSER_HINT.matcher(InputTrees.problem(e, "not valid JSON")).replaceAll("");
  }

  private static String quoted(String s) {
    try {
      return JSON.writeValueAsString(s);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The streamed usage chunk (no choices). */
  static String usageChunk(long id, boolean chat, String model, long created, int prompt, int completion) {
    ObjectNode root = JSON.createObjectNode();
    root.put("id", responseId(id, chat));
    root.put("object", chat ? "chat.completion.chunk" : "text_completion");
    root.put("created", created);
    root.put("model", model);
    root.putArray("choices");
    usage(root, prompt, completion);
    return sse(root);
  }

  /** The end of a stream. */
  static final String DONE = "data: [DONE]\n\n";

  /** The whole answer of a request that did not stream. */
  static String completion(long id, boolean chat, String model, long created, int prompt, int completion) {
    return completion(id, new long[] {id}, new int[] {completion}, chat, model, created, prompt);
  }

  /**
   * The whole answer {@code id} of a request that did not stream, with a choice per entry of
   * {@code choiceIds} (the simulated request behind each, whose id picks its text) of {@code
   * completions[i]} tokens; usage counts the prompt once and the tokens of every choice.
   */
  static String completion(long id, long[] choiceIds, int[] completions, boolean chat, String model, long created,
      int prompt) {
    ObjectNode root = JSON.createObjectNode();
    root.put("id", responseId(id, chat));
    root.put("object", chat ? "chat.completion" : "text_completion");
    root.put("created", created);
    root.put("model", model);
    ArrayNode choices = root.putArray("choices");
    int total = 0;
    for (int k = 0; k < choiceIds.length; k++) {
      StringBuilder text = new StringBuilder();
      for (int i = 1; i <= completions[k]; i++) {
        text.append(tokenText(choiceIds[k], i));
      }
      total += completions[k];
      ObjectNode c = choices.addObject();
      c.put("index", k);
      if (chat) {
        ObjectNode message = c.putObject("message");
        message.put("role", "assistant");
        message.put("content", text.toString());
      } else {
        c.put("text", text.toString());
      }
      c.putNull("logprobs");
      c.put("finish_reason", "length");
    }
    usage(root, prompt, total);
    return write(root);
  }

  private static void usage(ObjectNode root, int prompt, int completion) {
    ObjectNode u = root.putObject("usage");
    u.put("prompt_tokens", prompt);
    u.put("total_tokens", prompt + completion);
    u.put("completion_tokens", completion);
  }

  /** An error body as vLLM writes it. */
  static String error(int status, String message) {
    ObjectNode root = JSON.createObjectNode();
    ObjectNode e = root.putObject("error");
    e.put("message", message);
    e.put("type", status == 404 ? "NotFoundError" : status >= 500 ? "InternalServerError" : "BadRequestError");
    e.putNull("param");
    e.put("code", status);
    return write(root);
  }

  /** What {@code GET /version} answers: vLLM's shape, naming the simulator. */
  static String version() {
    ObjectNode root = JSON.createObjectNode();
    root.put("version", "blis serve " + VERSION + " (simulated vLLM)");
    return root.toString();
  }

  /** The version of BLIS the simulated server reports. */
  static final String VERSION = "0.1.0";

  /** The {@code /v1/models} list, every model of one context limit. */
  static String models(List<String> names, long created, int maxModelLen) {
    return models(names, created, name -> maxModelLen);
  }

  /** The {@code /v1/models} list, each model with its own context limit (0: none given). */
  static String models(List<String> names, long created, java.util.function.ToIntFunction<String> maxModelLenOf) {
    return models(names, List.of(), created, maxModelLenOf);
  }

  /**
   * The {@code /v1/models} list: the models, then the LoRA adapters {@code adapters}, each with the
   * first model as its {@code parent} (as vLLM lists {@code --lora-modules}).
   */
  static String models(List<String> names, List<String> adapters, long created,
      java.util.function.ToIntFunction<String> maxModelLenOf) {
    ObjectNode root = JSON.createObjectNode();
    root.put("object", "list");
    ArrayNode data = root.putArray("data");
    for (String name : names) {
      model(data, name, null, created, maxModelLenOf.applyAsInt(name));
    }
    for (String adapter : adapters) {
      model(data, adapter, names.get(0), created, maxModelLenOf.applyAsInt(adapter));
    }
    return write(root);
  }

  /** One entry of the {@code /v1/models} list; {@code parent} (a LoRA adapter's model) null for a model. */
  private static void model(ArrayNode data, String id, String parent, long created, int maxModelLen) {
    ObjectNode m = data.addObject();
    m.put("id", id);
    m.put("object", "model");
    m.put("created", created);
    m.put("owned_by", "blis");
    m.put("root", id);
    if (parent != null) {
      m.put("parent", parent);
    }
    if (maxModelLen > 0) {
      m.put("max_model_len", maxModelLen);
    }
  }

  private static String sse(ObjectNode node) {
    return "data: " + write(node) + "\n\n";
  }

  private static String write(ObjectNode node) {
    try {
      return JSON.writeValueAsString(node);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }
}
