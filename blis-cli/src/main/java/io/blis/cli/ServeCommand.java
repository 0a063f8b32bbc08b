package io.blis.cli;

import io.blis.engine.result.SimulationResult;
import io.blis.cli.serve.ServeConfig;
import io.blis.cli.serve.ServeWarmUp;
import io.blis.cli.serve.SimulatedServer;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code blis serve}: a simulated vLLM server. An OpenAI-compatible endpoint whose answers arrive
 * at the times the simulation of the deployment (every {@code blis run} deployment and cluster
 * flag) predicts, in real time. Runs until Ctrl-C, SIGTERM or {@code --duration-s}; then drains
 * (no new connections, new requests 503, answers in progress finish within {@code
 * --shutdown-timeout-s}) and prints the run's result JSON (as {@code blis run} does) and the token
 * delivery lateness.
 */
@Command(
    name = "serve",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = "Serve a simulated vLLM: OpenAI-compatible HTTP endpoints timed by the simulation, in real time.")
final class ServeCommand implements Callable<Integer>, RefusedOptions {

  @Spec CommandSpec spec;

  @Mixin DeploymentOptions deployment;

  @Option(names = "--host", description = "Address to listen on (default: ${DEFAULT-VALUE}; 0.0.0.0 for every interface).")
  String host = "127.0.0.1";

  @Option(names = "--port", description = "TCP port (default: ${DEFAULT-VALUE}; 0 for any free port).")
  int port = 8000;

  @Option(names = "--served-model-name", split = ",", paramLabel = "NAME",
      description = "Model name(s) the server answers to (default: the --model value).")
  List<String> servedModelNames;

  @Option(names = "--lora-modules", split = ",", arity = "1..*", paramLabel = "NAME[=PATH]",
      description = "LoRA adapters the server answers to, as vLLM's (a path after = is ignored): a request whose model"
          + " names one runs on the base model with that adapter. Needs --enable-lora, --max-loras or --lora-config;"
          + " adapters of a --lora-config registry are answered to without it.")
  List<String> loraModules;

  @Option(names = "--seed", description = "Seed handed to the latency models and policies (default: ${DEFAULT-VALUE}).")
  long seed = 42;

  @Option(names = "--duration-s", description = "Stop after this many seconds of wall time (default: run until interrupted).")
  Double durationS;

  @Option(names = "--io-threads", description = "Threads writing the answers (default: ${DEFAULT-VALUE}).")
  int ioThreads = 2;

  @Option(names = "--max-body-bytes", paramLabel = "BYTES",
      description = "Largest request body; a larger one is answered 413 and its connection closed (default: ${DEFAULT-VALUE}, 16 MiB).")
  int maxBodyBytes = ServeConfig.Limits.DEFAULT_MAX_BODY_BYTES;

  @Option(names = "--max-request-line-bytes", paramLabel = "BYTES",
      description = "Longest request line (method, URL, version); a longer one is answered 414 (default: ${DEFAULT-VALUE}).")
  int maxRequestLineBytes = ServeConfig.Limits.DEFAULT_MAX_REQUEST_LINE_BYTES;

  @Option(names = "--max-header-bytes", paramLabel = "BYTES",
      description = "Largest header block of a request; a larger one is answered 431 (default: ${DEFAULT-VALUE}).")
  int maxHeaderBytes = ServeConfig.Limits.DEFAULT_MAX_HEADER_BYTES;

  @Option(names = "--idle-timeout-s", paramLabel = "S",
      description = "Close a keep-alive connection with no request for this long (default: ${DEFAULT-VALUE}; longer than"
          + " the idle time of common client pools, so that the client, not the server, ends an idle connection; 0: never).")
  double idleTimeoutS = ServeConfig.Limits.DEFAULT_IDLE_TIMEOUT_S;

  @Option(names = "--request-read-timeout-s", paramLabel = "S",
      description = "A request whose head and body have not all arrived this long after its first byte is answered 408"
          + " and its connection closed (default: ${DEFAULT-VALUE}; 0: never).")
  double requestReadTimeoutS = ServeConfig.Limits.DEFAULT_REQUEST_READ_TIMEOUT_S;

  @Option(names = "--max-connections", paramLabel = "N",
      description = "Open connections at most; one more is answered 503 and closed (default: ${DEFAULT-VALUE}).")
  int maxConnections = ServeConfig.Limits.DEFAULT_MAX_CONNECTIONS;

  @Option(names = "--shutdown-timeout-s", paramLabel = "S",
      description = "On SIGTERM, Ctrl-C or the end of --duration-s: stop accepting connections, answer new requests 503, and"
          + " wait this long for the answers in progress before ending (default: ${DEFAULT-VALUE}, a Kubernetes grace period).")
  double shutdownTimeoutS = ServeConfig.Limits.DEFAULT_SHUTDOWN_TIMEOUT_S;

  @Option(names = "--warm-up-requests", paramLabel = "N",
      description = "Before opening the port, answer this many requests on a throwaway loopback server, so that a burst"
          + " at start is read as promptly as later ones and the TTFT metrics agree with the clients' (default:"
          + " ${DEFAULT-VALUE}, about two seconds; 0: none).")
  int warmUpRequests = ServeWarmUp.DEFAULT_REQUESTS;

  private static final String TRACE = "trace a 'blis run' or 'blis replay' instead";

  /**
   * The shared deployment flags that serve refuses, each with why (left out of its help: {@link
   * RefusedOptions}).
   */
  static final java.util.Map<String, String> UNAVAILABLE = unavailable();

  private static java.util.Map<String, String> unavailable() {
    java.util.Map<String, String> m = new java.util.LinkedHashMap<>();
    m.put("--per-request", "its memory would grow with every request");
    m.put("--trace-level", "the decision trace would grow with every request; " + TRACE);
    m.put("--summarize-trace", "it summarizes --trace-level decisions; " + TRACE);
    m.put("--counterfactual-k", "it is part of --trace-level decisions; " + TRACE);
    for (String otel : List.of("--otel-out", "--otel-step-sample-rate", "--otel-journey-sample-rate",
        "--otel-request-snapshots")) {
      m.put(otel, TRACE);
    }
    m.put("--max-backlog", "the requests in flight are bounded by --max-connections");
    String running = "a server runs until it is stopped; --duration-s stops it after wall-clock seconds";
    m.put("--horizon", running);
    m.put("--horizon-s", running);
    m.put("--metrics-path", "a server has no end of run; scrape /metrics");
    m.put("--post-hoc-detector", "a server has no end of run to judge");
    m.put("--saturation-threshold-ms", "a server has no end of run to judge");
    for (String d : List.of("--detectors", "--saturation-config", "--saturation-report", "--saturation-final-window")) {
      m.put(d, "a server has no end of run to judge");
    }
    return java.util.Collections.unmodifiableMap(m);
  }

  @Override
  public java.util.Collection<String> refusedOptions() {
    return UNAVAILABLE.keySet();
  }

  @Override
  public Integer call() throws InterruptedException {
    for (var e : UNAVAILABLE.entrySet()) {
      DeploymentOptions.require(spec.commandLine(), !spec.commandLine().getParseResult().hasMatchedOption(e.getKey()),
          e.getKey() + " is not available with serve (" + e.getValue() + ")");
    }
    deployment.validate(spec.commandLine());
    DeploymentOptions.require(spec.commandLine(), durationS == null || (durationS > 0 && Double.isFinite(durationS)),
        "--duration-s must be a positive number of seconds, got " + durationS);
    DeploymentOptions.require(spec.commandLine(), ioThreads >= 1 && ioThreads <= 64,
        "--io-threads must be in 1..64, got " + ioThreads);
    // given but empty (',,' splits to nothing) is refused by ServeConfig, not replaced by the default
    // a fleet of several models (a policy bundle's pools) answers to each by its catalog name
    List<String> fleetModels = deployment.servedModels(seed);
    boolean routeByModel = fleetModels.size() > 1;
    DeploymentOptions.require(spec.commandLine(), !routeByModel || servedModelNames == null,
        "--served-model-name names one deployment; this fleet serves " + String.join(", ", fleetModels)
            + ", each under its name");
    List<String> names = servedModelNames != null ? servedModelNames
        : routeByModel ? fleetModels : List.of(deployment.server.model);
    ServeConfig config;
    try {
      ServeConfig.Limits limits = new ServeConfig.Limits(maxBodyBytes, maxRequestLineBytes, maxHeaderBytes,
          ServeConfig.Limits.seconds("--idle-timeout-s", idleTimeoutS),
          ServeConfig.Limits.seconds("--request-read-timeout-s", requestReadTimeoutS), maxConnections,
          ServeConfig.Limits.seconds("--shutdown-timeout-s", shutdownTimeoutS));
      config = new ServeConfig(host, port, names, ioThreads, limits, routeByModel, adapterNames());
    } catch (IllegalArgumentException e) {
      DeploymentOptions.require(spec.commandLine(), false, e.getMessage());
      return 2;
    }
    DeploymentOptions.require(spec.commandLine(), warmUpRequests >= 0 && warmUpRequests <= 1_000_000,
        "--warm-up-requests must be in 0..1000000, got " + warmUpRequests);
    // the deployment first: a bad model or GPU is reported before the warm-up
    io.blis.engine.Simulation.Builder simulation = deployment.builder(seed);
    int vocabSize = deployment.vocabSize(seed);
    // a host or port that cannot be listened on is reported by the start below, without a warm-up first
    if (warmUpRequests > 0 && canListen(host, port)) {
      java.time.Duration took = ServeWarmUp.run(config, warmUpRequests);
      spec.commandLine().getErr().printf(Locale.ROOT, "blis serve: warmed up with %d requests in %.1f s%n",
          warmUpRequests, took.toMillis() / 1000.0);
    }
    SimulatedServer server = SimulatedServer.start(simulation, config, vocabSize);
    CountDownLatch done = new CountDownLatch(1);
    Thread hook = new Thread(() -> {
      finish(server);
      done.countDown();
    }, "blis-serve-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
    spec.commandLine().getErr().printf(Locale.ROOT, "blis serve: %s for model %s (%d instance(s)); Ctrl-C stops%n",
        server.baseUrl(), String.join(", ", names), server.status().size());
    spec.commandLine().getErr().flush();
    if (durationS != null) {
      Thread.sleep((long) (durationS * 1000));
      Runtime.getRuntime().removeShutdownHook(hook);
      finish(server);
      return 0;
    }
    done.await(Long.MAX_VALUE, TimeUnit.DAYS);
    return 0;
  }

  /**
   * Whether {@code host:port} can be bound now: a socket bound and closed again at once, never
   * listening (a listening probe would take, then reset, a client's early connection).
   */
  private static boolean canListen(String host, int port) {
    try (java.net.Socket probe = new java.net.Socket()) {
      probe.bind(new java.net.InetSocketAddress(host, port));
      return true;
    } catch (java.io.IOException | RuntimeException e) {
      return false;
    }
  }

  private final Object finished = new Object();
  private boolean ended;

  /** Stops the server once; prints the result and the delivery lateness. */
  private void finish(SimulatedServer server) {
    synchronized (finished) {
      if (ended) {
        return;
      }
      ended = true;
    }
    int inFlight = server.answersInFlight();
    if (inFlight > 0) {
      spec.commandLine().getErr().printf(Locale.ROOT,
          "blis serve: shutting down: waiting up to %s s for %d answer(s) in progress (--shutdown-timeout-s)%n",
          shutdownTimeoutS, inFlight);
      spec.commandLine().getErr().flush();
    }
    boolean drained = server.drain(ServeConfig.Limits.seconds("--shutdown-timeout-s", shutdownTimeoutS));
    if (!drained) {
      spec.commandLine().getErr().printf(Locale.ROOT,
          "blis serve: %d answer(s) still in progress at the shutdown timeout were cut off%n", server.answersInFlight());
    }
    if (server.refusedConnections() > 0) {
      spec.commandLine().getErr().printf(Locale.ROOT, "blis serve: %d connection(s) refused (--max-connections)%n",
          server.refusedConnections());
    }
    SimulationResult result = server.stop();
    Histogram late = server.deliveryLatenessUs();
    Histogram dispatch = server.dispatchLatenessUs();
    spec.commandLine().getErr().printf(Locale.ROOT,
        "blis serve: simulation thread lateness p50 %.2f ms, p99 %.2f ms, max %.2f ms; simulated time held"
            + " back %.1f ms in all%n",
        dispatch.getValueAtPercentile(50) / 1000.0, dispatch.getValueAtPercentile(99) / 1000.0,
        dispatch.getMaxValue() / 1000.0, server.heldBackUs() / 1000.0);
    spec.commandLine().getErr().printf(Locale.ROOT,
        "blis serve: %d tokens streamed; delivery lateness p50 %.2f ms, p99 %.2f ms, p99.9 %.2f ms, max %.2f ms%n",
        late.getTotalCount(), late.getValueAtPercentile(50) / 1000.0, late.getValueAtPercentile(99) / 1000.0,
        late.getValueAtPercentile(99.9) / 1000.0, late.getMaxValue() / 1000.0);
    spec.commandLine().getErr().flush();
    deployment.emit(spec.commandLine(), result);
    spec.commandLine().getOut().flush();
  }

  /** The adapter names the server answers to: the registry's, then --lora-modules' (without paths). */
  private List<String> adapterNames() {
    io.blis.engine.lora.LoraSpec lora = deployment.loraSpec();
    DeploymentOptions.require(spec.commandLine(), loraModules == null || lora != null,
        "--lora-modules needs LoRA turned on: give --enable-lora, --max-loras, --lora-config or a policy bundle's lora:");
    java.util.LinkedHashSet<String> out = new java.util.LinkedHashSet<>();
    if (lora != null) {
      out.addAll(lora.adapters().keySet());
    }
    if (loraModules != null) {
      java.util.Set<String> given = new java.util.HashSet<>();
      for (String m : loraModules) {
        String name = m.contains("=") ? m.substring(0, m.indexOf('=')) : m;
        DeploymentOptions.require(spec.commandLine(), name.isBlank() || given.add(name.trim()),
            "--lora-modules: adapter '" + name.trim() + "' is given twice");
        if (lora != null && !lora.adapters().isEmpty()) {
          DeploymentOptions.require(spec.commandLine(), lora.adapters().containsKey(name),
              "--lora-modules: adapter '" + name + "' is not in the --lora-config registry");
        }
        out.add(name.trim());
      }
    }
    return List.copyOf(out);
  }
}
