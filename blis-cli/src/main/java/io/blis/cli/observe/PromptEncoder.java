package io.blis.cli.observe;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.blis.workload.RequestSpec;
import java.nio.charset.StandardCharsets;

/**
 * Turns a workload request into an OpenAI request body of the length the workload asks for,
 * without a tokenizer.
 *
 * <ul>
 *   <li>{@link ObserveConfig.PromptFormat#TOKEN_IDS} (completions only): the prompt is the
 *       request's token ids, a JSON array of integers, which vLLM takes as they are: exact, and
 *       prompts that share a prefix share it token for token. The ids lie in [3, 32000), valid in
 *       every common vocabulary.
 *   <li>{@link ObserveConfig.PromptFormat#TEXT}: one common English word per token (a space, then
 *       the word: one token in the tokenizers of the Llama, Mistral, Qwen and GPT families), the
 *       word chosen by the token id, so shared prefixes stay shared. The server adds tokens of its
 *       own (a beginning-of-sequence token; a chat template), which {@link Observer#probe()}
 *       measures before the run and subtracts; the server's {@code usage.prompt_tokens} of every
 *       request tells how exact it was.
 * </ul>
 *
 * Every request streams ({@code stream_options.include_usage} asks for the token counts; unless
 * {@link ObserveConfig#streaming()} is off: one JSON body, which carries them too) and
 * asks for exactly the workload's output length ({@code max_tokens}, and {@code ignore_eos}
 * unless turned off, so that vLLM does not stop at an end-of-sequence token).
 */
final class PromptEncoder {

  /** Common words, each one token after a space in the usual BPE vocabularies. */
  private static final String[] WORDS = ("the of and to in is was for on that with as by at from"
      + " his her they this which are be it an or had not but have were their one all new more"
      + " other some time there when who will would can about out up into only after first two"
      + " over also most may such these than its made then them well many any through where much"
      + " before between even each three same both long under while last work world life"
      + " year day man men home house water state city land name part place good great small"
      + " old high right left large young early late best real full open free hard sure clear"
      + " red blue green black white light dark fire wind rain snow tree road book word line"
      + " hand head eye face door room side food game team group school music paper story news"
      + " power money point fact case week month night order plan form level field price rate"
      + " test data model code list file page view type size value area force heart mind body"
      + " king war army river sea ship train car bus bird dog horse fish cat star sun"
      + " moon stone gold iron wood glass bread milk tea wine salt sugar rice corn seed leaf"
      + " grass flower song dance art film show play run walk talk read write sing eat drink")
      .split(" ");

  private static final ObjectMapper JSON = new ObjectMapper();

  private final ObserveConfig config;
  private final int overheadTokens;
  private final double tokensPerWord;

  /**
   * @param config the run's settings
   * @param overheadTokens tokens the server adds to a text prompt (BOS, chat template), measured
   *     by {@link Observer#probe()}; 0 for token ids
   * @param tokensPerWord tokens the server counts per word of a text prompt (1 when exact)
   */
  PromptEncoder(ObserveConfig config, int overheadTokens, double tokensPerWord) {
    this(config, overheadTokens, tokensPerWord, -1);
  }

  /**
   * @param maxModelLen the server's context length (its /v1/models max_model_len), or -1 when
   *     unknown: with {@link ObserveConfig#unconstrainedOutput} a completion asks for what is left of
   *     it after the prompt
   */
  PromptEncoder(ObserveConfig config, int overheadTokens, double tokensPerWord, int maxModelLen) {
    this.config = config;
    this.overheadTokens = overheadTokens;
    this.tokensPerWord = tokensPerWord;
    this.maxModelLen = maxModelLen;
  }

  private final int maxModelLen;

  /** The word standing for token {@code id} in a text prompt. */
  static String word(int id) {
    return WORDS[Math.floorMod(id, WORDS.length)];
  }

  /** Words of a text prompt meant to be {@code tokens} tokens long (at least one). */
  int words(int tokens) {
    return (int) Math.max(1, Math.round((tokens - overheadTokens) / tokensPerWord));
  }

  /** Prompt tokens the server should count for {@code r} as it is encoded. */
  int promptTokensSent(RequestSpec r) {
    return config.promptFormat() == ObserveConfig.PromptFormat.TOKEN_IDS ? r.inputTokens()
        : (int) Math.round(words(r.inputTokens()) * tokensPerWord) + overheadTokens;
  }

  /** The {@code max_tokens} {@link #body(RequestSpec)} sends for {@code r}, 0 when it sends none. */
  int maxTokensSent(RequestSpec r) {
    if (config.unconstrainedOutput()) {
      // the server decides: chat without max_tokens; a completion (whose API default is 16 tokens)
      // asks for the rest of the context, the most a vLLM server accepts (Go BLIS asks for the
      // largest int, which vLLM refuses with HTTP 400), or says nothing when the context is unknown
      return config.api() == ObserveConfig.Api.CHAT || maxModelLen <= 0 ? 0
          : Math.max(1, maxModelLen - promptTokensSent(r));
    }
    return r.outputTokens();
  }

  /** The request body for {@code r}. */
  byte[] body(RequestSpec r) {
    int maxTokens = maxTokensSent(r);
    // a request naming a LoRA adapter asks for it by name, as vLLM serves adapters (--lora-modules)
    return body(r.promptTokens(), config.promptFormat() == ObserveConfig.PromptFormat.TOKEN_IDS
        ? r.inputTokens() : words(r.inputTokens()), maxTokens, config.streaming(),
        r.adapter().isEmpty() ? config.servedModel() : r.adapter(),
        config.ignoreEos() && !config.unconstrainedOutput(), config.minTokens());
  }

  /**
   * A body whose prompt is the first {@code length} entries of {@code tokens} (ids, or words of
   * them), asking for {@code maxTokens} tokens, streamed or not.
   */
  byte[] body(int[] tokens, int length, int maxTokens, boolean stream) {
    return body(tokens, length, maxTokens, stream, config.servedModel(), config.ignoreEos(), 0);
  }

  /**
   * As {@link #body(int[], int, int, boolean)}, naming {@code model}; {@code maxTokens} 0 leaves
   * max_tokens out, {@code minTokens} 0 leaves min_tokens out.
   */
  private byte[] body(int[] tokens, int length, int maxTokens, boolean stream, String model, boolean ignoreEos,
      int minTokens) {
    ObjectNode root = JSON.createObjectNode();
    root.put("model", model);
    if (config.api() == ObserveConfig.Api.CHAT) {
      ObjectNode message = root.putArray("messages").addObject();
      message.put("role", "user");
      message.put("content", text(tokens, length));
    } else if (config.promptFormat() == ObserveConfig.PromptFormat.TOKEN_IDS) {
      ArrayNode ids = root.putArray("prompt");
      for (int i = 0; i < length; i++) {
        ids.add(tokens[i]);
      }
    } else {
      root.put("prompt", text(tokens, length));
    }
    if (maxTokens > 0) {
      root.put("max_tokens", maxTokens);
    }
    if (minTokens > 0) {
      root.put("min_tokens", minTokens);
    }
    if (ignoreEos) {
      root.put("ignore_eos", true);
    }
    root.put("stream", stream);
    if (stream) {
      root.putObject("stream_options").put("include_usage", true);
    }
    return root.toString().getBytes(StandardCharsets.UTF_8);
  }

  /**
   * {@code length} words, word i standing for token i of {@code tokens} (past its end, for a
   * prompt longer than its ids, the word of the position).
   */
  private static String text(int[] tokens, int length) {
    StringBuilder b = new StringBuilder(length * 5);
    for (int i = 0; i < length; i++) {
      if (i > 0) {
        b.append(' ');
      }
      b.append(word(i < tokens.length ? tokens[i] : i));
    }
    return b.toString();
  }
}
