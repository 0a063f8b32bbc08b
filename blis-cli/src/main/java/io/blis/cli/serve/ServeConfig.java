package io.blis.cli.serve;

import java.time.Duration;
import java.util.List;

/**
 * Where and as what the simulated server listens, and the limits it holds its clients to.
 *
 * @param host address to bind (for example {@code 127.0.0.1}; {@code 0.0.0.0} for every interface)
 * @param port TCP port, 0 for any free one
 * @param servedModelNames the model names it answers to (the first is the default), as vLLM's
 *     {@code --served-model-name}
 * @param ioThreads Netty event-loop threads writing the answers
 * @param limits the HTTP limits and the shutdown drain, as a production server has them
 * @param routeByModel whether each name is a model of its own, a request going to the pools serving it
 * @param loraModules names of LoRA adapters the server also answers to (vLLM's {@code
 *     --lora-modules}): a request naming one runs on the base model with that adapter
 */
public record ServeConfig(String host, int port, List<String> servedModelNames, int ioThreads, Limits limits,
    boolean routeByModel, List<String> loraModules) {

  /** A server answering to no LoRA adapter names. */
  public ServeConfig(String host, int port, List<String> servedModelNames, int ioThreads, Limits limits,
      boolean routeByModel) {
    this(host, port, servedModelNames, ioThreads, limits, routeByModel, List.of());
  }

  /**
   * One deployment answering to every name in {@code servedModelNames}; {@code routeByModel} false
   * (see the canonical constructor: with it, each name is a model of its own, and a request goes
   * to the pools serving the model it names).
   */
  public ServeConfig(String host, int port, List<String> servedModelNames, int ioThreads, Limits limits) {
    this(host, port, servedModelNames, ioThreads, limits, false);
  }

  public ServeConfig {
    if (port < 0 || port > 65_535) {
      throw new IllegalArgumentException("--port must be in 0..65535, got " + port);
    }
    if (servedModelNames.isEmpty() || servedModelNames.stream().anyMatch(String::isBlank)) {
      throw new IllegalArgumentException("--served-model-name: at least one non-blank name is needed (names separated"
          + " by commas, none empty)");
    }
    if (ioThreads < 1) {
      throw new IllegalArgumentException("I/O threads must be at least 1, got " + ioThreads);
    }
    if (limits == null) {
      throw new IllegalArgumentException("limits must be given (Limits.defaults() for the defaults)");
    }
    servedModelNames = List.copyOf(servedModelNames);
    loraModules = List.copyOf(loraModules);
    for (String a : loraModules) {
      if (a.isBlank() || servedModelNames.contains(a)) {
        throw new IllegalArgumentException("--lora-modules: adapter names must be non-blank and differ from the served"
            + " model names, got '" + a + "'");
      }
    }
    if (!loraModules.isEmpty() && routeByModel) {
      throw new IllegalArgumentException("--lora-modules with a fleet of several models is not supported");
    }
  }

  /** With the default {@link Limits}. */
  public ServeConfig(String host, int port, List<String> servedModelNames, int ioThreads) {
    this(host, port, servedModelNames, ioThreads, Limits.defaults());
  }

  /** On the loopback address, one name, two I/O threads, the default limits. */
  public static ServeConfig loopback(int port, String servedModelName) {
    return new ServeConfig("127.0.0.1", port, List.of(servedModelName), 2);
  }

  /** This config with other limits. */
  public ServeConfig withLimits(Limits other) {
    return new ServeConfig(host, port, servedModelNames, ioThreads, other, routeByModel, loraModules);
  }

  /**
   * What the server accepts from a client, and how long it waits, as vLLM's uvicorn front end
   * (or the proxy before it) would hold them. A request over a size limit is answered with its
   * status code (413, 414, 431) and the connection closed; a request that does not arrive in
   * time with 408.
   *
   * @param maxBodyBytes largest request body ({@code --max-body-bytes}); larger: 413
   * @param maxRequestLineBytes longest request line, method, URL and version
   *     ({@code --max-request-line-bytes}); longer: 414
   * @param maxHeaderBytes largest header block ({@code --max-header-bytes}); larger: 431
   * @param idleTimeout a connection with no request and no answer in progress for this long is
   *     closed ({@code --idle-timeout-s}); {@link Duration#ZERO}: never
   * @param requestReadTimeout a request whose head and body are not all read this long after its
   *     first byte is answered 408 and its connection closed ({@code --request-read-timeout-s});
   *     {@link Duration#ZERO}: never
   * @param maxConnections open connections at most ({@code --max-connections}); one more is
   *     answered 503 and closed at once
   * @param shutdownTimeout how long a graceful shutdown waits for the answers in progress
   *     ({@code --shutdown-timeout-s}); {@link Duration#ZERO}: not at all
   */
  public record Limits(int maxBodyBytes, int maxRequestLineBytes, int maxHeaderBytes, Duration idleTimeout,
      Duration requestReadTimeout, int maxConnections, Duration shutdownTimeout) {

    public static final int DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024;
    public static final int DEFAULT_MAX_REQUEST_LINE_BYTES = 8 * 1024;
    public static final int DEFAULT_MAX_HEADER_BYTES = 16 * 1024;
    public static final double DEFAULT_IDLE_TIMEOUT_S = 75;
    public static final double DEFAULT_REQUEST_READ_TIMEOUT_S = 30;
    public static final int DEFAULT_MAX_CONNECTIONS = 10_000;
    public static final double DEFAULT_SHUTDOWN_TIMEOUT_S = 30;

    public Limits {
      positive("--max-body-bytes", maxBodyBytes);
      positive("--max-request-line-bytes", maxRequestLineBytes);
      positive("--max-header-bytes", maxHeaderBytes);
      positive("--max-connections", maxConnections);
      notNegative("--idle-timeout-s", idleTimeout);
      notNegative("--request-read-timeout-s", requestReadTimeout);
      notNegative("--shutdown-timeout-s", shutdownTimeout);
    }

    /** 16 MiB bodies, 8 KiB request lines, 16 KiB headers, 75 s idle, 30 s to read a request, 10,000 connections, 30 s drain. */
    public static Limits defaults() {
      return new Limits(DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_REQUEST_LINE_BYTES, DEFAULT_MAX_HEADER_BYTES,
          seconds("--idle-timeout-s", DEFAULT_IDLE_TIMEOUT_S),
          seconds("--request-read-timeout-s", DEFAULT_REQUEST_READ_TIMEOUT_S), DEFAULT_MAX_CONNECTIONS,
          seconds("--shutdown-timeout-s", DEFAULT_SHUTDOWN_TIMEOUT_S));
    }

    /**
     * {@code value} seconds as a duration, refused (naming {@code flag}) unless finite and not
     * negative.
     */
    public static Duration seconds(String flag, double value) {
      if (!(value >= 0) || !Double.isFinite(value) || value > 1e9) {
        throw new IllegalArgumentException(flag + " must be a number of seconds, 0 or more, got " + value);
      }
      return Duration.ofNanos(Math.round(value * 1e9));
    }

    public Limits withMaxBodyBytes(int v) {
      return new Limits(v, maxRequestLineBytes, maxHeaderBytes, idleTimeout, requestReadTimeout, maxConnections, shutdownTimeout);
    }

    public Limits withMaxRequestLineBytes(int v) {
      return new Limits(maxBodyBytes, v, maxHeaderBytes, idleTimeout, requestReadTimeout, maxConnections, shutdownTimeout);
    }

    public Limits withMaxHeaderBytes(int v) {
      return new Limits(maxBodyBytes, maxRequestLineBytes, v, idleTimeout, requestReadTimeout, maxConnections, shutdownTimeout);
    }

    public Limits withIdleTimeout(Duration v) {
      return new Limits(maxBodyBytes, maxRequestLineBytes, maxHeaderBytes, v, requestReadTimeout, maxConnections, shutdownTimeout);
    }

    public Limits withRequestReadTimeout(Duration v) {
      return new Limits(maxBodyBytes, maxRequestLineBytes, maxHeaderBytes, idleTimeout, v, maxConnections, shutdownTimeout);
    }

    public Limits withMaxConnections(int v) {
      return new Limits(maxBodyBytes, maxRequestLineBytes, maxHeaderBytes, idleTimeout, requestReadTimeout, v, shutdownTimeout);
    }

    public Limits withShutdownTimeout(Duration v) {
      return new Limits(maxBodyBytes, maxRequestLineBytes, maxHeaderBytes, idleTimeout, requestReadTimeout, maxConnections, v);
    }

    private static void positive(String flag, int value) {
      if (value < 1) {
        throw new IllegalArgumentException(flag + " must be at least 1, got " + value);
      }
    }

    private static void notNegative(String flag, Duration value) {
      if (value == null || value.isNegative()) {
        throw new IllegalArgumentException(flag + " must be a number of seconds, 0 or more, got " + value);
      }
    }
  }
}
