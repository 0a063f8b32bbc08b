package io.blis.cli;

import io.blis.cli.observe.ObservationListener;
import io.blis.cli.observe.Observation;
import io.blis.cli.observe.ObserveConfig;
import io.blis.cli.observe.PrometheusText;
import io.blis.cli.observe.ObservedKvRate;
import io.blis.cli.observe.ObservedRun;
import io.blis.cli.observe.Observer;
import io.blis.cli.observe.Progress;
import io.blis.cli.observe.RunDirectory;
import io.blis.cli.observe.RunReport;
import io.blis.cli.observe.ServerDeployment;
import io.blis.cli.observe.ServerInfo;
import io.blis.cli.observe.TraceV2Recorder;
import io.blis.latency.catalog.ModelCatalog;
import io.blis.engine.validate.RunStats;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import io.blis.workload.trace.TraceReader;
import io.blis.workload.trace.TraceV2Writer;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code blis observe}: drives a live OpenAI-compatible server (vLLM, or {@code blis serve}) with
 * any workload BLIS generates or a recorded trace, at the workload's times, and records what the
 * client saw of every request into a run folder that {@code blis validate}, {@code calibrate} and
 * {@code fit} read ({@link RunDirectory}).
 */
@Command(
    name = "observe",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = "Send a workload to a live OpenAI-compatible server (vLLM or 'blis serve') at its"
        + " arrival times and record what the client sees, as a run validate/calibrate/fit read.",
    footer = {"", "The deployment flags (--model ... --gpu-memory-utilization) describe the server as it was"
        + " launched. One not given is taken from the server where it tells (max_model_len from /v1/models;"
        + " block size, GPU blocks and memory utilization from vLLM's /metrics), else recorded as the default;"
        + " deployment_sources in experiments.json says which.",
        "", "Go BLIS's form: --server-url URL --model NAME --trace-header FILE --trace-data FILE writes its TraceV2"
        + " pair (--out DIR is then optional). Without --served-model, the requests name --model when the server"
        + " answers to it (or gives no model list), else the one model the server lists."})
final class ObserveCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Option(names = "--endpoint", paramLabel = "URL",
      description = "The server's OpenAI base URL, e.g. http://127.0.0.1:8000/v1.")
  String endpoint;

  @Option(names = "--server-url", paramLabel = "URL",
      description = "Go BLIS: the server's URL, e.g. http://localhost:8000 (requests go to URL/v1/...); the same as"
          + " --endpoint URL/v1.")
  String serverUrl;

  @Option(names = "--served-model", paramLabel = "NAME",
      description = "The model name the server answers to (vLLM's --served-model-name, or the model path it was started with;"
          + " default: the one model the server lists at /v1/models).")
  String servedModel;

  @Option(names = "--out", paramLabel = "DIR", description = "Folder of the run (created; must not hold a run;"
      + " optional with --trace-header/--trace-data).")
  Path out;

  @Option(names = "--trace-header", paramLabel = "FILE",
      description = "Go BLIS: write its TraceV2 header (YAML) here; with --trace-data.")
  Path traceHeader;

  @Option(names = "--trace-data", paramLabel = "FILE",
      description = "Go BLIS: write its TraceV2 requests (CSV, one row per request, wall-clock times in epoch us) here;"
          + " with --trace-header.")
  Path traceData;

  @Option(names = "--warmup-requests", paramLabel = "N",
      description = "Go BLIS: leave the first N requests sent out of the TraceV2 trace (they are sent; the header"
          + " records N) (default: ${DEFAULT-VALUE}).")
  int warmupRequests = 0;

  @Option(names = "--prewarm-duration", paramLabel = "DURATION",
      description = "Go BLIS: before the run, prime a cold server for DURATION (60s, 1m30s, 500ms; 0 = none): 4"
          + " requests at a time of 256 prompt and 64 output tokens, not streamed, never recorded.")
  String prewarmDuration = "0";

  @Option(names = "--rtt-ms", paramLabel = "MS",
      description = "Go BLIS: the measured network round trip, ms, recorded in the TraceV2 header (network.measured_rtt_ms)"
          + " (default: ${DEFAULT-VALUE}).")
  double rttMs = 0;

  @Option(names = "--server-type", paramLabel = "TYPE",
      description = "Go BLIS: the server's kind, recorded in the TraceV2 header (server.type) (default: ${DEFAULT-VALUE}).")
  String serverType = "vllm";

  @Option(names = "--record-itl",
      description = "Go BLIS: also write every streamed chunk's time (request_id,chunk_index,timestamp_us) to --itl-output.")
  boolean recordItl;

  @Option(names = "--itl-output", paramLabel = "FILE",
      description = "Go BLIS: the ITL file of --record-itl (default: --trace-data without .csv, then .itl.csv).")
  Path itlOutput;

  @Option(names = "--no-streaming",
      description = "Ask for whole answers (stream: false): each is one chunk, its first byte the first token.")
  boolean noStreaming;

  @Option(names = "--id", paramLabel = "ID",
      description = "The run's experiment id (default: observe-<model>-<date>-<time>).")
  String id;

  @Option(names = {"--api", "--api-format"}, paramLabel = "completions|chat",
      description = "Endpoint the requests go to (default: ${DEFAULT-VALUE}; --api-format is Go BLIS's name).")
  String api = "completions";

  @Option(names = "--prompt-format", paramLabel = "token-ids|text",
      description = "Prompts as token ids (exact; completions only) or one word per token (default: token-ids for completions, text for chat).")
  String promptFormat;

  @Option(names = "--max-concurrency", paramLabel = "N",
      description = "Requests in flight at most; a request due while N are in flight waits and is sent late (default: no cap).")
  int maxConcurrency = 0;

  @Option(names = {"--timeout-s", "--timeout"},
      description = "Client timeout of a request whose workload gives none, seconds (default: ${DEFAULT-VALUE};"
          + " --timeout is Go BLIS's name).")
  double timeoutS = 300;

  @Option(names = "--connect-timeout-s", description = "How long a connection may take, seconds (default: ${DEFAULT-VALUE}).")
  double connectTimeoutS = 10;

  @Option(names = "--ignore-eos", negatable = true, defaultValue = "true", fallbackValue = "true",
      description = "Send vLLM's ignore_eos so that every answer has the workload's length (default: on).")
  boolean ignoreEos = true;

  /** The hit rate --scrape-kv-metrics measured, or null. */
  private TraceV2Writer.ObservedKv observedKv;

  /** One scrape for --scrape-kv-metrics, or null (with a warning) when it fails. */
  private PrometheusText.Scrape kvScrape(Observer observer, ObserveConfig config, PrintWriter err, String when) {
    java.net.URI uri = kvMetricsUrl != null ? kvMetricsUrl
        : config.metricsUri() != null ? config.metricsUri() : ObserveConfig.rootOf(config.endpoint()).resolve("metrics");
    try {
      return observer.scrape(uri);
    } catch (IllegalArgumentException e) {
      kvWarning(err, "the " + when + " scrape failed: " + e.getMessage());
      return null;
    }
  }

  private static void kvWarning(PrintWriter err, String why) {
    err.println("blis observe: --scrape-kv-metrics: " + why + "; observed_kv_metrics is left out of the trace header");
    err.flush();
  }

  @Option(names = "--scrape-kv-metrics",
      description = "Go BLIS: scrape the server's metrics at the start and end of the measured window and write its"
          + " prefix-cache hit rate to the trace header (observed_kv_metrics, for blis calibrate); a failed scrape"
          + " leaves it out with a warning.")
  boolean scrapeKvMetrics;

  @Option(names = "--kv-metrics-url", paramLabel = "URL",
      description = "Go BLIS: the metrics endpoint --scrape-kv-metrics reads (default: the server's /metrics).")
  java.net.URI kvMetricsUrl;

  @Option(names = "--vllm-commit", paramLabel = "SHA",
      description = "Go BLIS: the server's vLLM commit, recorded in observed_kv_metrics.")
  String vllmCommit;

  @Option(names = "--unconstrained-output",
      description = "Go BLIS: let the server decide each answer's length (no max_tokens on chat, the largest int on"
          + " completions, no ignore_eos); the trace records the lengths it gave.")
  boolean unconstrainedOutput;

  @Option(names = "--min-tokens", paramLabel = "N",
      description = "Go BLIS: send min_tokens N with every request (default: none).")
  int minTokens;

  @Option(names = "--token-times", negatable = true, defaultValue = "true", fallbackValue = "true",
      description = "Record every chunk's arrival time (default: on; off keeps first, last and count).")
  boolean tokenTimes = true;

  @Option(names = "--api-key", paramLabel = "KEY", defaultValue = "${env:OPENAI_API_KEY}",
      description = "Bearer token sent with every request (default: $OPENAI_API_KEY, if set).")
  String apiKey;

  @Option(names = "--metrics-url", paramLabel = "URL",
      description = "The server's Prometheus metrics (default: /metrics at the endpoint's root).")
  String metricsUrl;

  @Option(names = "--no-metrics", description = "Do not scrape the server's metrics.")
  boolean noMetrics;

  @Option(names = "--metrics-interval-s", description = "Seconds between scrapes of the metrics (default: ${DEFAULT-VALUE}).")
  double metricsIntervalS = 1;

  @Option(names = "--progress-interval-s",
      description = "Seconds between progress lines on stderr, 0 = none (default: 1 on a terminal, else 10).")
  Double progressIntervalS;

  @Option(names = "--trace", paramLabel = "FILE",
      description = "Re-send a BLIS trace (the workload.csv of an earlier run, 'blis run --trace-out') at its recorded times.")
  Path trace;

  @Option(names = "--finish", paramLabel = "DIR",
      description = "Only rebuild requests.csv and experiments.json of a run whose client was killed, from its files.")
  Path finish;

  @Option(names = "--vllm-version", paramLabel = "VERSION",
      description = "The server's vLLM version, recorded in the run (default: the server's GET /version).")
  String vllmVersion;

  @Option(names = "--kv-offloading-size-gib",
      description = "The server's CPU KV tier, GiB summed over TP ranks (vLLM --kv-offloading-size), recorded in the run.")
  Double kvOffloadingSizeGib;

  @Mixin ServerOptions server = new ServerOptions();

  @Mixin WorkloadOptions workload = new WorkloadOptions();

  @Mixin DetectorOptions detectorOptions = new DetectorOptions();

  /**
   * Go BLIS's detectors over the server's answers: each request that ended whole arrives when it
   * was sent and completes at its end (one line: the final labels; --saturation-report written).
   */
  private void printSaturation(PrintWriter o, List<Observation> observations) {
    List<Observation> done = observations.stream().filter(x -> x.status().equals(Observation.OK)).toList();
    long[] ids = new long[done.size()];
    long[] sent = new long[done.size()];
    long[] e2e = new long[done.size()];
    for (int i = 0; i < ids.length; i++) {
      Observation x = done.get(i);
      ids[i] = x.seq();
      sent[i] = x.sendUs();
      e2e[i] = x.endUs() - x.sendUs();
    }
    java.util.Map<String, String> finals = detectorOptions.finals(new SaturationTrace.Events(ids, sent, e2e), true);
    StringBuilder b = new StringBuilder("saturation:");
    finals.forEach((k, v) -> b.append(' ').append(k).append(' ').append(v));
    o.println(b);
    o.flush();
  }

  @Override
  public Integer call() throws InterruptedException {
    CommandLine cl = spec.commandLine();
    if (finish != null) {
      require(endpoint == null && serverUrl == null && servedModel == null && out == null && trace == null
              && traceHeader == null && traceData == null,
          "--finish DIR rebuilds a run's summary from its files: give it alone");
      RunReport report = RunDirectory.finish(finish, null);
      printSummary(cl.getOut(), report, finish);
      return 0;
    }
    require(endpoint == null || serverUrl == null, "give --endpoint URL or Go BLIS's --server-url URL, not both");
    if (serverUrl != null) {
      uri("--server-url", serverUrl);
      String root = serverUrl.replaceAll("/+$", "");
      endpoint = root.endsWith("/v1") ? root : root + "/v1";
    }
    require(endpoint != null, "--endpoint URL is required (the server's OpenAI base URL, e.g. http://127.0.0.1:8000/v1;"
        + " or Go BLIS's --server-url http://127.0.0.1:8000)");
    require(servedModel == null || !servedModel.isBlank(), "--served-model must name the model the server answers to,"
        + " got a blank name");
    require(!cl.getParseResult().hasMatchedOption("--model") || !server.model.isBlank(), "--model must name a"
        + " model (a bundled name or alias, a config.json, or the name the requests send), got a blank name");
    require(traceHeader == null || traceData != null, "--trace-header FILE goes with --trace-data FILE (Go BLIS's"
        + " TraceV2 is two files: the header YAML and the data CSV)");
    require(traceData == null || traceHeader != null, "--trace-data FILE goes with --trace-header FILE (Go BLIS's"
        + " TraceV2 is two files: the header YAML and the data CSV)");
    boolean goTrace = traceHeader != null;
    require(out != null || goTrace, "--out DIR is required (the folder of the run), or Go BLIS's --trace-header FILE"
        + " --trace-data FILE");
    require(!recordItl || !noStreaming, "--record-itl and --no-streaming are mutually exclusive; ITL recording requires"
        + " streaming responses");
    require(!recordItl || goTrace, "--record-itl records the chunks of the TraceV2 trace's requests: give"
        + " --trace-header FILE and --trace-data FILE");
    require(!recordItl || tokenTimes, "--record-itl needs every chunk's time: leave out --no-token-times");
    require(!scrapeKvMetrics || goTrace, "--scrape-kv-metrics writes observed_kv_metrics to the TraceV2 header: give"
        + " --trace-header FILE and --trace-data FILE");
    require(scrapeKvMetrics || (kvMetricsUrl == null && vllmCommit == null),
        "--kv-metrics-url and --vllm-commit go with --scrape-kv-metrics");
    require(warmupRequests >= 0, "--warmup-requests must be >= 0, got " + warmupRequests);
    require(warmupRequests == 0 || goTrace, "--warmup-requests N leaves the first N requests out of the TraceV2 trace:"
        + " give --trace-header FILE and --trace-data FILE");
    require(Double.isFinite(rttMs) && rttMs >= 0, "--rtt-ms must be a finite value >= 0, got " + rttMs);
    require(serverType != null && !serverType.isBlank(), "--server-type must name the server's kind (vllm, sglang,"
        + " tgi, ...), got a blank name");
    long prewarmUs = goDurationUs("--prewarm-duration", prewarmDuration);
    if (goTrace) {
      Path itl = itlPath();
      require(!traceHeader.toAbsolutePath().normalize().equals(traceData.toAbsolutePath().normalize()),
          "--trace-header and --trace-data must be two files, got " + traceHeader + " for both");
      require(itl == null || (!itl.toAbsolutePath().normalize().equals(traceData.toAbsolutePath().normalize())
              && !itl.toAbsolutePath().normalize().equals(traceHeader.toAbsolutePath().normalize())),
          "--itl-output must be a file of its own, not the trace's " + itl);
      for (Path p : itl == null ? List.of(traceHeader, traceData) : List.of(traceHeader, traceData, itl)) {
        requireWritable(p);
      }
    }
    if (itlOutput != null && !recordItl) {
      cl.getErr().println("blis observe: note: --itl-output is set but --record-itl is not: no ITL file is written");
    }
    server.validate(cl);
    detectorOptions.validate(cl);
    if (cl.getParseResult().hasMatchedOption("--model") && servedModel == null && !cl.getParseResult()
        .hasMatchedOption("--model-config-folder")) {
      modelName = server.model;
      modelNameOnly = !resolvable(server.model);
    }
    workload.validate(cl, trace == null ? List.of() : List.of("--trace"));
    require(Double.isFinite(timeoutS) && timeoutS > 0, "--timeout-s must be a positive number of seconds, got " + timeoutS);
    require(Double.isFinite(connectTimeoutS) && connectTimeoutS > 0,
        "--connect-timeout-s must be a positive number of seconds, got " + connectTimeoutS);
    require(Double.isFinite(metricsIntervalS) && metricsIntervalS >= 0.05,
        "--metrics-interval-s must be at least 0.05, got " + metricsIntervalS);
    require(maxConcurrency >= 0, "--max-concurrency must be >= 0 (0 = no cap), got " + maxConcurrency);
    require(minTokens >= 0, "--min-tokens must be >= 0 (0: none), got " + minTokens);
    boolean synthetic = trace == null && workload.workloadSpec == null && workload.workloadPreset == null
        && workload.inferencePerf == null && workload.tracesFile == null;
    if (minTokens > 0 && !unconstrainedOutput && synthetic) {
      // the requests ask for --output-tokens on average: a server refuses min_tokens above max_tokens
      require(minTokens <= workload.outputTokens, String.format(Locale.ROOT, "--min-tokens %d is above"
          + " --output-tokens %s: a request's min_tokens must be at most its max_tokens (the server refuses it);"
          + " give --min-tokens at most %s", minTokens, number(workload.outputTokens), number(workload.outputTokens)));
    }
    require(progressIntervalS == null || (Double.isFinite(progressIntervalS) && progressIntervalS >= 0),
        "--progress-interval-s must be >= 0, got " + progressIntervalS);
    require(kvOffloadingSizeGib == null || (Double.isFinite(kvOffloadingSizeGib) && kvOffloadingSizeGib >= 0),
        "--kv-offloading-size-gib must be >= 0, got " + kvOffloadingSizeGib);
    require(metricsUrl == null || !noMetrics, "give --metrics-url or --no-metrics, not both");
    if (out == null && metricsUrl == null) {
      noMetrics = true; // the scrapes go to the run folder's metrics.csv only
    }
    if (servedModel == null) {
      servedModel = theOnlyServedModel();
    }
    ObserveConfig config = config();
    if (trace != null) {
      Cli.requireFile("--trace", trace);
      require(TraceReader.isBlisTrace(trace), "--trace " + trace + " is not a BLIS trace (its first line does not"
          + " start with '# blis-trace'); observe re-sends BLIS traces: the workload.csv of an earlier run or a"
          + " 'blis run --trace-out' trace");
    }
    if (out != null) {
      RunDirectory.requireFree(out);
    }
    ServerDeployment.check(declared());
    // the workload first: a bad file fails before anything is sent
    try (RequestSource source = trace != null ? TraceReader.open(trace) : workload.source(cl);
        Observer observer = Observer.create(config)) {
      ServerInfo info = observer.probe();
      ServerDeployment deployment = ServerDeployment.resolve(declared(), info, servedModel);
      PrintWriter err = cl.getErr();
      for (String note : info.notes()) {
        err.println("blis observe: note: " + note);
      }
      info.warnings().forEach(err::println);
      if (!deployment.simulatable() && out != null) {
        err.println("blis observe: note: '" + deployment.model() + "' is not a bundled model: give --model"
            + " CONFIG_JSON (its HuggingFace config.json) so that validate and calibrate can simulate the run");
      }
      err.flush();
      String runId = id != null ? id : defaultId(deployment.model());
      long tokenSeed = trace != null ? TraceReader.header(trace).tokenSeed() : workload.effectiveSeed(cl);
      String description = trace != null ? "trace " + trace.getFileName() : workload.description(cl);
      String createdAt = Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toString();
      TraceV2Recorder traceRecorder = goTrace ? new TraceV2Recorder(warmupRequests, recordItl, config) : null;
      ObservedRun run;
      CountDownLatch finished = new CountDownLatch(1);
      Thread hook = new Thread(() -> {
        observer.stop();
        try {
          finished.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }, "blis-observe-stop");
      Runtime.getRuntime().addShutdownHook(hook);
      try {
        if (prewarmUs > 0) {
          err.printf(Locale.ROOT, "blis observe: prewarming for %s (%d requests at a time, %d prompt and %d output"
                  + " tokens, not recorded)%n", prewarmDuration, Observer.PREWARM_CONCURRENCY,
              Observer.PREWARM_INPUT_TOKENS, Observer.PREWARM_OUTPUT_TOKENS);
          err.flush();
          Observer.Prewarm p = observer.prewarm(prewarmUs);
          err.printf(Locale.ROOT, "blis observe: prewarm: %d request(s) sent, %d failed%s%n", p.sent(), p.failed(),
              p.sent() > 0 && p.failed() == p.sent() ? " (is the server reachable at " + config.endpoint() + "?)" : "");
          err.flush();
        }
        List<ObservationListener> targets = new ArrayList<>();
        RunDirectory files = out == null ? null : RunDirectory.create(out, runId, deployment, config, info,
            workloadName(), description, tokenSeed);
        try {
          if (files != null) {
            targets.add(files);
          }
          if (traceRecorder != null) {
            targets.add(traceRecorder);
          }
          err.printf(Locale.ROOT, "blis observe: %s, model %s, %s; writing %s (Ctrl-C stops and keeps what ended)%n",
              config.endpoint(), servedModel, description, writing());
          err.flush();
          PrometheusText.Scrape kvStart = scrapeKvMetrics ? kvScrape(observer, config, err, "start") : null;
          run = observer.run(source, new Progressing(targets, err, progressIntervalUs()));
          if (kvStart != null) {
            PrometheusText.Scrape kvEnd = kvScrape(observer, config, err, "end");
            try {
              observedKv = kvEnd == null ? null : ObservedKvRate.of(kvStart, kvEnd, vllmCommit == null ? "" : vllmCommit);
            } catch (IllegalArgumentException e) {
              kvWarning(err, e.getMessage());
            }
          }
        } finally {
          if (files != null) {
            files.close();
          }
        }
        if (traceRecorder != null) {
          traceRecorder.write(new TraceV2Writer.Header(3, createdAt, "real", warmupRequests, tokenSeed,
              goWorkloadSpec(), serverType, servedModel, rttMs, observedKv), traceHeader, traceData, itlPath());
        }
        observer.checks().warnings().forEach(err::println);
        err.flush();
        RunReport report = out != null ? RunDirectory.finish(out, run) : RunReport.of(traceRecorder.observations());
        printSummary(cl.getOut(), report, out);
        if (detectorOptions.enabled()) {
          printSaturation(cl.getOut(), report.observations());
        }
        if (traceRecorder != null) {
          PrintWriter o = cl.getOut();
          o.printf(Locale.ROOT, "wrote %s and %s: %d request(s)%s (then: blis replay --trace-header %s --trace-data %s)%n",
              traceHeader, traceData, traceRecorder.rows(), warmupRequests > 0 ? ", the first " + warmupRequests
                  + " sent left out as warm-up" : "", traceHeader, traceData);
          if (recordItl) {
            o.printf(Locale.ROOT, "wrote %s: %d chunk(s)%n", itlPath(), traceRecorder.itlRows());
          }
          o.flush();
        }
        Observation firstFailure = noneSucceeded(report);
        if (firstFailure != null) {
          err.printf(Locale.ROOT, "blis observe: no request succeeded: all %d sent failed, the first with %s%s;"
                  + " is %s an OpenAI-compatible endpoint serving '%s'? (the run is in %s)%n",
              report.observations().size(), firstFailure.status(),
              firstFailure.httpStatus() > 0 ? " (HTTP " + firstFailure.httpStatus() + ")" : "",
              config.endpoint(), servedModel, writing());
          err.flush();
          failedRun = true;
        }
        if (run.stopped()) {
          err.printf(Locale.ROOT, "blis observe: stopped: %d request(s) in flight ended as stopped, %d not sent%n",
              report.observations().stream().filter(o -> o.status().equals(Observation.STOPPED)).count(),
              run.notSent());
        }
      } finally {
        finished.countDown();
        try {
          Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
          // Ctrl-C: the hook is running and waits for the latch above
        }
      }
    }
    return failedRun ? 1 : 0;
  }

  /** Set when every request sent failed: the exit status is then 1. */
  private boolean failedRun;

  /** --model's value when given without --served-model: the name requests send, as in Go BLIS, when served. */
  private String modelName;
  /** Whether --model names no bundled model nor config: only the name requests send (Go BLIS's meaning). */
  private boolean modelNameOnly;

  /** Whether {@code model} is a bundled model (or alias) or a config file; a name ending .json counts (its error is the deployment's). */
  private static boolean resolvable(String model) {
    if (model.endsWith(".json")) {
      return true;
    }
    try {
      ModelCatalog.resolve(model);
      return true;
    } catch (IllegalArgumentException | java.io.UncheckedIOException e) {
      return false;
    }
  }

  /** The ITL file: --itl-output, else --trace-data without .csv then .itl.csv (as Go BLIS); null without --record-itl. */
  private Path itlPath() {
    if (!recordItl) {
      return null;
    }
    if (itlOutput != null) {
      return itlOutput;
    }
    String name = traceData.getFileName().toString();
    String stem = name.endsWith(".csv") ? name.substring(0, name.length() - 4) : name;
    return traceData.resolveSibling(stem + ".itl.csv");
  }

  /** An output file must be one that can be written, before anything is sent. */
  private void requireWritable(Path file) {
    require(!Files.isDirectory(file), file + " is a directory; expected the path of a file to write");
    Path parent = file.toAbsolutePath().getParent();
    if (parent != null && !Files.isDirectory(parent)) {
      try {
        Files.createDirectories(parent);
      } catch (IOException | SecurityException e) {
        require(false, "cannot create the folder of " + file + ": " + e.getMessage());
      }
    }
    require(parent == null || Files.isWritable(parent), "cannot write " + file + ": its folder is not writable");
  }

  /** {@code v} as a flag's value is written: 512, not 512.0. */
  private static String number(double v) {
    return v == Math.rint(v) && Math.abs(v) < 1e15 ? Long.toString((long) v) : Double.toString(v);
  }

  /** Go's time.ParseDuration ("60s", "1m30s", "500ms", "0"), in microseconds; negative is refused. */
  private long goDurationUs(String flag, String text) {
    String t = text == null ? "" : text.strip();
    require(!t.startsWith("-") || t.equals("-0"), flag + " must be >= 0, got " + text);
    java.util.OptionalLong us = Cli.goDurationUs(t);
    require(us.isPresent(), flag + ": expected a duration such as 60s, 1m30s or 500ms (Go's form), got '" + text + "'");
    return us.getAsLong();
  }

  /** The TraceV2 header's workload_spec: the spec file as given, preset:NAME, or null (as Go BLIS). */
  private String goWorkloadSpec() {
    if (trace != null) {
      return trace.toString();
    }
    if (workload.workloadSpec != null) {
      return workload.workloadSpec.toString();
    }
    return workload.workloadPreset != null ? "preset:" + workload.workloadPreset : null;
  }

  /** What the run writes, in words. */
  private String writing() {
    List<String> w = new ArrayList<>();
    if (out != null) {
      w.add(out.toString());
    }
    if (traceHeader != null) {
      w.add(traceHeader + " and " + traceData);
    }
    return String.join(", ", w);
  }

  /** The first failed observation when requests were sent and none succeeded (stopped ones aside), else null. */
  private static Observation noneSucceeded(RunReport report) {
    Observation first = null;
    for (Observation o : report.observations()) {
      if (o.status().equals(Observation.OK)) {
        return null;
      }
      if (first == null && !o.status().equals(Observation.STOPPED)) {
        first = o;
      }
    }
    return first;
  }

  /**
   * Without {@code --served-model}: the model the server lists when it lists exactly one (as
   * vLLM, and {@code blis serve} with one name, do); otherwise one line saying what it lists.
   */
  private String theOnlyServedModel() {
    servedModel = "(not given)"; // a name for the config of the one request below, never sent
    List<String> models;
    try (Observer probe = Observer.create(config())) {
      models = probe.servedModels();
    } catch (IllegalArgumentException e) {
      if (modelName != null) {
        return modelName; // Go BLIS sends --model as it is; a server that cannot be reached says so below
      }
      throw new CommandLine.ParameterException(spec.commandLine(), "--served-model NAME is needed: " + e.getMessage());
    }
    if (modelName != null) {
      if (models.isEmpty() || models.contains(modelName)) {
        return modelName;
      }
      List<String> alike = models.stream().filter(m -> m.equalsIgnoreCase(modelName)).toList();
      String only = alike.size() == 1 ? alike.get(0) : models.size() == 1 ? models.get(0) : null;
      require(only != null, "--served-model NAME is needed: the server at " + endpoint + " serves "
          + Observer.someOf(models) + ", not --model's '" + modelName + "'");
      spec.commandLine().getErr().println("blis observe: note: --served-model not given and the server does not"
          + " answer to --model's '" + modelName + "': sending " + only + ", the " + (alike.size() == 1
          ? "name it serves that differs only in case" : "one model it serves"));
      return only;
    }
    require(models.size() == 1, "--served-model NAME is needed: the server at " + endpoint
        + (models.isEmpty() ? " lists no model" : " serves " + Observer.someOf(models)));
    spec.commandLine().getErr().println("blis observe: note: --served-model not given: the server serves one"
        + " model, " + models.get(0));
    return models.get(0);
  }

  private void require(boolean ok, String message) {
    DeploymentOptions.require(spec.commandLine(), ok, message);
  }

  private ObserveConfig config() {
    URI uri = uri("--endpoint", endpoint);
    ObserveConfig.Api a;
    ObserveConfig.PromptFormat f;
    try {
      a = ObserveConfig.Api.parse(api);
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(spec.commandLine(), "--api: " + e.getMessage());
    }
    try {
      f = promptFormat != null ? ObserveConfig.PromptFormat.parse(promptFormat)
          : a == ObserveConfig.Api.CHAT ? ObserveConfig.PromptFormat.TEXT : ObserveConfig.PromptFormat.TOKEN_IDS;
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(spec.commandLine(), "--prompt-format: " + e.getMessage());
    }
    require(!(a == ObserveConfig.Api.CHAT && f == ObserveConfig.PromptFormat.TOKEN_IDS),
        "--api chat takes text prompts: leave out --prompt-format token-ids (or use --api completions)");
    URI metrics = noMetrics ? null : metricsUrl != null ? uri("--metrics-url", metricsUrl) : null;
    try {
      ObserveConfig c = ObserveConfig.of(uri, servedModel);
      return c.toBuilder().api(a, f).maxConcurrency(maxConcurrency)
          .timeoutUs(Math.round(timeoutS * 1e6)).ignoreEos(ignoreEos).tokenTimes(tokenTimes)
          .apiKey(apiKey == null || apiKey.isBlank() ? null : apiKey)
          .metrics(noMetrics ? null : metrics != null ? metrics : c.metricsUri(), Math.round(metricsIntervalS * 1e6))
          .connectTimeoutUs(Math.round(connectTimeoutS * 1e6)).streaming(!noStreaming)
          .unconstrainedOutput(unconstrainedOutput).minTokens(minTokens).build();
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
    }
  }

  private URI uri(String flag, String value) {
    try {
      URI u = new URI(value);
      require(u.getScheme() != null && (u.getScheme().equals("http") || u.getScheme().equals("https"))
          && u.getHost() != null, flag + " must be an http:// or https:// URL with a host (e.g. http://127.0.0.1:8000"
          + (flag.equals("--server-url") ? "" : "/v1") + "), got '" + value + "'");
      require(u.getPort() >= -1 && u.getPort() <= 65535 && u.getPort() != 0,
          flag + ": port " + u.getPort() + " is not a TCP port (1-65535), in '" + value + "'");
      return u;
    } catch (URISyntaxException e) {
      throw new CommandLine.ParameterException(spec.commandLine(), flag + ": not a URL: '" + value + "' (" + e.getReason() + ")");
    }
  }

  private ServerDeployment.Declared declared() {
    CommandLine.ParseResult p = spec.commandLine().getParseResult();
    return new ServerDeployment.Declared(
        ServerOptions.modelGiven(p) && !modelNameOnly ? server.model : null,
        ServerOptions.gpuGiven(p) ? server.gpu : null,
        p.hasMatchedOption("--tp") ? server.tp : null,
        server.maxModelLen,
        p.hasMatchedOption("--max-num-batched-tokens") ? server.maxNumBatchedTokens : null,
        p.hasMatchedOption("--max-num-seqs") ? server.maxNumSeqs : null,
        p.hasMatchedOption("--gpu-memory-utilization") ? server.gpuMemoryUtilization : null,
        p.hasMatchedOption("--block-size") ? server.blockSize : null,
        server.totalKvBlocks,
        kvOffloadingSizeGib == null ? null : Math.round(kvOffloadingSizeGib * (1L << 30)),
        vllmVersion,
        p.hasMatchedOption("--pp") ? server.pp : null,
        p.hasMatchedOption("--dp") ? server.dp : null,
        p.hasMatchedOption("--ep") || p.hasMatchedOption("--enable-expert-parallel")
            ? server.resolvedEp() : null);
  }

  private String defaultId(String model) {
    String shortName = model.substring(model.lastIndexOf('/') + 1).toLowerCase(Locale.ROOT)
        .replaceAll("[^a-z0-9.]+", "-");
    return "observe-" + shortName + "-" + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"));
  }

  /** A short name of the workload, grouping runs in reports. */
  private String workloadName() {
    if (trace != null) {
      return "trace";
    }
    if (workload.workloadPreset != null) {
      return workload.workloadPreset;
    }
    if (workload.workloadSpec != null) {
      return stem(workload.workloadSpec);
    }
    if (workload.inferencePerf != null) {
      return stem(workload.inferencePerf);
    }
    return "poisson-gaussian";
  }

  private static String stem(Path p) {
    String n = p.getFileName().toString();
    int dot = n.indexOf('.');
    return dot > 0 ? n.substring(0, dot) : n;
  }

  private long progressIntervalUs() {
    if (progressIntervalS != null) {
      return Math.round(progressIntervalS * 1e6);
    }
    return System.console() != null ? 1_000_000 : 10_000_000;
  }

  /** The run's files (its folder, the TraceV2 trace) plus a progress line on stderr. */
  private static final class Progressing implements ObservationListener {
    private final List<ObservationListener> targets;
    private final PrintWriter err;
    private final long intervalUs;
    private final boolean terminal = System.console() != null;

    Progressing(List<ObservationListener> targets, PrintWriter err, long intervalUs) {
      this.targets = List.copyOf(targets);
      this.err = err;
      this.intervalUs = intervalUs;
    }

    @Override
    public void onStart(long epochUs) {
      targets.forEach(t -> t.onStart(epochUs));
    }

    @Override
    public void onSent(long seq, RequestSpec asSent, long scheduledUs) {
      targets.forEach(t -> t.onSent(seq, asSent, scheduledUs));
    }

    @Override
    public void onObservation(Observation o) {
      targets.forEach(t -> t.onObservation(o));
    }

    @Override
    public void onMetrics(io.blis.cli.observe.MetricsSample sample) {
      targets.forEach(t -> t.onMetrics(sample));
    }

    @Override
    public long progressIntervalUs() {
      return intervalUs;
    }

    @Override
    public void onProgress(Progress p) {
      String line = String.format(Locale.ROOT, "blis observe: %.0f s, sent %d, in flight %d, done %d, failed %d, late %d",
          p.elapsedUs() / 1e6, p.sent(), p.inFlight(), p.done(), p.failed(), p.late());
      if (terminal) {
        err.print("\r" + line + "   ");
      } else {
        err.println(line);
      }
      err.flush();
    }
  }

  /** The run's figures on stdout: counts, then latencies overall and per stage. */
  private static void printSummary(PrintWriter out, RunReport report, Path dir) {
    RunStats o = report.summary().overall();
    Map<String, Long> failures = new TreeMap<>();
    for (Observation x : report.observations()) {
      if (!x.ok()) {
        failures.merge(x.status(), 1L, Long::sum);
      }
    }
    List<String> why = new ArrayList<>();
    failures.forEach((k, v) -> why.add(k + " " + v));
    out.printf(Locale.ROOT, "observed %d request(s): %d ok, %d failed%s%n", report.observations().size(),
        o.countSuccess(), o.countFailed(), why.isEmpty() ? "" : " (" + String.join(", ", why) + ")");
    out.println("stage    ok  E2E mean   E2E p99  TTFT mean  TTFT p99  decode ms/token  req/s");
    row(out, "all", o);
    if (report.summary().stages().size() > 1) {
      for (RunStats s : report.summary().stages()) {
        row(out, String.valueOf(s.stage()), s);
      }
    }
    if (dir != null) {
      out.printf(Locale.ROOT, "wrote %s (then: blis validate --experiments %s)%n",
          dir.resolve(RunDirectory.EXPERIMENTS), dir.resolve(RunDirectory.EXPERIMENTS));
    }
    out.flush();
  }

  private static void row(PrintWriter out, String stage, RunStats s) {
    out.printf(Locale.ROOT, "%-5s %5d %9.1f %9.1f %10.1f %9.1f %16.3f %6.2f%n", stage, s.countSuccess(),
        s.e2eMeanMs(), s.e2eP99Ms(), s.ttftMeanMs(), s.ttftP99Ms(), s.decodeMsPerToken(), s.throughputRps());
  }
}
