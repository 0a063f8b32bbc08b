package io.blis.cli.observe;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.blis.latency.coeff.InputTrees;
import io.blis.workload.RequestOutcome;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import io.netty.handler.codec.http.HttpMethod;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

/**
 * Drives a live OpenAI-compatible server (vLLM, or {@code blis serve}) with a workload and records
 * what the client sees of every request.
 *
 * <p>Open loop: each request is sent when the wall clock reaches its arrival time (microseconds
 * since the start of the run), whatever the server's state; a request that cannot go on time (the
 * concurrency cap is reached, the machine is busy) goes late and its lateness is recorded, never
 * dropped. Session follow-ups and later load stages arrive as the workload releases them when
 * earlier requests end, exactly as in a simulation. Every request streams; the answer is read as
 * server-sent events and every chunk timestamped ({@link SseRecorder}). Every request ends in one
 * {@link Observation}: complete, or failed with its reason (HTTP status, a broken or cut stream, a
 * malformed line, an error event, the client's timeout, a stop).
 *
 * <p>HTTP is {@link NettyClient}'s (HTTP/1.1, keep-alive connections, one per request in flight;
 * Netty must be on the class path, as for {@code blis serve}). The workload is pulled on the
 * thread that calls {@link #run}, which also calls the listener.
 */
public final class Observer implements AutoCloseable {

  /** A request sent later than this after its time counts as late, microseconds. */
  public static final long LATE_US = 10_000;

  private static final ObjectMapper JSON = new ObjectMapper();
  /** Words of the two text prompts that measure the server's own prompt tokens. */
  private static final int PROBE_WORDS_SHORT = 16;
  private static final int PROBE_WORDS_LONG = 80;

  /** The most bytes read of the server's answers before the run: the model list, a probe, /version. */
  static final long MAX_MODELS_BYTES = 4L << 20;
  static final long MAX_PROBE_BYTES = 1L << 20;
  static final long MAX_VERSION_BYTES = 64L << 10;
  /** The most bytes read of one metrics scrape (vLLM's, with every histogram of 8 engines, is well below). */
  static final long MAX_METRICS_BYTES = 32L << 20;
  /** The longest version string recorded; a longer one is recorded as unknown. */
  static final int MAX_VERSION_CHARS = 200;
  /** The longest model id and {@code vllm:cache_config_info} label value recorded. */
  static final int MAX_NAME_CHARS = 1024;
  static final int MAX_LABEL_CHARS = 200;
  /** Labels of {@code vllm:cache_config_info} recorded at most. */
  static final int MAX_CACHE_LABELS = 64;

  private final ObserveConfig config;
  private final NettyClient http;
  private final ScheduledThreadPoolExecutor timer;
  private final ServerChecks checks = new ServerChecks();
  private ServerInfo info;
  private volatile boolean stopping;
  private volatile Thread runner;

  private Observer(ObserveConfig config) {
    this.config = config;
    this.http = new NettyClient(config.connectTimeoutUs());
    this.timer = new ScheduledThreadPoolExecutor(1, daemon("blis-observe-timer"));
    timer.setRemoveOnCancelPolicy(true);
  }

  /** An observer of the server {@code config} names; call {@link #probe()}, then {@link #run}. */
  public static Observer create(ObserveConfig config) {
    return new Observer(config);
  }

  private static ThreadFactory daemon(String name) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, name + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }

  // ------------------------------------------------------------------ before the run

  /**
   * The model names the server lists ({@code GET /v1/models}), without checking the configured
   * one: for a client that has not named a model yet (the configured name is not used).
   *
   * @throws IllegalArgumentException if the server cannot be reached or does not answer the list
   *     (the message says how it answered)
   */
  public List<String> servedModels() {
    URI modelsUri = ObserveConfig.withSlash(config.endpoint()).resolve("models");
    NettyClient.Answer r = get(modelsUri, MAX_MODELS_BYTES);
    if (r.status() != 200) {
      throw new IllegalArgumentException("GET " + modelsUri + " answered HTTP " + r.status()
          + ": the served models are unknown");
    }
    return ModelList.of(modelsUri, parseJson(r.body()), "").models();
  }

  /**
   * The answer of {@code GET /v1/models}, checked: the ids that are strings (of at most {@value
   * #MAX_NAME_CHARS} characters, without control characters), the served model's {@code
   * max_model_len} when it is a positive integer (-1 otherwise), and a warning line for each field
   * that is not what the OpenAI list says; {@code data} that is not a list is the caller's.
   */
  private record ModelList(List<String> models, int maxModelLen, List<String> warnings) {
    static ModelList of(URI uri, JsonNode root, String servedModel) {
      List<String> models = new ArrayList<>();
      List<String> warnings = new ArrayList<>();
      int maxModelLen = -1;
      int badIds = 0;
      String firstBad = null;
      JsonNode data = root.path("data");
      for (JsonNode m : data.isArray() ? data : JSON.createArrayNode()) {
        JsonNode id = m.path("id");
        if (!id.isTextual() || id.asText().isEmpty() || id.asText().length() > MAX_NAME_CHARS
            || !InputTrees.oneLine(id.asText()).equals(id.asText())) {
          badIds++;
          firstBad = firstBad != null ? firstBad : InputTrees.quote(m.toString());
          continue;
        }
        models.add(id.asText());
        JsonNode len = m.get("max_model_len");
        if (id.asText().equals(servedModel) && len != null && !len.isNull()) {
          if (len.isIntegralNumber() && len.canConvertToInt() && len.asInt() >= 1) {
            maxModelLen = len.asInt();
          } else {
            warnings.add("warning: GET " + uri + ": max_model_len of '" + servedModel + "' must be a positive"
                + " integer, got " + InputTrees.quote(len.toString()) + ": ignored (max_model_len is unknown)");
          }
        }
      }
      if (badIds > 0) {
        warnings.add("warning: GET " + uri + ": " + badIds + " entr" + (badIds == 1 ? "y" : "ies") + " of 'data'"
            + " without an 'id' string (of at most " + MAX_NAME_CHARS + " characters, no control characters),"
            + " the first " + firstBad + ": ignored");
      }
      return new ModelList(models, maxModelLen, warnings);
    }
  }

  /** At most five of {@code models}, and how many more: never a list of millions in one line. */
  public static String someOf(List<String> models) {
    int shown = Math.min(models.size(), 5);
    return String.join(", ", models.subList(0, shown))
        + (models.size() > shown ? " and " + (models.size() - shown) + " more" : "");
  }

  /**
   * Asks the server what it serves ({@code GET /v1/models}), its version ({@code GET /version})
   * and its metrics (one scrape: the KV cache configuration), and for text prompts measures the
   * tokens it adds to a prompt with two short requests of one output token each.
   *
   * @throws IllegalArgumentException if the server cannot be reached, does not serve the model,
   *     or refuses the probe requests (the message says which and why)
   */
  public ServerInfo probe() {
    List<String> notes = new ArrayList<>();
    List<String> warnings = new ArrayList<>();
    List<String> models = new ArrayList<>();
    int maxModelLen = -1;
    URI modelsUri = ObserveConfig.withSlash(config.endpoint()).resolve("models");
    NettyClient.Answer r = get(modelsUri, MAX_MODELS_BYTES);
    if (r.status() == 200) {
      JsonNode root = parseJson(r.body());
      JsonNode data = root.path("data");
      if (root.isObject() && root.has("data") && !data.isArray()) {
        warnings.add("warning: GET " + modelsUri + ": 'data' must be a list of models, got "
            + InputTrees.quote(data.toString()) + ": ignored (the served models and max_model_len are unknown)");
      } else if (!data.isArray()) {
        notes.add("GET " + modelsUri + " answered HTTP 200 but not an OpenAI model list (expected {\"data\": [{\"id\":"
            + " ...}]}, got '" + InputTrees.quote(r.body().strip()) + "'): is this an OpenAI-compatible endpoint?"
            + " The served models and max_model_len are unknown");
      } else if (data.isEmpty()) {
        notes.add("GET " + modelsUri + " lists no model: the served model and max_model_len are unknown");
      }
      ModelList list = ModelList.of(modelsUri, root, config.servedModel());
      models.addAll(list.models());
      maxModelLen = list.maxModelLen();
      warnings.addAll(list.warnings());
      if (!models.isEmpty() && !models.contains(config.servedModel())) {
        throw new IllegalArgumentException("--served-model: the server at " + config.endpoint() + " serves "
            + someOf(models) + ", not '" + config.servedModel() + "'");
      }
    } else {
      notes.add("GET " + modelsUri + " answered HTTP " + r.status() + ": the served models and max_model_len are unknown");
    }
    String version = null;
    URI versionUri = ObserveConfig.rootOf(config.endpoint()).resolve("version");
    try {
      NettyClient.Answer v = get(versionUri, MAX_VERSION_BYTES);
      JsonNode given = v.status() == 200 ? parseJson(v.body()).path("version") : JSON.missingNode();
      if (given.isMissingNode() || given.isNull()) {
        notes.add("GET " + versionUri + " gave no version (HTTP " + v.status() + ")");
      } else if (!given.isTextual() || given.asText().isBlank() || given.asText().length() > MAX_VERSION_CHARS
          || !InputTrees.oneLine(given.asText()).equals(given.asText())) {
        warnings.add("warning: GET " + versionUri + ": 'version' must be a string of 1 to " + MAX_VERSION_CHARS
            + " characters without control characters, got " + (given.isTextual() ? "one of "
            + given.asText().length() + " characters" : InputTrees.quote(given.toString()))
            + ": the version is recorded as unknown");
      } else {
        version = given.asText();
      }
    } catch (TooLargeAnswer e) {
      warnings.add("warning: GET " + versionUri + ": the answer is larger than " + MAX_VERSION_BYTES
          + " bytes: the version is recorded as unknown");
    } catch (IllegalArgumentException e) {
      notes.add("GET " + versionUri + " failed: " + e.getMessage());
    }
    Map<String, String> cacheConfig = Map.of();
    boolean metrics = false;
    if (config.metricsUri() != null) {
      try {
        NettyClient.Answer m = get(config.metricsUri(), MAX_METRICS_BYTES);
        if (m.status() != 200) {
          notes.add("no metrics: GET " + config.metricsUri() + " answered HTTP " + m.status());
        } else {
          PrometheusText.Scrape s = PrometheusText.parse(m.body());
          metrics = MetricsSample.of(0, s).anyVllm();
          cacheConfig = cacheConfig(s.firstLabels("vllm:cache_config_info"), warnings);
          if (!metrics) {
            notes.add("no vLLM metrics at " + config.metricsUri() + " (no vllm:num_requests_running and the like)");
          }
        }
      } catch (IllegalArgumentException e) {
        notes.add("no metrics: " + e.getMessage());
      }
    }
    int overhead = 0;
    double perWord = 1.0;
    if (config.promptFormat() == ObserveConfig.PromptFormat.TEXT) {
      int shortTokens = probePromptTokens(PROBE_WORDS_SHORT, maxModelLen);
      int longTokens = probePromptTokens(PROBE_WORDS_LONG, maxModelLen);
      if (shortTokens < 0 || longTokens < 0) {
        notes.add("the server gives no usage.prompt_tokens: text prompts are sent one word per token"
            + " and their lengths are not checked");
      } else {
        perWord = (longTokens - shortTokens) / (double) (PROBE_WORDS_LONG - PROBE_WORDS_SHORT);
        if (perWord <= 0 || perWord > MAX_TOKENS_PER_WORD) {
          throw new IllegalArgumentException("the server counted " + shortTokens + " prompt tokens for "
              + PROBE_WORDS_SHORT + " words and " + longTokens + " for " + PROBE_WORDS_LONG
              + ": text prompts cannot be sized");
        }
        overhead = (int) Math.max(0, Math.round(shortTokens - PROBE_WORDS_SHORT * perWord));
      }
    }
    info = new ServerInfo(models, maxModelLen, version, cacheConfig, metrics, overhead, perWord, notes, warnings);
    return info;
  }

  /** More tokens per common English word than this is no tokenizer's: the server's counts are wrong. */
  static final double MAX_TOKENS_PER_WORD = 8;

  /**
   * The labels of {@code vllm:cache_config_info} that are recorded: at most {@value
   * #MAX_CACHE_LABELS}, each value at most {@value #MAX_LABEL_CHARS} characters without control
   * characters; the others are left out with one warning line.
   */
  private Map<String, String> cacheConfig(Map<String, String> labels, List<String> warnings) {
    Map<String, String> kept = new java.util.TreeMap<>();
    int dropped = 0;
    String first = null;
    for (Map.Entry<String, String> l : new java.util.TreeMap<>(labels).entrySet()) {
      String v = l.getValue();
      if (kept.size() < MAX_CACHE_LABELS && l.getKey().length() <= MAX_LABEL_CHARS && v.length() <= MAX_LABEL_CHARS
          && InputTrees.oneLine(v).equals(v)) {
        kept.put(l.getKey(), v);
      } else {
        dropped++;
        first = first != null ? first : InputTrees.quote(l.getKey());
      }
    }
    if (dropped > 0) {
      warnings.add("warning: GET " + config.metricsUri() + ": " + dropped + " label(s) of vllm:cache_config_info"
          + " left out (at most " + MAX_CACHE_LABELS + " are recorded, each value at most " + MAX_LABEL_CHARS
          + " characters without control characters), the first " + first);
    }
    return kept;
  }

  /**
   * {@code usage.prompt_tokens} of a text prompt of {@code words} words, -1 when not given or not
   * a count (an integer in [0, the server's max_model_len when it gave one]).
   */
  private int probePromptTokens(int words, int maxModelLen) {
    int[] ids = new int[words];
    for (int i = 0; i < words; i++) {
      ids[i] = 3 + 7919 * (i + 1);
    }
    byte[] body = new PromptEncoder(config, 0, 1.0).body(ids, words, 1, false);
    NettyClient.Answer r = exchange(HttpMethod.POST, config.requestUri(), body, MAX_PROBE_BYTES);
    if (r.status() != 200) {
      throw new IllegalArgumentException("POST " + config.requestUri() + " (a " + words
          + "-word probe of the prompt length) answered HTTP " + r.status() + ": " + clip(r.body()));
    }
    JsonNode u = parseJson(r.body()).path("usage").path("prompt_tokens");
    long max = maxModelLen > 0 ? maxModelLen : Integer.MAX_VALUE;
    return u.isIntegralNumber() && u.canConvertToLong() && u.asLong() >= 0 && u.asLong() <= max ? u.asInt() : -1;
  }

  /**
   * One scrape of the Prometheus endpoint {@code uri}, parsed.
   *
   * @throws IllegalArgumentException when it cannot be read or does not answer 200
   */
  public PrometheusText.Scrape scrape(URI uri) {
    NettyClient.Answer m = get(uri, MAX_METRICS_BYTES);
    if (m.status() != 200) {
      throw new IllegalArgumentException("GET " + uri + " answered HTTP " + m.status());
    }
    return PrometheusText.parse(m.body());
  }

  private NettyClient.Answer get(URI uri, long maxBytes) {
    return exchange(HttpMethod.GET, uri, null, maxBytes);
  }

  /** An answer before the run larger than the client reads of it. */
  static final class TooLargeAnswer extends IllegalArgumentException {
    TooLargeAnswer(String message, Throwable cause) {
      super(message, cause);
    }
  }

  /**
   * One exchange before the run, waited for as long as the connect timeout plus the request
   * timeout (at most 30 s of it); a server that does not answer in that time is an error, and so
   * is an answer of more than {@code maxBytes} bytes ({@link TooLargeAnswer}).
   */
  private NettyClient.Answer exchange(HttpMethod method, URI uri, byte[] body, long maxBytes) {
    CompletableFuture<NettyClient.Answer> answer = http.fetch(method, uri, body, headers(body != null), maxBytes);
    try {
      return answer.get(config.connectTimeoutUs() + Math.min(config.timeoutUs(), 30_000_000L), TimeUnit.MICROSECONDS);
    } catch (ExecutionException e) {
      Throwable c = e.getCause();
      if (c instanceof NettyClient.TooLarge) {
        throw new TooLargeAnswer("--endpoint: " + method + " " + uri + ": " + c.getMessage(), c);
      }
      String why = c instanceof ConnectException ? "cannot connect (" + message(c) + ")"
          : c instanceof IOException ? "connection failed (" + message(c) + ")"
          : message(c);
      throw new IllegalArgumentException("--endpoint: " + method + " " + uri + ": " + why, c);
    } catch (TimeoutException e) {
      answer.cancel(true);
      throw new IllegalArgumentException("--endpoint: " + method + " " + uri + ": no answer within "
          + (config.connectTimeoutUs() + Math.min(config.timeoutUs(), 30_000_000L)) / 1_000_000 + " s", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while asking " + uri, e);
    }
  }

  /** The headers of every request: JSON in, the bearer token when there is one. */
  private Map<String, String> headers(boolean json) {
    Map<String, String> h = new java.util.LinkedHashMap<>();
    if (json) {
      h.put("Content-Type", "application/json");
      h.put("Accept", "text/event-stream, application/json");
    }
    if (config.apiKey() != null && !config.apiKey().isEmpty()) {
      h.put("Authorization", "Bearer " + config.apiKey());
    }
    return h;
  }

  private static String message(Throwable t) {
    String m = t.getMessage();
    return m == null || m.isBlank() ? t.getClass().getSimpleName() : m;
  }

  private static JsonNode parseJson(String body) {
    try {
      JsonNode n = JSON.readTree(body);
      return n == null ? JSON.missingNode() : n;
    } catch (IOException e) {
      return JSON.missingNode();
    }
  }

  private static String clip(String s) {
    String one = s.replaceAll("\\s+", " ").strip();
    return one.length() <= 300 ? one : one.substring(0, 300) + "...";
  }

  // ------------------------------------------------------------------ prewarm

  /** Go BLIS's prewarm: requests in flight at once, prompt tokens, output tokens. */
  public static final int PREWARM_CONCURRENCY = 4;
  public static final int PREWARM_INPUT_TOKENS = 256;
  public static final int PREWARM_OUTPUT_TOKENS = 64;

  /** How a prewarm went: requests sent, and how many of them failed. */
  public record Prewarm(long sent, long failed) {}

  /**
   * Primes a cold server before the run, as Go BLIS's {@code --prewarm-duration} does: {@value
   * #PREWARM_CONCURRENCY} requests in flight at a time, each the same prompt of {@value
   * #PREWARM_INPUT_TOKENS} tokens asking for {@value #PREWARM_OUTPUT_TOKENS} tokens, not streamed,
   * one after another until {@code durationUs} has passed (a request under way then is waited
   * for); after a failure a worker waits 0.5 s. Nothing of it reaches the run's listener. Returns
   * early when {@link #stop()} is called. Calls {@link #probe()} first if it was not called.
   */
  public Prewarm prewarm(long durationUs) {
    if (info == null) {
      probe();
    }
    PromptEncoder enc = new PromptEncoder(config, info.textOverheadTokens(), info.tokensPerWord(), info.maxModelLen());
    int[] ids = new int[PREWARM_INPUT_TOKENS];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = 3 + Math.floorMod(7919 * (i + 1), 31_997);
    }
    int length = config.promptFormat() == ObserveConfig.PromptFormat.TOKEN_IDS ? ids.length : enc.words(ids.length);
    byte[] body = enc.body(ids, length, PREWARM_OUTPUT_TOKENS, false);
    long deadline = System.nanoTime() + durationUs * 1000;
    java.util.concurrent.atomic.AtomicLong sent = new java.util.concurrent.atomic.AtomicLong();
    java.util.concurrent.atomic.AtomicLong failed = new java.util.concurrent.atomic.AtomicLong();
    java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(PREWARM_CONCURRENCY);
    for (int i = 0; i < PREWARM_CONCURRENCY; i++) {
      timer.execute(() -> prewarmOne(body, deadline, sent, failed, done));
    }
    try {
      while (!done.await(50, TimeUnit.MILLISECONDS)) {
        if (stopping) {
          break;
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return new Prewarm(sent.get(), failed.get());
  }

  /** One prewarm request, then (on the timer's thread) the next, until the deadline. */
  private void prewarmOne(byte[] body, long deadlineNanos, java.util.concurrent.atomic.AtomicLong sent,
      java.util.concurrent.atomic.AtomicLong failed, java.util.concurrent.CountDownLatch done) {
    if (stopping || System.nanoTime() >= deadlineNanos) {
      done.countDown();
      return;
    }
    sent.incrementAndGet();
    http.fetch(HttpMethod.POST, config.requestUri(), body, headers(true), MAX_PROBE_BYTES)
        .orTimeout(config.timeoutUs(), TimeUnit.MICROSECONDS)
        .whenComplete((r, err) -> {
          boolean ok = err == null && r.status() == 200;
          if (!ok) {
            failed.incrementAndGet();
          }
          try {
            timer.schedule(() -> prewarmOne(body, deadlineNanos, sent, failed, done), ok ? 0 : 500,
                TimeUnit.MILLISECONDS);
          } catch (java.util.concurrent.RejectedExecutionException closed) {
            done.countDown();
          }
        });
  }

  // ------------------------------------------------------------------ the run

  /**
   * Sends {@code source}'s requests at their times until the workload is done (or {@link #stop()}
   * is called) and every request sent has ended; hands everything to {@code listener}. Does not
   * close the source. Calls {@link #probe()} first if it was not called.
   *
   * @throws IllegalArgumentException as {@link #probe()}
   */
  public ObservedRun run(RequestSource source, ObservationListener listener) {
    if (info == null) {
      probe();
    }
    runner = Thread.currentThread();
    try {
      return new Run(source, listener).go();
    } finally {
      runner = null;
    }
  }

  /** A request waiting to be sent; ordered by its time, then by the order it became known. */
  private record Pending(long scheduledUs, long order, RequestSpec spec, boolean fromSource)
      implements Comparable<Pending> {
    @Override
    public int compareTo(Pending o) {
      return scheduledUs != o.scheduledUs ? Long.compare(scheduledUs, o.scheduledUs) : Long.compare(order, o.order);
    }
  }

  /** A request handed to the client and not ended. */
  private record InFlight(RequestSpec spec, long scheduledUs, SseRecorder recorder,
      ScheduledFuture<?> timeout) {}

  /** A request that ended. */
  private record Ended(long key, Observation observation) {}

  /** A scrape's text, parsed on the run's thread (not on the I/O thread that times tokens). */
  private record Scraped(long timeUs, String text) {}

  /** One run: the state the run's thread keeps. */
  private final class Run {
    private final RequestSource source;
    private final ObservationListener listener;
    private final long origin = System.nanoTime();
    /** The wall clock (Unix epoch microseconds) at {@link #origin}. */
    private final long epochOriginUs = java.time.temporal.ChronoUnit.MICROS.between(java.time.Instant.EPOCH,
        java.time.Instant.now());
    private final LongSupplier clock = () -> (System.nanoTime() - origin) / 1000;
    private final PromptEncoder encoder = new PromptEncoder(config, info.textOverheadTokens(), info.tokensPerWord(), info.maxModelLen());
    private final ConcurrentLinkedQueue<SendOrder.Sent> sentQueue = new ConcurrentLinkedQueue<>();
    private final SendOrder order = new SendOrder(clock, sentQueue);
    private final ConcurrentLinkedQueue<Ended> ended = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<Scraped> scrapes = new ConcurrentLinkedQueue<>();
    private final AtomicInteger scrapeFailures = new AtomicInteger();
    private final PriorityQueue<Pending> pending = new PriorityQueue<>();
    private final Map<Long, InFlight> inFlight = new HashMap<>();
    private long pendingOrder;
    private long nextKey;
    private long sent;
    private long ok;
    private long failed;
    private long late;
    private long maxLate;
    private int scrapesOk;
    private long lastEndUs;
    private boolean sourceDone;
    private boolean sourceItemWaiting;

    Run(RequestSource source, ObservationListener listener) {
      this.source = source;
      this.listener = listener;
    }

    ObservedRun go() {
      listener.onStart(epochOriginUs);
      ScheduledFuture<?> scraping = info.metrics()
          ? timer.scheduleAtFixedRate(this::scrape, 0, config.metricsIntervalUs(), TimeUnit.MICROSECONDS)
          : null;
      long progressEvery = listener.progressIntervalUs();
      long nextProgress = progressEvery > 0 ? progressEvery : Long.MAX_VALUE;
      RuntimeException failure = null;
      try {
        while (true) {
          drainEnded(true);
          Scraped m;
          while ((m = scrapes.poll()) != null) {
            scrapesOk++;
            PrometheusText.Scrape parsed = PrometheusText.parse(m.text());
            checks.add(ServerChecks.Kind.METRIC_VALUE, MetricsSample.nonFinite(parsed), "at " + String.format(
                Locale.ROOT, "%.3f", m.timeUs() / 1e6) + " s, " + MetricsSample.firstNonFinite(parsed));
            listener.onMetrics(MetricsSample.of(m.timeUs(), parsed));
          }
          if (stopping || Thread.currentThread().isInterrupted()) {
            stopping = true;
            break;
          }
          sendDue();
          drainSent();
          long now = clock.getAsLong();
          if (now >= nextProgress) {
            listener.onProgress(new Progress(now, sent, inFlight.size(), ok, failed, late));
            nextProgress = now + progressEvery;
          }
          if (sourceDone && pending.isEmpty() && inFlight.isEmpty()) {
            break;
          }
          long wake = nextProgress;
          Pending head = pending.peek();
          if (head != null && !capped()) {
            wake = Math.min(wake, head.scheduledUs());
          }
          if (ended.isEmpty() && scrapes.isEmpty() && sentQueue.isEmpty() && !stopping) {
            long waitUs = Math.min(wake - clock.getAsLong(), 100_000);
            if (waitUs > 0) {
              LockSupport.parkNanos(Observer.this, waitUs * 1000);
            }
          }
        }
      } catch (RuntimeException e) {
        failure = e;
        stopping = true;
      } finally {
        if (scraping != null) {
          scraping.cancel(false);
        }
      }
      // stopped: end what is in flight (each stop queues its observation before it returns)
      for (InFlight f : inFlight.values()) {
        f.timeout().cancel(false);
        f.recorder().stop();
      }
      try {
        drainEnded(false);
      } catch (RuntimeException e) {
        failure = failure == null ? e : failure;
      }
      if (failure != null) {
        throw failure;
      }
      Map<String, Long> serverValues = new java.util.TreeMap<>();
      checks.counts().forEach((k, n) -> serverValues.put(k.key(), n));
      return new ObservedRun(lastEndUs, sent, ok, failed, pending.size(),
          stopping, late, maxLate, scrapesOk, scrapeFailures.get(), serverValues);
    }

    private boolean capped() {
      return config.maxConcurrency() > 0 && inFlight.size() >= config.maxConcurrency();
    }

    /** Sends every request that is due, pulling the workload one request ahead. */
    private void sendDue() {
      while (true) {
        if (!sourceDone && !sourceItemWaiting) {
          RequestSpec r = source.next();
          if (r != null) {
            pending.add(new Pending(r.arrivalTimeUs(), pendingOrder++, r, true));
            sourceItemWaiting = true;
          } else if (source.exhausted()) {
            sourceDone = true;
          }
        }
        Pending head = pending.peek();
        if (head == null || head.scheduledUs() > clock.getAsLong() || capped()) {
          return;
        }
        pending.poll();
        if (head.fromSource()) {
          sourceItemWaiting = false;
        }
        long key = nextKey++;
        inFlight.put(key, send(key, head));
      }
    }

    private InFlight send(long key, Pending p) {
      RequestSpec spec = p.spec();
      byte[] body = encoder.body(spec);
      Thread loop = Thread.currentThread();
      SseRecorder recorder = new SseRecorder(key, order, spec, p.scheduledUs(), encoder.promptTokensSent(spec),
          config.tokenTimes(), config.streaming(), clock, encoder.maxTokensSent(spec), info.maxModelLen(), checks, o -> {
            ended.add(new Ended(key, o));
            LockSupport.unpark(loop);
          });
      long timeoutUs = timeoutUs(spec);
      ScheduledFuture<?> timeout = timer.schedule(() -> recorder.timeout(timeoutUs / 1e6), timeoutUs,
          TimeUnit.MICROSECONDS);
      InFlight f = new InFlight(spec, p.scheduledUs(), recorder, timeout);
      recorder.exchange(http.send(HttpMethod.POST, config.requestUri(), body, headers(true), recorder));
      return f;
    }

    /** Hands every request that left, in send order, to the listener. */
    private void drainSent() {
      SendOrder.Sent s;
      while ((s = sentQueue.poll()) != null) {
        InFlight f = inFlight.get(s.key());
        RequestSpec r = f.spec();
        sent++;
        long lateness = s.sendUs() - f.scheduledUs();
        maxLate = Math.max(maxLate, lateness);
        if (lateness > LATE_US) {
          late++;
        }
        listener.onSent(s.seq(), new RequestSpec(r.id(), s.sendUs(), r.promptTokens(), r.outputTokens(),
            r.sloClass(), r.tenant(), r.prefixGroup(), r.prefixLength(), r.sessionId(), r.round(),
            timeoutUs(r), r.stage(), r.model(), r.adapter()), f.scheduledUs());
      }
    }

    /**
     * Hands every ended request to the listener and, while the run goes on, to the workload
     * (follow-ups, the next stage). A request's send is always handed over before its end.
     */
    private void drainEnded(boolean tellWorkload) {
      Ended e;
      while ((e = ended.poll()) != null) {
        drainSent();
        InFlight f = inFlight.remove(e.key());
        f.timeout().cancel(false);
        Observation o = e.observation();
        lastEndUs = Math.max(lastEndUs, o.endUs());
        if (o.ok()) {
          ok++;
        } else {
          failed++;
        }
        listener.onObservation(o);
        if (tellWorkload && !stopping) {
          for (RequestSpec next : source.onFinished(f.spec(), outcome(o), o.endUs())) {
            pending.add(new Pending(next.arrivalTimeUs(), pendingOrder++, next, false));
          }
        }
      }
      drainSent();
    }

    private void scrape() {
      long at = clock.getAsLong();
      http.fetch(HttpMethod.GET, config.metricsUri(), null, headers(false), MAX_METRICS_BYTES)
          .orTimeout(Math.max(config.metricsIntervalUs(), 1_000_000L), TimeUnit.MICROSECONDS)
          .whenComplete((r, err) -> {
            if (err != null || r.status() != 200) {
              scrapeFailures.incrementAndGet();
              return;
            }
            scrapes.add(new Scraped(at, r.body()));
            Thread t = runner;
            if (t != null) {
              LockSupport.unpark(t);
            }
          });
    }
  }

  /** The client's timeout of {@code r}: its own, else the configured one. */
  private long timeoutUs(RequestSpec r) {
    return r.timeoutUs() > 0 ? r.timeoutUs() : config.timeoutUs();
  }

  /** How the workload hears of a request's end (sessions continue only after a completion). */
  private static RequestOutcome outcome(Observation o) {
    if (o.ok()) {
      return RequestOutcome.COMPLETED;
    }
    return o.status().equals(Observation.TIMEOUT) ? RequestOutcome.TIMED_OUT : RequestOutcome.REJECTED;
  }

  /**
   * What the server's answers and scrapes said that was not recorded as given, counted over the
   * runs of this observer (one warning line per kind: {@link ServerChecks#warnings()}).
   */
  public ServerChecks checks() {
    return checks;
  }

  /**
   * Ends a run from another thread (Ctrl-C): nothing more is sent, the requests in flight end as
   * {@link Observation#STOPPED} and {@link #run} returns.
   */
  public void stop() {
    stopping = true;
    Thread t = runner;
    if (t != null) {
      LockSupport.unpark(t);
    }
  }

  /** Stops the timer and the HTTP client's I/O thread. */
  @Override
  public void close() {
    stop();
    timer.shutdownNow();
    http.close();
  }

  @Override
  public String toString() {
    return String.format(Locale.ROOT, "Observer[%s, model %s]", config.endpoint(), config.servedModel());
  }
}
