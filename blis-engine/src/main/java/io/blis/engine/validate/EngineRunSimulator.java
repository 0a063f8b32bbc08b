package io.blis.engine.validate;

import io.blis.api.Coefficients;
import io.blis.api.HardwareSpec;
import io.blis.api.LatencyModel;
import io.blis.api.LatencyModelProvider;
import io.blis.api.ModelSpec;
import io.blis.api.Providers;
import io.blis.engine.Context;
import io.blis.engine.Deployment;
import io.blis.engine.EngineLimits;
import io.blis.engine.InstancePool;
import io.blis.engine.KvOffload;
import io.blis.engine.result.RequestRecord;
import io.blis.engine.Simulation;
import io.blis.engine.result.SimulationResult;
import io.blis.latency.catalog.GpuCatalog;
import io.blis.latency.catalog.ModelCatalog;
import io.blis.latency.catalog.ModelSizes;
import io.blis.latency.kv.KvCapacity;
import io.blis.workload.RequestOutcome;
import io.blis.workload.RequestSource;
import io.blis.workload.inferenceperf.InferencePerfWorkload;
import io.blis.workload.trace.GroundTruthTrace;
import io.blis.workload.trace.TraceReader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Simulates experiments with the BLIS engine: the experiment's model config and GPU from the
 * catalogs of blis-latency, its vLLM limits, its recorded GPU KV blocks (or the capacity computed
 * from the memory budget when none were recorded), the latency model chosen by name, and its
 * inference-perf workload, replayed from the per-request trace (real send times and prompt
 * lengths) or regenerated from the profile alone. Every request generates exactly the
 * configured output length; a request unanswered after the client timeout fails.
 */
public final class EngineRunSimulator implements RunSimulator {

  /** How the workload is driven. */
  public enum Mode {
    /**
     * Real arrival times and input lengths from the per-request trace; an experiment without a
     * trace (summary-only runs) is regenerated from its workload definition instead.
     */
    REPLAY,
    /** Requests regenerated from the workload definition (seeded). */
    SYNTHETIC;

    /** Parses {@code replay} or {@code synthetic}. */
    public static Mode parse(String s) {
      return switch (s.toLowerCase(Locale.ROOT)) {
        case "replay" -> REPLAY;
        case "synthetic" -> SYNTHETIC;
        default -> throw new IllegalArgumentException(
            "--mode: expected replay or synthetic, got '" + s + "'");
      };
    }
  }

  private final Mode mode;
  private final LatencyModelProvider provider;
  private final long seed;
  private final Map<String, ModelSpec> models = new ConcurrentHashMap<>();
  private final Map<String, List<RequestRecord>> traces = new ConcurrentHashMap<>();

  /**
   * @param mode replay or synthetic workload
   * @param latencyModel name of the latency model provider (e.g. {@code trained-physics})
   * @param seed seed of the workload generator and of the plugins
   */
  public EngineRunSimulator(Mode mode, String latencyModel, long seed) {
    this.mode = mode;
    this.provider = Providers.select(LatencyModelProvider.class, latencyModel);
    this.seed = seed;
  }

  @Override
  public RunSummary simulate(Experiment e, Coefficients coefficients, int requestedPerStage) {
    int maxRequestsPerStage = comparedPerStage(e, requestedPerStage);
    ModelSpec model = model(e);
    HardwareSpec gpu = gpu(e);
    io.blis.latency.layout.Layout layout = e.layout();
    layout.check(model);
    long blocks = e.hasRecordedKvBlocks()
        ? e.kvBlocksGpu()
        : KvCapacity.totalBlocks(model, gpu, layout, e.gpuMemoryUtilization(), e.blockSizeTokens());
    EngineLimits limits = e.limits();
    Deployment deployment = new Deployment(layout.tp(), e.blockSizeTokens(), limits.maxNumSeqs(),
        limits.maxNumBatchedTokens(), limits.maxModelLen(), blocks, e.gpuMemoryUtilization(), layout.pp(),
        layout.dp(), layout.ep());
    Context context = new Context(model, gpu, deployment, coefficients, Map.of(), seed);
    LatencyModel latency = provider.create(context);
    RequestSource source;
    if (e.workloadTrace().isPresent() && (mode == Mode.REPLAY || e.profile() == null)) {
      source = TraceReader.open(e.workloadTrace().get());
    } else {
      source = switch (mode) {
        case REPLAY -> e.trace().isPresent()
            ? InferencePerfWorkload.replay(e.profile(), trace(e), seed)
            : InferencePerfWorkload.synthetic(e.profile(), seed);
        case SYNTHETIC -> InferencePerfWorkload.synthetic(e.profile(), seed);
      };
    }
    if (maxRequestsPerStage > 0) {
      source = new FirstPerStageSource(source, maxRequestsPerStage);
    }
    try (RequestSource s = source) {
      long cpuBlocks = 0;
      double loadUs = 0;
      if (e.cpuOffloadBytes() > 0) {
        // vLLM OffloadingConnector with cpu_bytes_to_use summed over the TP ranks
        long blockBytesPerGpu = ModelSizes.kvBytesPerTokenPerGpu(model, e.tp()) * e.blockSizeTokens();
        cpuBlocks = KvOffload.cpuBlocks(e.cpuOffloadBytes(), blockBytesPerGpu, e.tp());
        if (cpuBlocks > 0) {
          loadUs = KvOffload.loadUsPerBlock(blockBytesPerGpu, KvOffload.DEFAULT_BANDWIDTH_GBPS);
        }
      }
      // one instance; each further rank (data-parallel, pipeline batch) gets its own latency model
      Simulation.Builder b = Simulation.builder()
          .addPool(new InstancePool("", 1, i -> i == 0 ? latency : provider.create(context), limits, blocks,
              e.blockSizeTokens(), cpuBlocks, loadUs, layout.dp(), layout.pp(), model.isMoe()))
          .source(s)
          .recordRequests(true);
      SimulationResult result = b.build().run();
      return RunStatsCalculator.summarizeFirst(result.requests(), maxRequestsPerStage, e.outputLen());
    }
  }

  @Override
  public RunSummary observed(Experiment e, int requestedPerStage) {
    int maxRequestsPerStage = comparedPerStage(e, requestedPerStage);
    if (e.trace().isEmpty()) {
      return e.observed();
    }
    List<RequestRecord> records = traces.computeIfAbsent(e.id(), id -> observedRecords(e));
    if (maxRequestsPerStage == 0) {
      // the recorded summary (inference-perf's own numbers) with the trace's latency profile
      return e.observed().withProfile(LatencyProfile.of(records));
    }
    return RunStatsCalculator.summarizeFirst(records, maxRequestsPerStage, e.outputLen());
  }

  /**
   * Requests per stage compared for {@code e}: the requested prefix when the experiment has a
   * per-request trace, else 0 (whole run), because only a trace gives the observed statistics of
   * a prefix.
   */
  static int comparedPerStage(Experiment e, int requestedPerStage) {
    return e.trace().isPresent() ? requestedPerStage : 0;
  }

  /** The client's per-request observations as records (ms converted to microseconds). */
  static List<RequestRecord> observedRecords(Experiment e) {
    List<RequestRecord> out = new ArrayList<>();
    for (GroundTruthTrace.Row r : GroundTruthTrace.read(trace(e))) {
      long arrivalUs = Math.round(r.arrivalMs() * 1000);
      long e2eUs = Math.round(r.e2eMs() * 1000);
      out.add(new RequestRecord(r.req(), r.stage(), arrivalUs, Math.max(0, r.inputTokens()),
          r.ok() ? (e.outputLen() > 0 ? e.outputLen() : Math.max(0, r.outputTokensClient())) : 0,
          r.ok() ? RequestOutcome.COMPLETED : RequestOutcome.TIMED_OUT,
          r.ok() ? Math.round(r.ttftMs() * 1000) : -1, e2eUs, -1, 0, 0, ""));
    }
    return out;
  }

  private static Path trace(Experiment e) {
    return e.trace().orElseThrow(() -> new IllegalArgumentException(
        "experiment '" + e.id() + "': replay and subsampled calibration need 'per_request_trace'"));
  }

  private ModelSpec model(Experiment e) {
    return models.computeIfAbsent(e.modelKey(), p -> loadModel(e));
  }

  /** The experiment's model from its {@code config.json}; errors name the experiment. */
  public static ModelSpec loadModel(Experiment e) {
    try {
      return e.modelConfig() == null ? ModelCatalog.byName(e.model())
          : ModelCatalog.fromFile(e.modelConfig(), e.model());
    } catch (IllegalArgumentException ex) {
      throw new IllegalArgumentException("experiment '" + e.id() + "': model_config: " + ex.getMessage(), ex);
    }
  }

  /** The GPU of an experiment ({@link Experiment#gpu} is a reference the catalog resolves). */
  public static HardwareSpec gpu(Experiment e) {
    try {
      return GpuCatalog.resolve(e.gpu());
    } catch (IllegalArgumentException unknown) {
      throw new IllegalArgumentException("experiment '" + e.id() + "': " + unknown.getMessage(), unknown);
    }
  }
}
