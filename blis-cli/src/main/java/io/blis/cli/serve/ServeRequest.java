package io.blis.cli.serve;

/**
 * One generation request as the simulated server understood it.
 *
 * @param chat whether it came to {@code /v1/chat/completions}
 * @param model the model name the client asked for
 * @param promptTokens the prompt as token ids (given, or derived from the text; see {@link
 *     OpenAiProtocol})
 * @param maxTokens tokens to generate, or -1 for "up to max_model_len" (vLLM's default)
 * @param stream whether the answer streams as server-sent events
 * @param includeUsage whether a streamed answer ends with a usage chunk
 *     ({@code stream_options.include_usage})
 */
public record ServeRequest(boolean chat, String model, int[] promptTokens, int maxTokens,
    boolean stream, boolean includeUsage) {}
