package io.blis.cli.observe;

import java.net.URI;
import java.util.Locale;

/**
 * How {@link Observer} talks to a server.
 *
 * @param endpoint the OpenAI base URL, for example {@code http://127.0.0.1:8000/v1}
 * @param servedModel the model name the server answers to (the request's {@code model})
 * @param api which endpoint the requests go to
 * @param promptFormat how prompts are written
 * @param maxConcurrency requests in flight at most (a request due while the cap is reached waits
 *     and is sent late); 0 for no cap
 * @param timeoutUs the client's timeout of a request without one of its own, microseconds
 * @param ignoreEos whether requests carry vLLM's {@code ignore_eos}
 * @param tokenTimes whether to keep every chunk's arrival time
 * @param apiKey sent as a bearer token, or null
 * @param metricsUri the server's Prometheus endpoint, or null for none
 * @param metricsIntervalUs how often it is scraped, microseconds
 * @param connectTimeoutUs how long a connection may take, microseconds
 * @param streaming whether answers stream (server-sent events, every chunk timestamped); without,
 *     each answer is one JSON body, its first byte the first chunk and its end the last (Go
 *     BLIS's {@code --no-streaming})
 * @param unconstrainedOutput whether the server decides each answer's length (Go BLIS's {@code
 *     --unconstrained-output}): no {@code max_tokens} on chat, the largest int on completions, and no
 *     {@code ignore_eos}
 * @param minTokens {@code min_tokens} sent with every request (Go BLIS's {@code --min-tokens}), 0 for
 *     none
 */
public record ObserveConfig(URI endpoint, String servedModel, Api api, PromptFormat promptFormat,
    int maxConcurrency, long timeoutUs, boolean ignoreEos, boolean tokenTimes, String apiKey,
    URI metricsUri, long metricsIntervalUs, long connectTimeoutUs, boolean streaming, boolean unconstrainedOutput,
    int minTokens) {

  /** The endpoint requests go to. */
  public enum Api {
    /** {@code POST /completions}. */
    COMPLETIONS("completions", "completion"),
    /** {@code POST /chat/completions}. */
    CHAT("chat/completions", "chat");

    private final String path;
    private final String label;

    Api(String path, String label) {
      this.path = path;
      this.label = label;
    }

    /** The path below the base URL. */
    public String path() {
      return path;
    }

    /** The name the experiments file uses ({@code workload.api.type}). */
    public String label() {
      return label;
    }

    /** Parses {@code completions} or {@code chat}. */
    public static Api parse(String s) {
      return switch (s.toLowerCase(Locale.ROOT)) {
        case "completions", "completion" -> COMPLETIONS;
        case "chat", "chat-completions", "chat/completions" -> CHAT;
        default -> throw new IllegalArgumentException("expected completions or chat, got '" + s + "'");
      };
    }
  }

  /** How a prompt is written (see {@link PromptEncoder}). */
  public enum PromptFormat {
    /** The token ids themselves: exact. */
    TOKEN_IDS("token-ids"),
    /** One word per token; the server's own tokens measured and subtracted. */
    TEXT("text");

    private final String label;

    PromptFormat(String label) {
      this.label = label;
    }

    public String label() {
      return label;
    }

    /** Parses {@code token-ids} or {@code text}. */
    public static PromptFormat parse(String s) {
      return switch (s.toLowerCase(Locale.ROOT)) {
        case "token-ids", "tokens", "ids" -> TOKEN_IDS;
        case "text", "words" -> TEXT;
        default -> throw new IllegalArgumentException("expected token-ids or text, got '" + s + "'");
      };
    }
  }

  /** The defaults: completions with token ids, no cap, 300 s timeout, ignore_eos, metrics every second. */
  public static ObserveConfig of(URI endpoint, String servedModel) {
    return new ObserveConfig(endpoint, servedModel, Api.COMPLETIONS, PromptFormat.TOKEN_IDS, 0,
        300_000_000L, true, false, null, rootOf(endpoint).resolve("metrics"), 1_000_000L, 10_000_000L, true, false, 0);
  }

  public ObserveConfig {
    if (minTokens < 0) {
      throw new IllegalArgumentException("min_tokens must be >= 0 (0: none), got " + minTokens);
    }
    if (endpoint == null || endpoint.getScheme() == null
        || !(endpoint.getScheme().equals("http") || endpoint.getScheme().equals("https"))
        || endpoint.getHost() == null) {
      throw new IllegalArgumentException("endpoint: expected an http:// or https:// URL with a host, such as"
          + " http://127.0.0.1:8000/v1, got '" + endpoint + "'");
    }
    if (servedModel == null || servedModel.isBlank()) {
      throw new IllegalArgumentException("served model: expected the model name the server answers to");
    }
    if (api == Api.CHAT && promptFormat == PromptFormat.TOKEN_IDS) {
      throw new IllegalArgumentException("chat requests take text: use the text prompt format with the chat API");
    }
    if (maxConcurrency < 0) {
      throw new IllegalArgumentException("max concurrency must be >= 0 (0 = no cap), got " + maxConcurrency);
    }
    if (timeoutUs <= 0) {
      throw new IllegalArgumentException("timeout must be positive, got " + timeoutUs + " us");
    }
    if (metricsIntervalUs <= 0) {
      throw new IllegalArgumentException("metrics interval must be positive, got " + metricsIntervalUs + " us");
    }
    if (connectTimeoutUs <= 0) {
      throw new IllegalArgumentException("connect timeout must be positive, got " + connectTimeoutUs + " us");
    }
  }

  /** {@code uri} ending in a slash, so that relative paths resolve below it. */
  static URI withSlash(URI uri) {
    String s = uri.toString();
    return s.endsWith("/") ? uri : URI.create(s + "/");
  }

  /**
   * The server's root: the base URL without its trailing {@code /v1} (vLLM serves {@code
   * /metrics}, {@code /health} and {@code /version} there).
   */
  public static URI rootOf(URI endpoint) {
    String s = endpoint.toString().replaceAll("/+$", "");
    if (s.endsWith("/v1")) {
      s = s.substring(0, s.length() - 3);
    }
    return URI.create(s + "/");
  }

  /** The URL of {@link #api()}. */
  URI requestUri() {
    return withSlash(endpoint).resolve(api.path());
  }

  /** A builder starting from this configuration. */
  public Builder toBuilder() {
    return new Builder(this);
  }

  /** A builder with the defaults of {@link #of}. */
  public static Builder builder(URI endpoint, String servedModel) {
    return of(endpoint, servedModel).toBuilder();
  }

  /** Builds an {@link ObserveConfig}; {@link #build()} checks every value. */
  public static final class Builder {
    private URI endpoint;
    private String servedModel;
    private Api api;
    private PromptFormat promptFormat;
    private int maxConcurrency;
    private long timeoutUs;
    private boolean ignoreEos;
    private boolean tokenTimes;
    private String apiKey;
    private URI metricsUri;
    private long metricsIntervalUs;
    private long connectTimeoutUs;
    private boolean streaming;
    private boolean unconstrainedOutput;
    private int minTokens;

    private Builder(ObserveConfig c) {
      endpoint = c.endpoint;
      servedModel = c.servedModel;
      api = c.api;
      promptFormat = c.promptFormat;
      maxConcurrency = c.maxConcurrency;
      timeoutUs = c.timeoutUs;
      ignoreEos = c.ignoreEos;
      tokenTimes = c.tokenTimes;
      apiKey = c.apiKey;
      metricsUri = c.metricsUri;
      metricsIntervalUs = c.metricsIntervalUs;
      connectTimeoutUs = c.connectTimeoutUs;
      streaming = c.streaming;
      unconstrainedOutput = c.unconstrainedOutput;
      minTokens = c.minTokens;
    }

    /**
     * Go BLIS's {@code --unconstrained-output}: the server decides each answer's length (no
     * {@code max_tokens} on chat, the largest int on completions, no {@code ignore_eos}).
     */
    public Builder unconstrainedOutput(boolean b) {
      unconstrainedOutput = b;
      return this;
    }

    /** Go BLIS's {@code --min-tokens}: {@code min_tokens} on every request, 0 for none. */
    public Builder minTokens(int n) {
      minTokens = n;
      return this;
    }

    /** Whether answers stream (default) or come as one JSON body each. */
    public Builder streaming(boolean b) {
      streaming = b;
      return this;
    }

    /** The endpoint and how prompts are written (chat takes text). */
    public Builder api(Api a, PromptFormat f) {
      api = a;
      promptFormat = f;
      return this;
    }

    /** Requests in flight at most, 0 for no cap. */
    public Builder maxConcurrency(int n) {
      maxConcurrency = n;
      return this;
    }

    /** The client's timeout of a request without one of its own, microseconds. */
    public Builder timeoutUs(long us) {
      timeoutUs = us;
      return this;
    }

    public Builder ignoreEos(boolean b) {
      ignoreEos = b;
      return this;
    }

    /** Whether every chunk's arrival time is kept. */
    public Builder tokenTimes(boolean b) {
      tokenTimes = b;
      return this;
    }

    /** A bearer token, or null. */
    public Builder apiKey(String key) {
      apiKey = key;
      return this;
    }

    /** The Prometheus endpoint ({@code null}: do not scrape) and how often, microseconds. */
    public Builder metrics(URI uri, long intervalUs) {
      metricsUri = uri;
      metricsIntervalUs = intervalUs;
      return this;
    }

    public Builder connectTimeoutUs(long us) {
      connectTimeoutUs = us;
      return this;
    }

    /**
     * @throws IllegalArgumentException naming the value that is out of range
     */
    public ObserveConfig build() {
      return new ObserveConfig(endpoint, servedModel, api, promptFormat, maxConcurrency, timeoutUs,
          ignoreEos, tokenTimes, apiKey, metricsUri, metricsIntervalUs, connectTimeoutUs, streaming,
          unconstrainedOutput, minTokens);
    }
  }
}
