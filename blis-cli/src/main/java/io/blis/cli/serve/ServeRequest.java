package io.blis.cli.serve;

import java.util.List;

/**
 * One generation request as the simulated server understood it.
 *
 * @param chat whether it came to {@code /v1/chat/completions}
 * @param model the model name the client asked for
 * @param promptTokens the prompt as token ids (given, or derived from the text; see {@link
 *     OpenAiProtocol})
 * @param maxTokens tokens to generate, or -1 for "up to max_model_len" (vLLM's default for chat,
 *     and for a completion whose {@code max_tokens} is an explicit {@code null}; a completion
 *     without {@code max_tokens} asks for 16)
 * @param stream whether the answer streams as server-sent events
 * @param includeUsage whether a streamed answer ends with a usage chunk
 *     ({@code stream_options.include_usage})
 * @param ignored the request's fields that were accepted (and validated where vLLM validates them)
 *     but have no effect on the simulation, in the order of the body: sampling parameters, stop
 *     strings, logprobs, tools, unknown fields. Each name is header-safe (letters, digits, {@code
 *     _ . -}, anything else percent-encoded), so {@code String.join(",", ignored)} can be sent as
 *     a header such as {@code x-blis-ignored}
 * @param n sequences to generate for the prompt, at least 1 (more: vLLM's parallel sampling, each
 *     a request of its own in the engine, sharing the prompt's KV blocks through the prefix cache)
 */
public record ServeRequest(boolean chat, String model, int[] promptTokens, int maxTokens,
    boolean stream, boolean includeUsage, List<String> ignored, int n) {

  /** Copies {@code ignored} (null for none). */
  public ServeRequest {
    ignored = ignored == null ? List.of() : List.copyOf(ignored);
    if (n < 1) {
      throw new IllegalArgumentException("n must be at least 1, got " + n);
    }
  }

  /** One sequence. */
  public ServeRequest(boolean chat, String model, int[] promptTokens, int maxTokens,
      boolean stream, boolean includeUsage, List<String> ignored) {
    this(chat, model, promptTokens, maxTokens, stream, includeUsage, ignored, 1);
  }

  /** A request with no ignored fields. */
  public ServeRequest(boolean chat, String model, int[] promptTokens, int maxTokens,
      boolean stream, boolean includeUsage) {
    this(chat, model, promptTokens, maxTokens, stream, includeUsage, List.of());
  }
}
