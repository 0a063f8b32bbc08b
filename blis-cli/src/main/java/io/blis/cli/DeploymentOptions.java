package io.blis.cli;

import io.blis.engine.KvOffload;
import io.blis.engine.Simulation;
import io.blis.engine.result.SimulationResult;
import io.blis.engine.cluster.Cluster;
import io.blis.engine.cluster.KvOffloadFile;
import io.blis.engine.cluster.PolicyBundle;
import io.blis.engine.cluster.PoolSpec;
import io.blis.engine.trace.OtlpTraceWriter;
import io.blis.workload.RequestSource;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import picocli.CommandLine;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The deployment and output flags shared by {@code blis run} and {@code blis replay} (a picocli
 * mixin): which model on which GPU, the latency model and its coefficients, the vLLM limits, the
 * KV cache size (GPU and CPU tier), the number of instances and the router, the horizon and
 * where the result JSON goes. Both commands hand it a request source; it simulates and prints the
 * result.
 */
final class DeploymentOptions {

  static final String DEFAULT_MODEL = Cluster.BUILT_IN_DEFAULTS.model();
  static final String DEFAULT_GPU = Cluster.BUILT_IN_DEFAULTS.gpu();
  static final String DEFAULT_LATENCY_MODEL = Cluster.BUILT_IN_DEFAULTS.latencyModel();

  @Mixin ServerOptions server = new ServerOptions();

  @Option(names = "--latency-model", paramLabel = "NAME",
      description = "Latency model provider (default: ${DEFAULT-VALUE}).")
  String latencyModel = DEFAULT_LATENCY_MODEL;

  @Option(names = "--coefficients", paramLabel = "FILE|INLINE",
      description = "Coefficient file, or an inline list such as 'alpha=1,2,3;beta=4,5,6' (default: the model's bundled ones).")
  String coefficients;

  @Option(names = "--option", paramLabel = "KEY=VALUE",
      description = "Free-form option passed to the latency model and scheduler providers (repeatable).")
  Map<String, String> options = new TreeMap<>();

  @Option(names = "--long-prefill-token-threshold",
      description = "Cap on one request's prefill chunk per step, 0 = none (default: ${DEFAULT-VALUE}).")
  int longPrefillTokenThreshold = 0;

  @Option(names = "--async-scheduling", negatable = true, defaultValue = "true", fallbackValue = "true",
      description = "vLLM async scheduling: a request queued mid-step joins the step after next "
          + "(default: on, as in vLLM since v0.14, or as --vllm-version implies; --no-async-scheduling turns it off).")
  boolean asyncScheduling = true;

  @Option(names = "--vllm-version", paramLabel = "VERSION",
      description = "The vLLM release simulated (v0.15.1, or an image such as vllm/vllm-openai:v0.8.4): recorded in the"
          + " result; before v0.14.0 async scheduling is off unless --async-scheduling is given, and the engine's host"
          + " time per step (by release, from the bundled host-times table) is added to every step; before v0.8.0 the"
          + " engine is V0; from v0.23.0 a freed KV block without a prefix hash is reused before cached ones.")
  String vllmVersion;

  /** {@code --vllm-version}, parsed by {@link #validate}. */
  private io.blis.engine.cluster.VllmVersion version;

  /**
   * The engine's host time per step when the flags name a vLLM release or turn async scheduling off
   * (the release's generation in the bundled host-times table, {@link io.blis.engine.host.HostTimes};
   * the fitted release's when only async scheduling is off), else none: the bundled coefficients
   * already hold what the fitted release's asynchronous engine shows.
   */
  io.blis.engine.cluster.StepDecorator hostDecorator() {
    io.blis.engine.host.HostTime host = hostTime();
    return host == null ? null : (m, tp, async) -> new io.blis.engine.host.HostBoundModel(m, host, tp, 1, async);
  }

  /** The host time {@link #hostDecorator} adds, or null. */
  io.blis.engine.host.HostTime hostTime() {
    if (version == null && asyncScheduling) {
      return null;
    }
    io.blis.engine.cluster.VllmVersion v = version != null ? version : io.blis.engine.cluster.VllmVersion.FITTED;
    return io.blis.engine.host.HostTimes.bundled().of(v, v.v1ByDefault()).time();
  }

  @Option(names = "--output-format", paramLabel = "blis|go-blis",
      description = "blis: the nested result JSON (default); go-blis: Go BLIS's flat keys (completed_requests,"
          + " responses_per_sec, e2e_p99_ms, ...) with its wall-clock fields.")
  String outputFormat = "blis";

  @Option(names = "--horizon", paramLabel = "US",
      description = "Go BLIS: stop at this simulated time in microseconds (ticks); the same as --horizon-s in seconds.")
  Long horizonUs;

  @Option(names = "--scheduler", paramLabel = "NAME",
      description = "Scheduler provider: fcfs, priority-fcfs, sjf, ... (default: ${DEFAULT-VALUE}).")
  String scheduler = "fcfs";

  @Option(names = "--num-instances",
      description = "Identical serving instances behind the router; with a one-pool --policy-config, its size (default: ${DEFAULT-VALUE}).")
  int numInstances = 1;

  @Option(names = {"--routing-policy", "--router"}, paramLabel = "NAME",
      description = "Router provider: round-robin, least-loaded, weighted, prefix-affinity, always-busiest, ... (default: ${DEFAULT-VALUE}).")
  String routingPolicy = "round-robin";

  @Option(names = "--kv-cpu-blocks",
      description = "Blocks of a CPU KV tier (vLLM OffloadingConnector); 0 = none (default: ${DEFAULT-VALUE}).")
  long kvCpuBlocks = 0;

  @Option(names = "--kv-offloading-size-gib",
      description = "CPU KV tier size in GiB summed over TP ranks (vLLM --kv-offloading-size); overrides --kv-cpu-blocks.")
  Double kvOffloadingSizeGib;

  @Option(names = "--kv-offload-config", paramLabel = "FILE",
      description = "Go BLIS's KV offload file (kv_offload: cpu_bytes_to_use, secondary_tiers, ...): its CPU tier,"
          + " as --kv-offloading-size-gib, and file-system tiers behind it; ARC eviction is refused.")
  Path kvOffloadConfig;

  /** The offload configuration simulated (from --kv-offload-config or a trace header), or null. */
  private KvOffloadFile.Config offload;

  /**
   * Applies the {@code kv_offload} block of the TraceV2 header being replayed, as Go BLIS's replay
   * does: the header decides. A --kv-offload-config that differs from it, or CPU tier flags beside
   * it, are refused; so is a --kv-offload-config that would add a configuration to a simulated
   * trace recorded without one (an observed trace, mode {@code real}, takes one).
   *
   * @return whether the header had a block (which was applied)
   */
  boolean offloadFromTraceHeader(CommandLine cl, Path header) {
    KvOffloadFile.TraceOffload recorded = KvOffloadFile.fromTraceHeader(header, server.blockSize);
    if (recorded.config() == null) {
      require(cl, kvOffloadConfig == null || recorded.mode().equals("real"), "--kv-offload-config: the trace "
          + header + " was recorded without a kv_offload configuration (mode " + (recorded.mode().isEmpty() ? "not"
          + " given" : recorded.mode()) + "); a replay of a simulated trace keeps its configuration, only an observed"
          + " one (mode real) takes one");
      return false;
    }
    require(cl, kvOffloadConfig == null || offload.sameTiers(recorded.config()), "--kv-offload-config "
        + kvOffloadConfig + " differs from the kv_offload configuration the trace header " + header + " records; on"
        + " replay the header decides: leave the flag out or give the same configuration");
    require(cl, kvOffloadingSizeGib == null && !given("--kv-cpu-blocks"), "the trace header " + header + " records a"
        + " kv_offload configuration, which sizes the CPU KV tier; leave out --kv-offloading-size-gib and"
        + " --kv-cpu-blocks");
    offload = recorded.config();
    return true;
  }

  /**
   * The {@code kv_offload:} block a trace header records for this run (Go BLIS's {@code
   * run --trace-output}), or null when no offload configuration was given.
   */
  String offloadHeaderYaml(long seed) {
    if (offload == null) {
      return null;
    }
    Cluster.PoolDeployment first = clusterBuilder(seed, coefficients).deployments().get(0);
    return offload.headerYaml(io.blis.latency.catalog.ModelSizes.kvBytesPerTokenPerGpu(first.model(), first.tp())
        * server.blockSize);
  }

  @Option(names = "--kv-transfer-bandwidth", paramLabel = "BLOCKS_PER_US",
      description = "Go BLIS: CPU tier reloads at this many blocks per microsecond (instead of bytes at"
          + " --kv-transfer-bandwidth-gbps).")
  Double goKvTransferBlocksPerUs;

  @Option(names = "--kv-offload-threshold", paramLabel = "U",
      description = "Go BLIS: GPU KV use above which it offloads; here every computed prompt block is copied to the CPU"
          + " tier, as vLLM's OffloadingConnector does (noted when given).")
  Double kvOffloadThreshold;

  @Option(names = "--kv-transfer-bandwidth-gbps",
      description = "Host-to-GPU copy bandwidth per GPU for CPU-tier reloads, GB/s (default: ${DEFAULT-VALUE}).")
  double kvTransferBandwidthGbps = KvOffload.DEFAULT_BANDWIDTH_GBPS;

  @Option(names = "--horizon-s", description = "Stop the simulation at this simulated time, seconds (default: none).")
  Double horizonS;

  @Option(names = "--results-path", paramLabel = "FILE",
      description = "Also write the result JSON to this file.")
  Path resultsPath;

  @Option(names = "--metrics-path", paramLabel = "FILE",
      description = "Go BLIS: also write the aggregate metrics in Go BLIS's keys (what --output-format go-blis prints) to"
          + " FILE; stdout is unchanged.")
  Path metricsPath;

  @Option(names = "--post-hoc-detector", paramLabel = "none|composite|threshold",
      description = "Go BLIS: add a saturation verdict of the run to the result (default: none).")
  String postHocDetector = "none";

  @Option(names = "--saturation-threshold-ms", paramLabel = "MS",
      description = "Go BLIS: mean E2E above which --post-hoc-detector threshold calls the run overloaded (default: 5000).")
  Double saturationThresholdMs;

  @Mixin DetectorOptions detectorOptions = new DetectorOptions();

  /** The saturation verdict of the last simulation (with --post-hoc-detector), or null. */
  private com.fasterxml.jackson.databind.node.ObjectNode saturation;

  @Option(names = "--per-request", description = "Include one record per request in the result.")
  boolean perRequest;

  /** Whether the run keeps per-request records for a file (not shown in the result without --per-request). */
  boolean keepRecords;

  @Option(names = "--streaming-metrics",
      description = "Percentiles from an HdrHistogram (3 significant digits) instead of exact ones. Not needed for"
          + " memory: exact percentiles count repeating values (kept for compatibility).")
  boolean streamingMetrics;

  @Mixin ClusterOptions cluster;

  @Mixin AutoscaleOptions autoscale;

  @Mixin DisaggregationOptions disaggregation;

  @Mixin LoraOptions lora;

  @Mixin SpeculativeOptions speculative;

  @Option(names = "--max-backlog", paramLabel = "N",
      description = "Stop with an error when more than N requests are in the simulation at once (arrived, not yet"
          + " finished), as when requests arrive faster than the deployment serves them; each holds its prompt,"
          + " about 4 bytes a token (default: as many as fit in 75%% of the Java heap beside the instances, 2,500"
          + " bytes each, from 1,000 to 1,000,000: 644,000 with -Xmx2g, 1,000,000 from 4 GiB).")
  Long maxBacklog;

  @Option(names = "--otel-out", paramLabel = "FILE",
      description = "Write the run as vLLM's OpenTelemetry journey and step traces (OTLP JSON lines; gzip when FILE ends in .gz).")
  Path otelOut;

  @Option(names = "--otel-step-sample-rate",
      description = "With --otel-out: fraction of steps traced, as vLLM's --step-tracing-sample-rate (default: ${DEFAULT-VALUE}).")
  double otelStepSampleRate = 1.0;

  @Option(names = "--otel-journey-sample-rate",
      description = "With --otel-out: fraction of requests whose journey spans are written, as vLLM's --journey-tracing-sample-rate (default: ${DEFAULT-VALUE}).")
  double otelJourneySampleRate = 1.0;

  @Option(names = "--otel-request-snapshots",
      description = "With --otel-out: also write one step.REQUEST_SNAPSHOT per request of each traced step.")
  boolean otelRequestSnapshots;

  /** The parsed command line, to tell flags given explicitly from defaults. */
  private CommandLine.ParseResult parsed;

  /** Checks the flag values; a bad one is a {@link CommandLine.ParameterException} of {@code cl}. */
  void validate(CommandLine cl) {
    parsed = cl.getParseResult();
    server.validate(cl);
    cluster.validate(cl);
    autoscale.validate(cl, cluster.goAutoscaling());
    disaggregation.validate(cl, cluster.bundle());
    lora.validate(cl);
    require(cl, cluster.loraScorerWeight == null || loraSpec() != null, "--lora-scorer-weight has no effect with LoRA"
        + " off (its lora-affinity scorer sends requests where their adapter is held): give --enable-lora, --max-loras"
        + " or --lora-config, or leave it out");
    speculative.validate(cl);
    if (autoscale.enabled()) {
      require(cl, cluster.traceLevel.equals("none"),
          "--trace-level decisions does not apply to an autoscaled pool (its candidates come and go)");
    }
    if (autoscale.enabled() && !scalesPools()) { // a bundle's pools, or the prefill and decode ones, one by one
      int max = autoscale.maxReplicas(numInstances, server.tp);
      require(cl, autoscale.minReplicas >= 1 && autoscale.minReplicas <= numInstances && numInstances <= max
              && max <= Cluster.MAX_INSTANCES,
          "autoscaling needs 1 <= --min-replicas <= --num-instances (the replicas ready at the start) <= --max-replicas <= "
              + Cluster.MAX_INSTANCES + ", got " + autoscale.minReplicas + ", " + numInstances + " and " + max);
    }
    require(cl, otelStepSampleRate > 0 && otelStepSampleRate <= 1,
        "--otel-step-sample-rate must be in (0, 1], got " + otelStepSampleRate);
    require(cl, otelJourneySampleRate >= 0 && otelJourneySampleRate <= 1,
        "--otel-journey-sample-rate must be in [0, 1], got " + otelJourneySampleRate);
    require(cl, otelOut != null || (!given("--otel-step-sample-rate")
            && !given("--otel-journey-sample-rate") && !otelRequestSnapshots),
        "--otel-step-sample-rate, --otel-journey-sample-rate and --otel-request-snapshots need --otel-out");
    require(cl, numInstances >= 1 && numInstances <= Cluster.MAX_INSTANCES, "--num-instances must be between 1 and "
        + Cluster.MAX_INSTANCES + " (the cluster limit), got " + numInstances);
    require(cl, longPrefillTokenThreshold >= 0, "--long-prefill-token-threshold must be >= 0, got " + longPrefillTokenThreshold);
    require(cl, kvCpuBlocks >= 0, "--kv-cpu-blocks must be >= 0, got " + kvCpuBlocks);
    if (kvOffloadConfig != null) {
      require(cl, kvOffloadingSizeGib == null && !given("--kv-cpu-blocks"), "--kv-offload-config sizes the CPU KV tier;"
          + " give it, --kv-offloading-size-gib or --kv-cpu-blocks, one of them");
      Cli.requireFile("--kv-offload-config", kvOffloadConfig);
      offload = KvOffloadFile.read(kvOffloadConfig, server.blockSize);
      for (String notice : offload.notices()) { // "warning: ..." or "note: ...", one line each
        cl.getErr().println(BlisCli.oneLine(notice));
      }
      cl.getErr().flush();
      if (!offload.promptOnly()) {
        Cli.printNotes(cl, java.util.List.of(kvOffloadConfig + ": offload_prompt_only: false: full blocks of generated"
            + " tokens are offloaded too (they take CPU-tier slots and tier writes), but no later request reloads them:"
            + " a simulated request's generated token ids are not known, so no later prompt matches them (Go BLIS"
            + " reloads them for a later prompt that holds those tokens)"));
      }
    }
    require(cl, kvOffloadingSizeGib == null || (kvOffloadingSizeGib >= 0 && Double.isFinite(kvOffloadingSizeGib)),
        "--kv-offloading-size-gib must be >= 0, got " + kvOffloadingSizeGib);
    require(cl, goKvTransferBlocksPerUs == null || (goKvTransferBlocksPerUs > 0 && Double.isFinite(goKvTransferBlocksPerUs)),
        "--kv-transfer-bandwidth must be a number of blocks per microsecond > 0, got " + goKvTransferBlocksPerUs);
    require(cl, kvOffloadThreshold == null || (kvOffloadThreshold >= 0 && kvOffloadThreshold <= 1),
        "--kv-offload-threshold must be in [0, 1], got " + kvOffloadThreshold);
    if (kvOffloadThreshold != null) {
      Cli.printNotes(cl, java.util.List.of("--kv-offload-threshold " + kvOffloadThreshold + ": every computed prompt block is"
          + " copied to the CPU tier, as vLLM's OffloadingConnector does, whatever the GPU's KV use (Go BLIS offloads"
          + " above the threshold)"));
    }
    require(cl, kvTransferBandwidthGbps > 0 && Double.isFinite(kvTransferBandwidthGbps),
        "--kv-transfer-bandwidth-gbps must be positive, got " + kvTransferBandwidthGbps);
    if (vllmVersion != null) {
      try {
        version = io.blis.engine.cluster.VllmVersion.parse(vllmVersion);
      } catch (IllegalArgumentException e) {
        throw new CommandLine.ParameterException(cl, "--vllm-version: " + e.getMessage());
      }
      if (!given("--async-scheduling") && !given("--no-async-scheduling")) {
        asyncScheduling = version.asyncSchedulingByDefault();
      }
      if (!version.v1ByDefault()) {
        asyncScheduling = false; // vLLM's first engine (V0, before 0.8) never schedules ahead
      }
    }
    require(cl, outputFormat.equals("blis") || outputFormat.equals("go-blis"),
        "--output-format must be blis or go-blis, got '" + outputFormat + "'");
    require(cl, horizonUs == null || horizonS == null, "give --horizon (microseconds) or --horizon-s, not both");
    if (horizonUs != null && horizonUs != Long.MAX_VALUE) { // Go BLIS's default, MaxInt64, means no horizon
      require(cl, horizonUs >= 0 && horizonUs <= Simulation.MAX_SIMULATED_TIME_US, "--horizon must be between 0 and "
          + Simulation.MAX_SIMULATED_TIME_US + " us (365 days, the simulated-time limit), got " + horizonUs);
    }
    require(cl, horizonS == null || (horizonS >= 0 && horizonS <= MAX_HORIZON_S),
        "--horizon-s must be between 0 and " + MAX_HORIZON_S + " (365 days, the simulated-time limit), got "
            + horizonS);
    require(cl, maxBacklog == null || maxBacklog >= 1, "--max-backlog must be at least 1 request, got " + maxBacklog);
    if (resultsPath != null) {
      Cli.requireWritable("--results-path", resultsPath);
    }
    require(cl, PostHocSaturation.DETECTORS.contains(postHocDetector), "--post-hoc-detector must be one of "
        + String.join(", ", PostHocSaturation.DETECTORS) + ", got '" + postHocDetector + "'");
    detectorOptions.validate(cl);
    require(cl, !detectorOptions.enabled() || postHocDetector.equals("none"), "give --detectors or"
        + " --post-hoc-detector, not both (both write the result's saturation object)");
    require(cl, saturationThresholdMs == null || postHocDetector.equals("threshold"),
        "--saturation-threshold-ms goes with --post-hoc-detector threshold");
    require(cl, saturationThresholdMs == null || (saturationThresholdMs > 0 && Double.isFinite(saturationThresholdMs)),
        "--saturation-threshold-ms must be a number of milliseconds > 0, got " + saturationThresholdMs);
    if (metricsPath != null) {
      Cli.requireWritable("--metrics-path", metricsPath);
    }
    if (otelOut != null) {
      Cli.requireWritable("--otel-out", otelOut);
    }
  }

  /** Longest --horizon-s: the simulated-time limit, seconds. */
  static final long MAX_HORIZON_S = Simulation.MAX_SIMULATED_TIME_US / 1_000_000;

  static void require(CommandLine cl, boolean ok, String message) {
    if (!ok) {
      throw new CommandLine.ParameterException(cl, message);
    }
  }

  /**
   * Builds the cluster (pools from the flags and the policy bundle; latency models, schedulers
   * and policies by name) and simulates {@code source} on it to the end of the workload or the
   * horizon. Does not close the source.
   *
   * @param seed seed handed to the providers
   */
  SimulationResult simulate(RequestSource source, long seed) {
    started = java.time.Instant.now();
    try (io.blis.workload.ReadAheadSource ahead = io.blis.workload.ReadAheadSource.over(source)) {
      if (parsed == null) {
        return simulate(ahead, seed, coefficients, true);
      }
      CommandLine cl = parsed.commandSpec().commandLine();
      try (TerminalProgress progress = TerminalProgress.of("blis " + cl.getCommandName(), cl.getErr())) {
        return simulate(progress.counting(ahead, ""), seed, coefficients, true);
      }
    }
  }

  /** When the main simulation started (wall clock), for Go BLIS's output. */
  private java.time.Instant started = java.time.Instant.now();

  /**
   * As {@link #simulate(RequestSource, long)} with other coefficients (file or inline) and no
   * trace output: one member of a prediction-interval ensemble.
   */
  SimulationResult simulateWith(RequestSource source, long seed, String otherCoefficients) {
    return simulate(source, seed, otherCoefficients, false);
  }

  /**
   * Prints the result, with a {@code prediction_interval} when {@code ensemble} is not null: the
   * workload ({@code sources} opens it afresh) simulated once more per member, same seed.
   */
  void emit(CommandLine cl, SimulationResult result, io.blis.engine.validate.Ensemble ensemble, double level,
      java.util.function.Supplier<RequestSource> sources, long seed) {
    if (ensemble == null) {
      emit(cl, result);
      return;
    }
    var intervals = io.blis.engine.validate.SimulationIntervals.of(result, c -> {
      try (RequestSource again = sources.get()) {
        return simulateWith(again, seed, io.blis.latency.coeff.CoefficientFiles.toInline(c));
      }
    }, ensemble, distances(ensemble, seed), level);
    emit(cl, result, io.blis.engine.validate.SimulationIntervals.json(intervals, ensemble));
  }

  /**
   * How far the deployment the flags describe lies outside the ensemble's fit domain: the distances
   * of every pool, each reason once.
   */
  java.util.List<io.blis.engine.validate.Extrapolation> distances(io.blis.engine.validate.Ensemble ensemble,
      long seed) {
    java.util.LinkedHashMap<String, io.blis.engine.validate.Extrapolation> out = new java.util.LinkedHashMap<>();
    if (ensemble.domain() != null && (version != null || !asyncScheduling)) {
      io.blis.engine.cluster.VllmVersion v = version != null ? version : io.blis.engine.cluster.VllmVersion.FITTED;
      io.blis.engine.validate.RunDistances.engine(v, v.v1ByDefault(), asyncScheduling && v.v1ByDefault())
          .ifPresent(d -> out.put(d.reason(), d));
    }
    for (Cluster.PoolDeployment p : clusterBuilder(seed, coefficients).deployments()) {
      for (var d : ensemble.distances(p.model(), p.gpu(), p.layout())) {
        out.putIfAbsent(d.reason(), d);
      }
    }
    return java.util.List.copyOf(out.values());
  }

  /**
   * The deployment in one line: each pool's instances, model, GPU and TP, the router (when there is
   * more than one instance) and scheduler or the policy bundle, and the latency model.
   */
  String describe(long seed) {
    java.util.List<String> pools = new java.util.ArrayList<>();
    int instances = 0;
    for (Cluster.PoolDeployment p : clusterBuilder(seed, coefficients).deployments()) {
      instances += p.instances();
      pools.add(String.format(java.util.Locale.ROOT, "%s%d x %s on %s %s", p.pool().equals("default") ? "" : p.pool() + ": ",
          p.instances(), p.model().name(), p.gpu().name(), p.layout().toString().toUpperCase(java.util.Locale.ROOT)));
    }
    String policies = cluster.policyConfig != null ? ", policies from " + cluster.policyConfig
        : (instances > 1 ? ", router " + routingPolicy : "") + ", scheduler " + scheduler;
    return String.join("; ", pools) + policies + ", latency model " + latencyModel;
  }

  /**
   * The result's {@code saturation} object: the final labels of --detectors (writing
   * --saturation-report when {@code report}), or the --post-hoc-detector verdict.
   */
  private com.fasterxml.jackson.databind.node.ObjectNode saturation(PostHocSaturation post, boolean report) {
    if (!detectorOptions.enabled()) {
      return post.verdict();
    }
    return SaturationTrace.finalsNode(detectorOptions.finals(post.events(), report));
  }

  private PostHocSaturation postHoc(io.blis.engine.EngineListener next) {
    return new PostHocSaturation(postHocDetector, saturationThresholdMs == null ? 5000 : saturationThresholdMs, next);
  }

  /**
   * --max-backlog as given, else derived from this JVM's heap and the instances {@code b} builds
   * ({@link HeapBudget#defaultMaxBacklog}).
   */
  private long maxBacklog(Simulation.Builder b) {
    return maxBacklog != null ? maxBacklog
        : HeapBudget.defaultMaxBacklog(Runtime.getRuntime().maxMemory(), b.instanceFootprint().bytes());
  }

  /**
   * Refuses, naming {@code what}, a deployment of {@code instances} instances (of the single pool;
   * null for the flags' deployment) whose instances alone would not fit in this JVM's heap ({@link
   * HeapBudget#requireInstancesFit}): checked before any is built. For capacity's --max-instances.
   */
  void requireInstancesFit(long seed, Integer instances, String what) {
    HeapBudget.requireInstancesFit(what, builder(seed, coefficients, instances, false).instanceFootprint());
  }

  /** As {@link #requireInstancesFit(long, Integer, String)} for the flags' deployment, naming its flags. */
  void requireInstancesFit(long seed) {
    requireInstancesFit(seed, null, instanceFlags());
  }

  /** Whether --trace-level decisions records every admission and routing decision. */
  boolean decisionTrace() {
    return cluster.traceLevel.equals("decisions");
  }

  /** The instances of the deployment's pools as the flags and the policy bundle give them. */
  long instances(long seed) {
    return clusterBuilder(seed, coefficients).deployments().stream().mapToLong(Cluster.PoolDeployment::instances).sum();
  }

  /** The flags that set how many instances the deployment has and how large, for messages. */
  private String instanceFlags() {
    java.util.List<String> flags = new java.util.ArrayList<>();
    if (given("--num-instances")) {
      flags.add("--num-instances " + numInstances);
    }
    if (given("--total-kv-blocks")) {
      flags.add("--total-kv-blocks " + server.totalKvBlocks);
    }
    if (given("--max-replicas")) {
      flags.add("--max-replicas " + autoscale.maxReplicas);
    }
    if (cluster.policyConfig != null) {
      flags.add("--policy-config " + cluster.policyConfig);
    }
    return flags.isEmpty() ? "the deployment" : String.join(" with ", flags);
  }

  /** The LoRA settings in effect: the flags', else the policy bundle's {@code lora:} section; null for none. */
  io.blis.engine.lora.LoraSpec loraSpec() {
    return lora.spec() != null ? lora.spec() : cluster.bundle().lora();
  }

  /** The latency model the flags select. */
  String latencyModel() {
    return latencyModel;
  }

  private SimulationResult simulate(RequestSource source, long seed, String coefficients, boolean traced) {
    Simulation.Builder b = builder(seed, coefficients);
    b.source(source).recordRequests(perRequest || keepRecords).streamingMetrics(streamingMetrics).maxBacklog(maxBacklog(b))
        .breakdownInterTokenSamples(outputFormat.equals("go-blis"));
    saturation = null;
    if (otelOut == null || !traced) {
      if (postHocDetector.equals("none") && !detectorOptions.enabled()) {
        return b.build().run();
      }
      PostHocSaturation post = postHoc(null);
      SimulationResult r = b.listener(post).build().run();
      saturation = saturation(post, traced);
      return r;
    }
    // written to a temporary file beside FILE and moved into place when the run is complete
    Path tmp = io.blis.engine.result.OutputFiles.temporary(Cli.parentsCreated("--otel-out", otelOut));
    SimulationResult result;
    try (OtlpTraceWriter w = new OtlpTraceWriter(tmp, otelOut.getFileName().toString().endsWith(".gz"),
        otelStepSampleRate, otelJourneySampleRate, otelRequestSnapshots, seed)) {
      PostHocSaturation post = postHocDetector.equals("none") && !detectorOptions.enabled() ? null : postHoc(w);
      result = b.listener(post != null ? post : w).build().run();
      saturation = post == null ? null : saturation(post, traced);
    } catch (java.io.UncheckedIOException e) {
      io.blis.engine.result.OutputFiles.discard(tmp);
      // name the file the user gave, not the temporary one beside it
      java.io.IOException cause = e.getCause();
      throw new java.io.UncheckedIOException("--otel-out " + otelOut + ": cannot write the trace: "
          + String.valueOf(cause.getMessage()).replace(tmp.toString(), otelOut.toString()), cause);
    } catch (RuntimeException e) {
      io.blis.engine.result.OutputFiles.discard(tmp);
      throw e;
    }
    Cli.commit("--otel-out", tmp, otelOut);
    return result;
  }

  /**
   * The simulation the flags describe, without a workload: the cluster (pools from the flags and
   * the policy bundle; latency models, schedulers and policies by name), the bundle's analysis
   * settings and the horizon.
   *
   * @param seed seed handed to the providers
   */
  Simulation.Builder builder(long seed) {
    return builder(seed, coefficients);
  }

  /** The smallest vocabulary size of the deployment's models (the ids every pool accepts). */
  int vocabSize(long seed) {
    int min = Integer.MAX_VALUE;
    for (Cluster.PoolDeployment p : clusterBuilder(seed, coefficients).deployments()) {
      min = Math.min(min, p.model().vocabSize());
    }
    return min == Integer.MAX_VALUE ? 0 : min;
  }

  /** The catalog names of the models the deployment's pools serve, each once, in pool order. */
  java.util.List<String> servedModels(long seed) {
    return clusterBuilder(seed, coefficients).deployments().stream().map(p -> p.model().name()).distinct().toList();
  }

  /** Whether --per-request was given. */
  boolean perRequest() {
    return perRequest;
  }

  private Simulation.Builder builder(long seed, String coefficients) {
    return builder(seed, coefficients, null);
  }

  /**
   * As {@link #builder(long)} with other coefficients (file or inline; null for the flags') and,
   * when {@code instances} is not null, that many instances of the (single) pool: the deployments
   * a capacity search varies.
   */
  Simulation.Builder builder(long seed, String coefficients, Integer instances) {
    return builder(seed, coefficients, instances, instances == null);
  }

  /**
   * As {@link #builder(long, String, Integer)}; with {@code checkHeap}, refuses instances that would
   * not fit in the heap, naming the flags that set them ({@link HeapBudget#requireInstancesFit}).
   */
  private Simulation.Builder builder(long seed, String coefficients, Integer instances, boolean checkHeap) {
    PolicyBundle bundle = cluster.bundle();
    Cluster.Builder cb = clusterBuilder(seed, coefficients == null ? this.coefficients : coefficients);
    if (instances != null) {
      cb.instances(instances);
    }
    Simulation.Builder b;
    try {
      b = cb.toSimulation();
    } catch (IllegalArgumentException e) {
      if (bundle.pools().isEmpty() || e.getMessage() == null || !e.getMessage().startsWith("pool '")) {
        throw e;
      }
      throw new IllegalArgumentException("--policy-config " + cluster.policyConfig + ": " + e.getMessage(), e);
    }
    if (checkHeap) {
      HeapBudget.requireInstancesFit(instanceFlags(), b.instanceFootprint());
    }
    cluster.applyAnalysis(b);
    if (horizonUs != null && horizonUs != Long.MAX_VALUE) {
      b.horizonUs(horizonUs);
    } else if (horizonS != null) {
      b.horizonUs((long) Math.floor(horizonS * 1e6));
    }
    return b;
  }

  /** The cluster the flags and the policy bundle describe. */
  private Cluster.Builder clusterBuilder(long seed, String coefficients) {
    PolicyBundle bundle = cluster.bundle();
    Cluster.Builder cb = Cluster.builder()
        .defaults(new PoolSpec("default", numInstances, server.model, server.gpu, server.tp, latencyModel,
            coefficients, server.maxNumSeqs, server.maxNumBatchedTokens, longPrefillTokenThreshold,
            server.maxModelLen, server.blockSize, server.totalKvBlocks, server.gpuMemoryUtilization,
            server.pp, server.dp, server.ep()))
        .overrides(explicitPoolFlags(coefficients))
        .bundle(bundle).options(options).asyncScheduling(asyncScheduling).stepDecorator(hostDecorator())
        .freshBlocksFirst(version != null && version.freesFreshBlocksFirst())
        .cpuKvTier(kvCpuBlocks, offload != null ? Double.valueOf(offload.cpuBytes() / (1L << 30)) : kvOffloadingSizeGib,
            kvTransferBandwidthGbps)
        .cpuLoadUsPerBlock(goKvTransferBlocksPerUs == null ? null : 1 / goKvTransferBlocksPerUs)
        .kvOffloadTiers(offload == null ? java.util.List.of() : offload.tiers(), offload != null && !offload.promptOnly())
        .seed(seed);
    if (given("--num-instances")) {
      cb.instances(numInstances);
    }
    cluster.apply(cb, bundle, routingPolicy, given("--routing-policy"), scheduler,
        given("--scheduler"));
    if (autoscale.enabled() && !scalesPools()) {
      autoscale.apply(cb, numInstances, server.tp, server.model, server.gpu);
    } else if (autoscale.enabled()) {
      autoscale.applyToPools(cb);
    }
    disaggregation.apply(cb);
    lora.apply(cb);
    speculative.apply(cb);
    return cb;
  }

  /** Whether autoscaling scales several pools, each on its own: a policy bundle's, or the prefill and decode split. */
  private boolean scalesPools() {
    return !cluster.bundle().pools().isEmpty() || disaggregation.splits();
  }

  /** The pool fields given explicitly as flags; they win over the policy bundle's pools. */
  private PoolSpec explicitPoolFlags(String coefficients) {
    return new PoolSpec("flags", 1,
        parsed != null && ServerOptions.modelGiven(parsed) ? server.model : null,
        parsed != null && ServerOptions.gpuGiven(parsed) ? server.gpu : null,
        given("--tp") ? server.tp : null, given("--latency-model") ? latencyModel : null, coefficients,
        given("--max-num-seqs") ? server.maxNumSeqs : null,
        given("--max-num-batched-tokens") ? server.maxNumBatchedTokens : null,
        given("--long-prefill-token-threshold") ? longPrefillTokenThreshold : null, server.maxModelLen,
        given("--block-size") ? server.blockSize : null, server.totalKvBlocks,
        given("--gpu-memory-utilization") ? server.gpuMemoryUtilization : null,
        given("--pp") ? server.pp : null, given("--dp") ? server.dp : null,
        given("--ep") || given("--enable-expert-parallel") ? server.ep() : null);
  }

  private boolean given(String flag) {
    return parsed != null && parsed.hasMatchedOption(flag);
  }

  /** Prints the result JSON to the command's stdout and writes it to {@code --results-path}. */
  void emit(CommandLine cl, SimulationResult result) {
    emit(cl, result, null);
  }

  /**
   * As {@link #emit(CommandLine, SimulationResult)}, with a {@code prediction_interval} object
   * appended to the result JSON when {@code interval} is not null (the rest stays byte for byte).
   */
  void emit(CommandLine cl, SimulationResult result, com.fasterxml.jackson.databind.node.ObjectNode interval) {
    java.util.Map<String, com.fasterxml.jackson.databind.JsonNode> extra = new java.util.LinkedHashMap<>();
    if (version != null) {
      io.blis.engine.cluster.VllmVersion v = version;
      com.fasterxml.jackson.databind.node.ObjectNode n = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
      n.put("given", v.text());
      n.put("version", v.number());
      n.put("async_scheduling", asyncScheduling);
      extra.put("vllm_version", n);
    }
    if (interval != null) {
      extra.put("prediction_interval", interval);
    }
    if (saturation != null) {
      extra.put("saturation", saturation);
    }
    if (metricsPath != null) { // first: a failed write prints no result
      String metrics = io.blis.engine.result.GoBlisResult.toJson(result, started, java.time.Instant.now(), extra);
      Cli.write("--metrics-path", metricsPath, metrics);
    }
    StringBuilder tail = new StringBuilder(); // each field as Cli.field writes it
    extra.forEach((k, v) -> tail.append(",\n").append(Cli.field(k, v)));
    if (outputFormat.equals("go-blis")) {
      String json = io.blis.engine.result.GoBlisResult.toJson(result, started, java.time.Instant.now(), extra);
      if (resultsPath != null && !io.blis.engine.result.OutputFiles.isStdout(resultsPath)) {
        Cli.write("--results-path", resultsPath, json); // first: a failed write prints no result
      }
      cl.getOut().print(GoBlisOutput.render(result, json, cluster.summarizeTrace));
    } else {
      // streamed: a result with a million per-request records or routing decisions is never one
      // string; with --results-path the file is written (atomically) first, then copied to stdout
      if (resultsPath != null && !io.blis.engine.result.OutputFiles.isStdout(resultsPath)) {
        boolean inPlace = io.blis.engine.result.OutputFiles.inPlace(resultsPath);
        // read back from what this run wrote, not from the path, which another run may have replaced since
        Cli.writeStreamed("--results-path", resultsPath, w -> result.writeJson(w, tail.toString()),
            inPlace ? null : cl.getOut());
        if (inPlace) {
          result.writeJson(cl.getOut(), tail.toString()); // a device or FIFO cannot be read back
        }
      } else {
        result.writeJson(cl.getOut(), tail.toString()); // "-": standard output, once
      }
    }
    cl.getOut().flush();
    if (outputFormat.equals("go-blis")) {
      return; // the fitness and the trace summary are on stdout, as Go BLIS prints them
    }
    result.fitness().ifPresent(f -> cl.getErr().printf(java.util.Locale.ROOT, "fitness: %.6f%n", f.score()));
    if (cluster.summarizeTrace) {
      cl.getErr().print(result.cluster().traceSummary());
    }
  }
}
