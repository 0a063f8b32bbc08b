package io.blis.engine.corpus;

import io.blis.api.Coefficients;
import io.blis.api.HardwareSpec;
import io.blis.api.LatencyModel;
import io.blis.api.LatencyModelProvider;
import io.blis.api.ModelSpec;
import io.blis.api.Providers;
import io.blis.api.RequestView;
import io.blis.engine.Context;
import io.blis.engine.Deployment;
import io.blis.engine.EngineLimits;
import io.blis.engine.InstancePool;
import io.blis.engine.Simulation;
import io.blis.engine.host.HostTimes;
import io.blis.engine.result.RequestRecord;
import io.blis.engine.result.SimulationResult;
import io.blis.engine.validate.RunDistances;
import io.blis.latency.ForwardingLatencyModel;
import io.blis.latency.catalog.GpuCatalog;
import io.blis.latency.catalog.ModelCatalog;
import io.blis.latency.kv.KvCapacity;
import io.blis.latency.layout.Layout;
import io.blis.workload.RequestOutcome;
import io.blis.workload.RequestSource;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * Replays one corpus point: the deployment (model, GPU, parallelism, the vLLM release's default
 * limits unless the source states them, KV blocks from the memory budget), the benchmark's
 * requests ({@link PointWorkload}) and the benchmark's own statistics computed from the simulated
 * requests as the benchmark computes them from its own.
 *
 * <p>Offline benchmarks (latency, throughput) run vLLM's {@code LLM} class: no API server, so the
 * latency model's front-end time per request ({@code queueingTime}) is not charged. Every
 * benchmark script sends plain sampling (temperature 0, or 1 with top-p 1), so the latency model
 * is told so ({@code sampling=plain}); another client's sampling is the model's default ({@code
 * auto}).
 */
public final class CorpusReplay {

  /** Block size of every replay (vLLM's default). */
  static final int BLOCK_SIZE = 16;

  private final LatencyModelProvider provider;
  private final long seed;
  private final io.blis.engine.host.HostTimes host;
  private final io.blis.engine.frontend.ApiServer apiServer;

  /**
   * @param latencyModel the latency model's name
   * @param seed seed of the workloads
   * @param host the host time of each engine generation, or null to charge none
   * @param apiServer the API server's work in front of a served benchmark's engine
   */
  public CorpusReplay(String latencyModel, long seed, io.blis.engine.host.HostTimes host,
      io.blis.engine.frontend.ApiServer apiServer) {
    this.provider = Providers.select(LatencyModelProvider.class, latencyModel);
    this.seed = seed;
    this.host = host;
    this.apiServer = java.util.Objects.requireNonNull(apiServer, "apiServer");
  }

  /** As above with no API server work. */
  public CorpusReplay(String latencyModel, long seed, io.blis.engine.host.HostTimes host) {
    this(latencyModel, seed, host, io.blis.engine.frontend.ApiServer.NONE);
  }

  /** As above with the bundled host times. */
  public CorpusReplay(String latencyModel, long seed) {
    this(latencyModel, seed, HostTimes.bundled());
  }

  /** What a replay predicts of a point's published statistics, and of its run. */
  public record Predicted(Map<Measured, Double> values, double e2eMeanMs, double ttftMeanMs, double failedFraction,
      SimulationResult result) {

    /** Requests per engine step on average over the run ({@link io.blis.engine.validate.RunDistances#meanBatch}). */
    public double meanBatch() {
      return RunDistances.meanBatch(result);
    }
  }

  /** The deployment a point ran, resolved. */
  public record Setup(ModelSpec model, HardwareSpec gpu, Layout layout, EngineLimits limits, long kvBlocks) {}

  /** The model, GPU, layout, limits and KV blocks of {@code p}. */
  public static Setup setup(CorpusPoint p) {
    ModelSpec model = model(p);
    HardwareSpec gpu = GpuCatalog.resolve(p.gpu());
    Layout layout = new Layout(p.tp(), p.pp(), p.dp(), p.expertParallel() ? p.tp() * p.dp() : 1);
    try {
      layout.check(model);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(p.key() + ": " + e.getMessage(), e);
    }
    CorpusPoint.Server s = p.server();
    int maxLen = s.maxModelLen().orElse(model instanceof io.blis.latency.catalog.ModelConfig c
        && c.maxPositionEmbeddings() > 0 ? c.maxPositionEmbeddings() : 4096);
    boolean online = p.benchmark().online();
    int seqs = s.maxNumSeqs().orElse(VllmDefaults.maxNumSeqs(p.version(), p.v1(), gpu));
    int budget = s.maxNumBatchedTokens().orElse(
        VllmDefaults.maxNumBatchedTokens(p.version(), p.v1(), online, gpu, maxLen));
    boolean async = p.v1() && s.asyncScheduling().orElse(p.version().asyncSchedulingByDefault());
    EngineLimits limits = new EngineLimits(seqs, budget, 0, maxLen, async);
    double gmu = s.gpuMemoryUtilization().orElse(0.9);
    long blocks;
    try {
      blocks = KvCapacity.totalBlocks(model, gpu, layout, gmu, BLOCK_SIZE);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(p.key() + ": " + e.getMessage(), e);
    }
    return new Setup(model, gpu, layout, limits, blocks);
  }

  /** Simulates {@code p} with {@code coefficients} (empty: the latency model's defaults). */
  public Predicted simulate(CorpusPoint p, Coefficients coefficients) {
    return simulate(p, setup(p), coefficients);
  }

  /** As above, on the point's deployment already resolved ({@link #setup}). */
  public Predicted simulate(CorpusPoint p, Setup st, Coefficients coefficients) {
    Deployment deployment = new Deployment(st.layout().tp(), BLOCK_SIZE, st.limits().maxNumSeqs(),
        st.limits().maxNumBatchedTokens(), st.limits().maxModelLen(), st.kvBlocks(), 0.9, st.layout().pp(),
        st.layout().dp(), st.layout().ep());
    Map<String, String> options = p.benchmark() == Benchmark.CLIENT ? Map.of() : Map.of("sampling", "plain");
    Context context = new Context(st.model(), st.gpu(), deployment, coefficients, options, seed);
    boolean offline = !p.benchmark().online();
    io.blis.engine.host.HostTime hostTime = host == null ? io.blis.engine.host.HostTime.NONE
        : host.of(p.version(), p.v1()).time();
    int schedulerSteps = p.v1() ? 1 : p.server().numSchedulerSteps().orElse(1);
    java.util.function.IntFunction<LatencyModel> models = i -> {
      LatencyModel m = new io.blis.engine.host.HostBoundModel(provider.create(context), hostTime, st.layout().tp(),
          schedulerSteps, st.limits().asyncScheduling());
      return offline ? new Offline(m) : m;
    };
    boolean reuse = p.v1() && p.server().prefixCaching().orElse(true);
    try (RequestSource source = PointWorkload.of(p, reuse, seed)) {
      SimulationResult result = Simulation.builder()
          .addPool(new InstancePool("", 1, models, st.limits(), st.kvBlocks(), BLOCK_SIZE, 0, 0,
              st.layout().dp(), st.layout().pp(), st.model().isMoe(), io.blis.kvcache.OffloadTiers.NONE,
              // V1's hybrid KV-cache manager gives sliding-window layers their own blocks; V0 had none
              p.v1() ? InstancePool.residentBlocks(io.blis.latency.kv.HybridKv.of(st.model(), BLOCK_SIZE)) : io.blis.kvcache.ResidentBlocks.NONE))
          .source(source)
          .apiServer(offline ? io.blis.engine.frontend.ApiServer.NONE : apiServer)
          .freshBlocksFirst(p.version().freesFreshBlocksFirst())
          .recordRequests(true)
          .build()
          .run();
      return statistics(p, result);
    }
  }

  /** The point's statistics from the simulated requests. */
  static Predicted statistics(CorpusPoint p, SimulationResult result) {
    List<RequestRecord> all = result.requests();
    int measuredStage = p.benchmark() == Benchmark.LATENCY ? 1 : 0;
    List<RequestRecord> done = new ArrayList<>();
    long injected = 0;
    long start = Long.MAX_VALUE;
    long end = 0;
    for (RequestRecord r : all) {
      if (r.stage() != measuredStage) {
        continue;
      }
      injected++;
      start = Math.min(start, r.arrivalUs());
      if (r.outcome() == RequestOutcome.COMPLETED) {
        done.add(r);
        end = Math.max(end, r.arrivalUs() + r.e2eUs());
      }
    }
    Map<Measured, Double> v = new EnumMap<>(Measured.class);
    double failed = injected == 0 ? 1 : 1 - (double) done.size() / injected;
    if (done.isEmpty()) {
      return new Predicted(v, Double.NaN, Double.NaN, failed, result);
    }
    double durationS = (end - start) / 1e6;
    double[] e2e = done.stream().mapToDouble(r -> r.e2eUs() / 1000.0).toArray();
    double[] ttft = done.stream().mapToDouble(r -> r.ttftUs() / 1000.0).toArray();
    double[] tpot = done.stream().filter(r -> r.outputTokens() > 1)
        .mapToDouble(r -> (r.e2eUs() - r.ttftUs()) / 1000.0 / (r.outputTokens() - 1)).toArray();
    long in = done.stream().mapToLong(RequestRecord::inputTokens).sum();
    long out = done.stream().mapToLong(RequestRecord::outputTokens).sum();
    double decodeMs = done.stream().mapToDouble(r -> (r.e2eUs() - r.ttftUs()) / 1000.0).sum();
    long gaps = done.stream().mapToLong(r -> Math.max(0, r.outputTokens() - 1)).sum();
    for (Measured m : p.measured().keySet()) {
      double x = switch (m) {
        case BATCH_LATENCY_MS, BATCH_LATENCY_P50_MS, BATCH_LATENCY_P90_MS, BATCH_LATENCY_P99_MS ->
            durationS * 1000;
        case MEAN_E2EL_MS -> mean(e2e);
        case MEDIAN_E2EL_MS -> percentile(e2e, 50);
        case P99_E2EL_MS -> percentile(e2e, 99);
        case DURATION_S -> durationS;
        case REQUEST_THROUGHPUT -> done.size() / durationS;
        case OUTPUT_THROUGHPUT -> out / durationS;
        case TOTAL_TOKEN_THROUGHPUT -> (in + out) / durationS;
        case MEAN_TPOT_MS -> mean(tpot);
        case MEDIAN_TPOT_MS -> percentile(tpot, 50);
        case P99_TPOT_MS -> percentile(tpot, 99);
        case MEAN_ITL_MS -> gaps == 0 ? Double.NaN : decodeMs / gaps;
        case MEDIAN_ITL_MS -> result.overall().itl().p50Us() / 1000.0;
        case P99_ITL_MS -> result.overall().itl().p99Us() / 1000.0;
        case TOKENS_PER_S_PER_REQUEST -> p.benchmark() == Benchmark.LATENCY
            ? p.workload().outputTokens() / durationS
            : done.stream().mapToDouble(r -> r.outputTokens() / (r.e2eUs() / 1e6)).average().orElse(Double.NaN);
        case MEAN_TTFT_MS -> mean(ttft);
        case MEDIAN_TTFT_MS -> percentile(ttft, 50);
        case P99_TTFT_MS -> percentile(ttft, 99);
      };
      v.put(m, x);
    }
    return new Predicted(v, mean(e2e), mean(ttft), failed, result);
  }

  static double mean(double[] x) {
    return x.length == 0 ? Double.NaN : Arrays.stream(x).average().orElse(Double.NaN);
  }

  /** numpy's default percentile: linear interpolation between the closest ranks. */
  static double percentile(double[] x, double q) {
    if (x.length == 0) {
      return Double.NaN;
    }
    double[] s = x.clone();
    Arrays.sort(s);
    double pos = q / 100 * (s.length - 1);
    int lo = (int) Math.floor(pos);
    int hi = Math.min(s.length - 1, lo + 1);
    return s[lo] + (pos - lo) * (s[hi] - s[lo]);
  }

  static ModelSpec model(CorpusPoint p) {
    try {
      io.blis.latency.catalog.ModelConfig c = p.modelConfig() == null ? ModelCatalog.byName(p.model())
          : ModelCatalog.fromFile(p.modelConfig(), p.model());
      // the server's --kv-cache-dtype, as stated (an fp8 cache holds twice the tokens, decode reads half the bytes)
      return p.server().kvCacheDtype().map(c::withKvCacheDtype).orElse(c);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(p.key() + ": model: " + e.getMessage(), e);
    }
  }

  /** The offline engine: no API server between the benchmark and the engine. */
  private static final class Offline extends ForwardingLatencyModel {
    Offline(LatencyModel m) {
      super(m);
    }

    @Override
    public long queueingTime(RequestView request) {
      return 0;
    }
  }
}
