package io.blis.cli;

import io.blis.cli.observe.ObservationListener;
import io.blis.cli.observe.Observation;
import io.blis.cli.observe.ObserveConfig;
import io.blis.cli.observe.ObservedRun;
import io.blis.cli.observe.Observer;
import io.blis.cli.observe.Progress;
import io.blis.cli.observe.RunDirectory;
import io.blis.cli.observe.RunReport;
import io.blis.cli.observe.ServerDeployment;
import io.blis.cli.observe.ServerInfo;
import io.blis.engine.validate.RunStats;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import io.blis.workload.trace.TraceReader;
import java.io.PrintWriter;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
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
        + " deployment_sources in experiments.json says which."})
final class ObserveCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Option(names = "--endpoint", paramLabel = "URL",
      description = "The server's OpenAI base URL, e.g. http://127.0.0.1:8000/v1.")
  String endpoint;

  @Option(names = "--served-model", paramLabel = "NAME",
      description = "The model name the server answers to (vLLM's --served-model-name, or the model path it was started with;"
          + " default: the one model the server lists at /v1/models).")
  String servedModel;

  @Option(names = "--out", paramLabel = "DIR", description = "Folder of the run (created; must not hold a run).")
  Path out;

  @Option(names = "--id", paramLabel = "ID",
      description = "The run's experiment id (default: observe-<model>-<date>-<time>).")
  String id;

  @Option(names = "--api", paramLabel = "completions|chat",
      description = "Endpoint the requests go to (default: ${DEFAULT-VALUE}).")
  String api = "completions";

  @Option(names = "--prompt-format", paramLabel = "token-ids|text",
      description = "Prompts as token ids (exact; completions only) or one word per token (default: token-ids for completions, text for chat).")
  String promptFormat;

  @Option(names = "--max-concurrency", paramLabel = "N",
      description = "Requests in flight at most; a request due while N are in flight waits and is sent late (default: no cap).")
  int maxConcurrency = 0;

  @Option(names = "--timeout-s", description = "Client timeout of a request whose workload gives none, seconds (default: ${DEFAULT-VALUE}).")
  double timeoutS = 300;

  @Option(names = "--connect-timeout-s", description = "How long a connection may take, seconds (default: ${DEFAULT-VALUE}).")
  double connectTimeoutS = 10;

  @Option(names = "--ignore-eos", negatable = true, defaultValue = "true", fallbackValue = "true",
      description = "Send vLLM's ignore_eos so that every answer has the workload's length (default: on).")
  boolean ignoreEos = true;

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

  @Override
  public Integer call() throws InterruptedException {
    CommandLine cl = spec.commandLine();
    if (finish != null) {
      require(endpoint == null && servedModel == null && out == null && trace == null,
          "--finish DIR rebuilds a run's summary from its files: give it alone");
      RunReport report = RunDirectory.finish(finish, null);
      printSummary(cl.getOut(), report, finish);
      return 0;
    }
    require(endpoint != null, "--endpoint URL is required (the server's OpenAI base URL, e.g. http://127.0.0.1:8000/v1)");
    require(servedModel == null || !servedModel.isBlank(), "--served-model must name the model the server answers to,"
        + " got a blank name");
    require(out != null, "--out DIR is required (the folder of the run)");
    server.validate(cl);
    workload.validate(cl, trace == null ? List.of() : List.of("--trace"));
    require(Double.isFinite(timeoutS) && timeoutS > 0, "--timeout-s must be a positive number of seconds, got " + timeoutS);
    require(Double.isFinite(connectTimeoutS) && connectTimeoutS > 0,
        "--connect-timeout-s must be a positive number of seconds, got " + connectTimeoutS);
    require(Double.isFinite(metricsIntervalS) && metricsIntervalS >= 0.05,
        "--metrics-interval-s must be at least 0.05, got " + metricsIntervalS);
    require(maxConcurrency >= 0, "--max-concurrency must be >= 0 (0 = no cap), got " + maxConcurrency);
    require(progressIntervalS == null || (Double.isFinite(progressIntervalS) && progressIntervalS >= 0),
        "--progress-interval-s must be >= 0, got " + progressIntervalS);
    require(kvOffloadingSizeGib == null || (Double.isFinite(kvOffloadingSizeGib) && kvOffloadingSizeGib >= 0),
        "--kv-offloading-size-gib must be >= 0, got " + kvOffloadingSizeGib);
    require(metricsUrl == null || !noMetrics, "give --metrics-url or --no-metrics, not both");
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
    RunDirectory.requireFree(out);
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
      if (!deployment.simulatable()) {
        err.println("blis observe: note: '" + deployment.model() + "' is not a bundled model: give --model"
            + " CONFIG_JSON (its HuggingFace config.json) so that validate and calibrate can simulate the run");
      }
      err.flush();
      String runId = id != null ? id : defaultId(deployment.model());
      long tokenSeed = trace != null ? TraceReader.header(trace).tokenSeed() : workload.effectiveSeed(cl);
      String description = trace != null ? "trace " + trace.getFileName() : workload.description(cl);
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
        try (RunDirectory files = RunDirectory.create(out, runId, deployment, config, info, workloadName(),
            description, tokenSeed)) {
          err.printf(Locale.ROOT, "blis observe: %s, model %s, %s; writing %s (Ctrl-C stops and keeps what ended)%n",
              config.endpoint(), servedModel, description, out);
          err.flush();
          run = observer.run(source, new Progressing(files, err, progressIntervalUs()));
        }
        RunReport report = RunDirectory.finish(out, run);
        printSummary(cl.getOut(), report, out);
        Observation firstFailure = noneSucceeded(report);
        if (firstFailure != null) {
          err.printf(Locale.ROOT, "blis observe: no request succeeded: all %d sent failed, the first with %s%s;"
                  + " is %s an OpenAI-compatible endpoint serving '%s'? (the run is in %s)%n",
              report.observations().size(), firstFailure.status(),
              firstFailure.httpStatus() > 0 ? " (HTTP " + firstFailure.httpStatus() + ")" : "",
              config.endpoint(), servedModel, out);
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
      throw new CommandLine.ParameterException(spec.commandLine(), "--served-model NAME is needed: " + e.getMessage());
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
          .connectTimeoutUs(Math.round(connectTimeoutS * 1e6)).build();
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
    }
  }

  private URI uri(String flag, String value) {
    try {
      URI u = new URI(value);
      require(u.getScheme() != null && (u.getScheme().equals("http") || u.getScheme().equals("https"))
          && u.getHost() != null, flag + " must be an http:// or https:// URL with a host (e.g. http://127.0.0.1:8000/v1), got '" + value + "'");
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
        ServerOptions.modelGiven(p) ? server.model : null,
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

  /** The run's files plus a progress line on stderr. */
  private static final class Progressing implements ObservationListener {
    private final RunDirectory files;
    private final PrintWriter err;
    private final long intervalUs;
    private final boolean terminal = System.console() != null;

    Progressing(RunDirectory files, PrintWriter err, long intervalUs) {
      this.files = files;
      this.err = err;
      this.intervalUs = intervalUs;
    }

    @Override
    public void onSent(long seq, RequestSpec asSent, long scheduledUs) {
      files.onSent(seq, asSent, scheduledUs);
    }

    @Override
    public void onObservation(Observation o) {
      files.onObservation(o);
    }

    @Override
    public void onMetrics(io.blis.cli.observe.MetricsSample sample) {
      files.onMetrics(sample);
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
    out.printf(Locale.ROOT, "wrote %s (then: blis validate --experiments %s)%n",
        dir.resolve(RunDirectory.EXPERIMENTS), dir.resolve(RunDirectory.EXPERIMENTS));
    out.flush();
  }

  private static void row(PrintWriter out, String stage, RunStats s) {
    out.printf(Locale.ROOT, "%-5s %5d %9.1f %9.1f %10.1f %9.1f %16.3f %6.2f%n", stage, s.countSuccess(),
        s.e2eMeanMs(), s.e2eP99Ms(), s.ttftMeanMs(), s.ttftP99Ms(), s.decodeMsPerToken(), s.throughputRps());
  }
}
