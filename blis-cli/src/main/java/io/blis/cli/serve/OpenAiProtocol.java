package io.blis.cli.serve;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.blis.latency.coeff.InputTrees;
import java.util.ArrayList;
import java.util.List;

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

  private OpenAiProtocol() {}

  /**
   * Parses a request body.
   *
   * @param chat whether it came to {@code /v1/chat/completions}
   * @throws IllegalArgumentException naming the field and what was expected
   */
  public static ServeRequest parse(byte[] body, boolean chat) {
    JsonNode root;
    try {
      root = JSON.readTree(body);
    } catch (JacksonException e) {
      throw new IllegalArgumentException("request body, " + InputTrees.problem(e, "not valid JSON"));
    } catch (java.io.IOException e) {
      throw new IllegalArgumentException("request body cannot be read: " + e.getMessage());
    }
    if (root == null || !root.isObject()) {
      throw new IllegalArgumentException("request body must be a JSON object");
    }
    JsonNode modelNode = root.get("model");
    String model = modelNode == null || modelNode.isNull() ? "" : text(modelNode, "model");
    int[] prompt = chat ? chatPrompt(root.get("messages")) : completionPrompt(root.get("prompt"));
    int maxTokens = -1;
    JsonNode mt = root.hasNonNull("max_completion_tokens") ? root.get("max_completion_tokens") : root.get("max_tokens");
    if (mt != null && !mt.isNull()) {
      if (!mt.canConvertToInt() || !mt.isIntegralNumber() || mt.asInt() < 1) {
        throw new IllegalArgumentException("'max_tokens' must be a positive integer, got "
            + InputTrees.quote(mt.toString()));
      }
      maxTokens = mt.asInt();
    }
    JsonNode n = root.get("n");
    if (n != null && !n.isNull() && !(n.isIntegralNumber() && n.asInt() == 1)) {
      throw new IllegalArgumentException("'n' must be 1 (the simulated server returns one choice), got "
          + InputTrees.quote(n.toString()));
    }
    boolean stream = bool(root.get("stream"), "stream");
    JsonNode opts = root.get("stream_options");
    boolean includeUsage = opts != null && opts.isObject() && bool(opts.get("include_usage"), "stream_options.include_usage");
    return new ServeRequest(chat, model, prompt, maxTokens, stream, includeUsage);
  }

  private static String text(JsonNode n, String field) {
    if (!n.isTextual()) {
      throw new IllegalArgumentException("'" + field + "' must be a string, got " + n.getNodeType().name().toLowerCase(java.util.Locale.ROOT));
    }
    return n.asText();
  }

  private static boolean bool(JsonNode n, String field) {
    if (n == null || n.isNull()) {
      return false;
    }
    if (!n.isBoolean()) {
      throw new IllegalArgumentException("'" + field + "' must be true or false, got "
          + InputTrees.quote(n.toString()));
    }
    return n.asBoolean();
  }

  private static int[] completionPrompt(JsonNode p) {
    if (p == null || p.isNull()) {
      throw new IllegalArgumentException("'prompt' is required");
    }
    if (p.isTextual()) {
      return textTokens(p.asText(), true);
    }
    if (p.isArray()) {
      if (p.size() == 1 && (p.get(0).isTextual() || p.get(0).isArray())) {
        return completionPrompt(p.get(0));
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
        ids[i] = t.asInt();
      }
      return ids;
    }
    throw new IllegalArgumentException("'prompt' must be a string or a list of token ids");
  }

  private static int[] chatPrompt(JsonNode messages) {
    if (messages == null || !messages.isArray() || messages.isEmpty()) {
      throw new IllegalArgumentException("'messages' must be a non-empty list");
    }
    List<Integer> ids = new ArrayList<>();
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
      ids.add(TEMPLATE_ID);
    }
    for (int k = 0; k < CHAT_REPLY_TOKENS; k++) {
      ids.add(TEMPLATE_ID);
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
      this.chat = chat;
      this.head = "data: {\"id\":\"" + responseId(id, chat) + "\",\"object\":\""
          + (chat ? "chat.completion.chunk" : "text_completion") + "\",\"created\":" + created
          + ",\"model\":" + quoted(model) + ",\"choices\":[{\"index\":0,";
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
    StringBuilder text = new StringBuilder();
    for (int i = 1; i <= completion; i++) {
      text.append(tokenText(id, i));
    }
    ObjectNode root = JSON.createObjectNode();
    root.put("id", responseId(id, chat));
    root.put("object", chat ? "chat.completion" : "text_completion");
    root.put("created", created);
    root.put("model", model);
    ObjectNode c = root.putArray("choices").addObject();
    c.put("index", 0);
    if (chat) {
      ObjectNode message = c.putObject("message");
      message.put("role", "assistant");
      message.put("content", text.toString());
    } else {
      c.put("text", text.toString());
    }
    c.putNull("logprobs");
    c.put("finish_reason", "length");
    usage(root, prompt, completion);
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

  /** The {@code /v1/models} list. */
  static String models(List<String> names, long created, int maxModelLen) {
    ObjectNode root = JSON.createObjectNode();
    root.put("object", "list");
    ArrayNode data = root.putArray("data");
    for (String name : names) {
      ObjectNode m = data.addObject();
      m.put("id", name);
      m.put("object", "model");
      m.put("created", created);
      m.put("owned_by", "blis");
      m.put("root", name);
      if (maxModelLen > 0) {
        m.put("max_model_len", maxModelLen);
      }
    }
    return write(root);
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
