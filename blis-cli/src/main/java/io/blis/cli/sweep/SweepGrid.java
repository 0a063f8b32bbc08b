package io.blis.cli.sweep;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.blis.engine.capacity.CapacitySearch;
import io.blis.engine.capacity.RateWorkload;
import io.blis.engine.capacity.SloSet;
import io.blis.engine.cluster.Cluster;
import io.blis.engine.cluster.LoraFile;
import io.blis.engine.cluster.PolicySpec;
import io.blis.engine.cluster.PoolSpec;
import io.blis.engine.lora.LoraSpec;
import io.blis.api.Providers;
import io.blis.api.RouterProvider;
import io.blis.api.SchedulerProvider;
import io.blis.latency.catalog.GpuCatalog;
import io.blis.latency.catalog.ModelCatalog;
import io.blis.workload.StrictYaml;
import io.blis.workload.TextFiles;
import io.blis.workload.inferenceperf.InferencePerfProfiles;
import io.blis.workload.spec.WorkloadSpec;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * A sweep's question and its configurations: read from a grid file ({@link #load}) or built in
 * Java (the canonical constructor). The file format is documented in docs/capacity.md (Sweeps);
 * in short:
 *
 * <pre>
 * question: capacity                     # or: rates
 * slo: "ttft_p99=500ms,e2e_p99=20s"      # SloSet syntax; required for capacity, optional for rates
 * rates: [5, 10, 20]                     # question rates only: req/s
 * workload: {preset: chatbot, seed: 42}  # or {spec: F} / {inference_perf: F, seed: S} / {trace: F}
 * grid:                                  # cartesian product; an axis left out has blis run's default
 *   model: [llama-2-7b, llama-3.1-8b]
 *   gpu: [H100, A100-80GB]
 *   tp: [1, 2]
 *   pp: [1]                              # pipeline stages
 *   dp: [1]                              # data-parallel ranks
 *   expert_parallel: [false]             # vLLM --enable-expert-parallel (ep = tp x dp)
 *   replicas: [1]
 *   max_num_seqs: [256]
 *   max_num_batched_tokens: [2048]
 *   router: [round-robin]
 *   scheduler: [fcfs]
 *   max_loras: [1, 4]                    # LoRA GPU slots per instance (left out: no LoRA)
 * points:                                # more configurations, after the grid's
 *   - {model: llama-2-70b, gpu: H100, tp: 4}
 * search: {point_duration_s: 300, tolerance: 0.01, saturation: true}
 * deployment: {latency_model: trained-physics, coefficients: FILE, gpu_memory_utilization: 0.9}
 *                                        # also lora_config: FILE (LoRA on for every configuration)
 * pareto_latency: e2e_p99
 * </pre>
 *
 * @param source the grid's name in messages (its file)
 * @param question what each configuration is asked
 * @param slo the latency targets (required for {@link Question#CAPACITY}; for {@link
 *     Question#RATES} null or targets whose violations are reported)
 * @param rates the fixed rates of {@link Question#RATES}, req/s (empty for capacity)
 * @param workload the workload whose rate varies
 * @param workloadIdentity what identifies the workload for resuming: its kind, the digest of its
 *     file and its seed
 * @param deployment fields shared by every configuration
 * @param configs the configurations in grid order (grid product first, then explicit points)
 * @param settings how each load point is simulated and each search bracketed
 * @param saturation whether the capacity question also finds each saturation rate
 * @param paretoLatency the latency statistic of the Pareto frontier ({@code e2e_p99})
 * @param intervals how each capacity's interval is found, or null for none
 */
public record SweepGrid(String source, Question question, SloSet slo, List<Double> rates, RateWorkload workload,
    String workloadIdentity, Deployment deployment, List<SweepConfig> configs, CapacitySearch.Settings settings,
    boolean saturation, String paretoLatency, Intervals intervals) {

  /**
   * Each capacity's interval: the capacity search repeated with every member's coefficients of an
   * ensemble ({@link io.blis.engine.capacity.CapacityReport.RateInterval#of}).
   *
   * @param ensemble the ensemble (its latency model must be the deployment's)
   * @param identity what identifies it for resuming ({@code bundled}, or the file's digest)
   * @param level nominal coverage
   */
  public record Intervals(io.blis.engine.validate.Ensemble ensemble, String identity, double level) {
    public Intervals {
      Objects.requireNonNull(ensemble, "ensemble");
      Objects.requireNonNull(identity, "identity");
      if (!(level > 0 && level < 1)) {
        throw new IllegalArgumentException("interval level must be in (0, 1), got " + level);
      }
    }
  }

  /** What each configuration is asked. */
  public enum Question {
    /** The highest rate meeting the SLO, the saturation rate, and the metrics at the highest rate. */
    CAPACITY,
    /** The metrics at each of fixed rates. */
    RATES;

    /** As written in the grid file. */
    public String key() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  /**
   * Deployment fields shared by every configuration.
   *
   * @param latencyModel latency model provider
   * @param coefficients coefficient file (absolute) or inline list, or null for the bundled ones
   * @param gpuMemoryUtilization vLLM {@code --gpu-memory-utilization}
   * @param blockSize tokens per KV block
   * @param maxModelLen vLLM {@code --max-model-len}, or null for the model's (capped by the KV cache)
   * @param baseDir where model and GPU paths of the configurations are relative to
   * @param loraConfig the LoRA configuration file (absolute) that {@code lora} was read from, or null
   * @param lora the LoRA settings of a configuration with LoRA ({@link SweepConfig#maxLoras()} &gt;
   *     0), its slot count replaced by the configuration's; null for vLLM's defaults ({@link
   *     LoraSpec#of})
   */
  public record Deployment(String latencyModel, String coefficients, double gpuMemoryUtilization, int blockSize,
      Integer maxModelLen, Path baseDir, String loraConfig, LoraSpec lora) {

    /** {@code blis run}'s defaults; paths relative to the working directory. */
    public static Deployment defaults() {
      return new Deployment("trained-physics", null, 0.9, 16, null, Path.of(""));
    }

    /** Deployment fields without a LoRA configuration file (LoRA at vLLM's defaults where on). */
    public Deployment(String latencyModel, String coefficients, double gpuMemoryUtilization, int blockSize,
        Integer maxModelLen, Path baseDir) {
      this(latencyModel, coefficients, gpuMemoryUtilization, blockSize, maxModelLen, baseDir, null, null);
    }

    public Deployment {
      Objects.requireNonNull(latencyModel, "latencyModel");
      Objects.requireNonNull(baseDir, "baseDir");
      if ((loraConfig == null) != (lora == null)) {
        throw new IllegalArgumentException("give the LoRA configuration file together with the settings read from it");
      }
    }

    /**
     * The LoRA settings of a configuration: the file's with the configuration's slot count, or
     * vLLM's defaults for that many slots; null when the configuration has no LoRA.
     */
    public LoraSpec lora(SweepConfig c) {
      if (!c.lora()) {
        return null;
      }
      return lora != null ? lora.withMaxLoras(c.maxLoras()) : LoraSpec.of(c.maxLoras());
    }

    /**
     * The cluster of one configuration, as {@link Cluster#builder()} builds it: one pool of the
     * configuration's replicas (or of {@code instances} when a search asks for another count).
     * Every call resolves the model, GPU and KV cache afresh, so a factory may be used by one
     * thread while another thread uses another. The engine's summaries are streamed (HdrHistogram):
     * a capacity search measures the recorded requests only, which streaming leaves unchanged.
     */
    public CapacitySearch.DeploymentFactory factory(SweepConfig c) {
      PoolSpec pool = pool(c, coefficients);
      LoraSpec adapters = lora(c);
      return (instances, coeffs) -> {
        // other coefficients: an interval ensemble's members
        PoolSpec p = coeffs == null ? pool : pool(c, io.blis.latency.coeff.CoefficientFiles.toInline(coeffs));
        // the search measures the recorded requests; the engine's own summaries are not used, and
        // their exact percentiles (a sort of every sample) would cost most of the run
        Cluster.Builder b = Cluster.builder().defaults(p).instances(instances == 0 ? c.replicas() : instances)
            .router(new PolicySpec(c.router(), Map.of())).scheduler(c.scheduler());
        if (c.disaggregated() || !c.pdDecider().equals("never")) {
          PoolSpec none = PoolSpec.builder("none").build();
          if (c.disaggregated()) {
            int n = instances == 0 ? c.replicas() : instances;
            b.splitPools(c.prefillReplicas(), c.decodeReplicas(), n - c.prefillReplicas() - c.decodeReplicas(), none, none);
          }
          b.disaggregation(new io.blis.engine.cluster.PdSpec(c.pdDecider(), null, null, null, null, null, null));
        }
        if (adapters != null) {
          b.lora(adapters);
        }
        return b.toSimulation().streamingMetrics(true);
      };
    }

    /** The model, GPU and layout of one configuration, resolved from the catalogs or files. */
    public Cluster.PoolDeployment resolved(SweepConfig c) {
      Cluster.Builder b = Cluster.builder().defaults(pool(c, coefficients));
      LoraSpec adapters = lora(c);
      if (adapters != null) {
        b.lora(adapters);
      }
      return b.deployments().get(0);
    }

    private PoolSpec pool(SweepConfig c, String coeffs) {
      return new PoolSpec("default", c.replicas(), resolve(c.model()), resolve(c.gpu()), c.tp(), latencyModel, coeffs,
          c.maxNumSeqs(), c.maxNumBatchedTokens(), 0, maxModelLen, blockSize, null, gpuMemoryUtilization, c.pp(), c.dp(),
          c.expertParallel() ? PoolSpec.EP_ENABLED : 1);
    }

    String resolve(String modelOrGpu) {
      return looksLikePath(modelOrGpu) ? baseDir.resolve(modelOrGpu).toString() : modelOrGpu;
    }
  }

  /** Most configurations in one grid. */
  public static final int MAX_CONFIGS = 100_000;

  public SweepGrid {
    Objects.requireNonNull(question, "question");
    Objects.requireNonNull(workload, "workload");
    Objects.requireNonNull(deployment, "deployment");
    Objects.requireNonNull(settings, "settings");
    rates = List.copyOf(rates);
    configs = List.copyOf(configs);
    if (question == Question.CAPACITY && slo == null) {
      throw new IllegalArgumentException("question capacity needs slo, for example slo: \"ttft_p99=500ms,e2e_p99=20s\"");
    }
    if (question == Question.CAPACITY != rates.isEmpty()) {
      throw new IllegalArgumentException(question == Question.RATES ? "question rates needs rates: [R1, R2, ...] (req/s)"
          : "rates apply to question rates only; question capacity searches for the rate");
    }
    if (configs.isEmpty()) {
      throw new IllegalArgumentException("no configuration: give grid (lists of values) or points");
    }
    if (configs.size() > MAX_CONFIGS) {
      throw new IllegalArgumentException("at most " + MAX_CONFIGS + " configurations, the grid has " + configs.size());
    }
    Map<String, Integer> seen = new HashMap<>();
    for (int i = 0; i < configs.size(); i++) {
      Integer before = seen.put(configs.get(i).key(), i);
      if (before != null) {
        throw new IllegalArgumentException("configuration " + (i + 1) + " repeats configuration " + (before + 1) + " ("
            + configs.get(i).key() + ")");
      }
    }
    if (intervals != null && question != Question.CAPACITY) {
      throw new IllegalArgumentException("intervals apply to question capacity only");
    }
    if (intervals != null && !intervals.ensemble().latencyModel().equalsIgnoreCase(deployment.latencyModel())) {
      throw new IllegalArgumentException("intervals: the ensemble holds " + intervals.ensemble().latencyModel()
          + " coefficients but the latency model is " + deployment.latencyModel());
    }
    if (!isLatencyStat(paretoLatency)) {
      throw new IllegalArgumentException("pareto latency must be METRIC_STAT (e2e_p99, ...), got " + paretoLatency);
    }
  }

  /**
   * A digest of everything that determines a configuration's result except the configuration
   * itself: the question, targets, rates, workload, shared deployment fields and search
   * settings. Results recorded under another fingerprint are not reused.
   */
  public String fingerprint() {
    return sha256(fingerprintText().getBytes(StandardCharsets.UTF_8)).substring(0, 16);
  }

  /** What {@link #fingerprint()} digests. */
  String fingerprintText() {
    // format 2: capacity records hold every load point of the searches (the report's curves)
    StringBuilder b = new StringBuilder("blis-sweep/2\n");
    b.append("question=").append(question.key()).append('\n');
    b.append("slo=").append(describe(slo)).append('\n');
    b.append("rates=").append(rates).append('\n');
    b.append("workload=").append(workloadIdentity).append('\n');
    b.append("deployment=").append(deployment.latencyModel()).append(',').append(identity(deployment.coefficients()))
        .append(',').append(deployment.gpuMemoryUtilization()).append(',').append(deployment.blockSize()).append(',')
        .append(deployment.maxModelLen()).append('\n');
    if (deployment.loraConfig() != null) { // only then, so that grids without one keep their fingerprints
      b.append("lora_config=").append(identity(deployment.loraConfig())).append('\n');
    }
    b.append("settings=").append(settings).append('\n');
    b.append("saturation=").append(saturation).append('\n');
    if (intervals != null) {
      b.append("intervals=").append(intervals.identity()).append(',').append(intervals.level()).append('\n');
    }
    return b.toString();
  }

  /**
   * The targets as {@link SloSet#describe()} writes them, but in a fixed order (by key): targets
   * given in another order give the same fingerprint and the same summary. Empty for null.
   */
  public static String describe(SloSet slo) {
    if (slo == null) {
      return "";
    }
    List<String> parts = new ArrayList<>();
    new java.util.TreeMap<>(slo.aggregate()).forEach((k, v) -> parts.add(k + "=" + ms(v)));
    if (!Double.isNaN(slo.goodput())) {
      double pct = 100 * slo.goodput();
      parts.add("goodput=" + SloSet.trim(pct) + "%");
      new java.util.TreeMap<>(slo.perRequest()).forEach((k, v) -> parts.add(k + "=" + ms(v)));
    }
    return String.join(",", parts);
  }

  private static String ms(double us) {
    double v = us / 1000;
    return SloSet.trim(v) + "ms";
  }

  private static String identity(String coefficients) {
    if (coefficients == null) {
      return "bundled";
    }
    Path p = Path.of(coefficients);
    return Files.isRegularFile(p) ? "file sha256:" + digest(p) : coefficients;
  }

  /** Reads and checks a grid file; relative paths in it are relative to its directory. */
  public static SweepGrid load(Path file) {
    String text = TextFiles.readConfig(file);
    Path dir = file.toAbsolutePath().getParent();
    return parse(text, file.toString(), dir == null ? Path.of("") : dir);
  }

  /**
   * Parses and checks grid text.
   *
   * @param source names the text in messages
   * @param baseDir where relative paths in it are relative to
   * @throws IllegalArgumentException one line naming the source, line, column and key
   */
  public static SweepGrid parse(String text, String source, Path baseDir) {
    GridFile f = StrictYaml.parse(text, source, GridFile.class);
    Function<String, String> at = pointer -> where(text, source, pointer);
    Question question = Question.CAPACITY;
    if (f.question() != null) {
      if (!List.of("capacity", "rates").contains(f.question())) {
        throw new IllegalArgumentException(at.apply("/question") + "question must be capacity or rates, got '"
            + f.question() + "'");
      }
      question = f.question().equals("rates") ? Question.RATES : Question.CAPACITY;
    }
    SloSet slo = null;
    if (f.slo() != null) {
      try {
        slo = SloSet.parse(f.slo());
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(at.apply("/slo") + "slo: " + e.getMessage(), e);
      }
      if (slo.classTargets()) {
        throw new IllegalArgumentException(at.apply("/slo") + "slo: goodput without per-request targets counts each"
            + " request against its SLO class's targets, which a sweep does not set; write them, for example"
            + " goodput=99%,ttft=500ms,e2e=20s");
      }
    }
    List<Double> rates = new ArrayList<>();
    if (f.rates() != null) {
      for (int i = 0; i < f.rates().size(); i++) {
        Double r = f.rates().get(i);
        if (r == null || !(r > 0) || !Double.isFinite(r) || r > 1e6) {
          throw new IllegalArgumentException(at.apply("/rates/" + i) + "rates[" + i + "]: a rate must be in (0, 1000000]"
              + " requests per second, got " + (r == null ? "nothing" : r));
        }
        if (rates.contains(r)) {
          throw new IllegalArgumentException(at.apply("/rates/" + i) + "rates[" + i + "]: " + r + " is listed twice");
        }
        rates.add(r);
      }
    }
    if (question == Question.CAPACITY && slo == null) {
      throw new IllegalArgumentException(at.apply("/question") + "question capacity needs slo, for example"
          + " slo: \"ttft_p99=500ms,e2e_p99=20s\"");
    }
    if (question == Question.RATES && rates.isEmpty()) {
      throw new IllegalArgumentException(at.apply("/question") + "question rates needs rates: [R1, R2, ...] (req/s)");
    }
    if (question == Question.CAPACITY && f.rates() != null) {
      throw new IllegalArgumentException(at.apply("/rates") + "rates apply to question: rates only; question capacity"
          + " searches for the rate");
    }
    String paretoLatency = "e2e_p99";
    if (f.paretoLatency() != null) {
      if (!isLatencyStat(f.paretoLatency())) {
        throw new IllegalArgumentException(at.apply("/pareto_latency") + "pareto_latency: expected METRIC_STAT with a"
            + " metric of " + SloSet.METRICS + " and a statistic of " + SweepTable.STATS + ", got '" + f.paretoLatency() + "'");
      }
      paretoLatency = f.paretoLatency();
    }
    if (f.workload() == null) {
      throw new IllegalArgumentException(source + ": workload is required, for example workload: {preset: chatbot, seed: 42}");
    }
    if (question == Question.RATES && f.search() != null && f.search().saturation() != null) {
      throw new IllegalArgumentException(at.apply("/search/saturation") + "search.saturation applies to question capacity only");
    }
    String[] identity = new String[1];
    RateWorkload workload;
    try {
      workload = workload(f.workload(), baseDir, identity);
    } catch (IllegalArgumentException | UncheckedIOException e) {
      throw new IllegalArgumentException(at.apply("/workload") + "workload: " + e.getMessage(), e);
    }
    GridFile.DeploymentFile d = f.deployment();
    String coefficients = null;
    if (d != null && d.coefficients() != null) {
      coefficients = d.coefficients().contains("=") ? d.coefficients() : baseDir.resolve(d.coefficients()).toString();
      try {
        Cluster.loadCoefficients(coefficients);
      } catch (IllegalArgumentException | UncheckedIOException e) {
        throw new IllegalArgumentException(at.apply("/deployment/coefficients") + "deployment.coefficients: "
            + e.getMessage(), e);
      }
    }
    String loraConfig = null;
    LoraSpec lora = null;
    if (d != null && d.loraConfig() != null) {
      Path file = baseDir.resolve(d.loraConfig());
      try {
        lora = LoraFile.load(file, null);
      } catch (IllegalArgumentException | UncheckedIOException e) {
        throw new IllegalArgumentException(at.apply("/deployment/lora_config") + "deployment.lora_config: "
            + e.getMessage(), e);
      }
      loraConfig = file.toString();
    }
    Deployment defaults = Deployment.defaults();
    Deployment deployment = d == null ? new Deployment(defaults.latencyModel(), null, defaults.gpuMemoryUtilization(),
        defaults.blockSize(), null, baseDir)
        : new Deployment(d.latencyModel() != null ? d.latencyModel() : defaults.latencyModel(), coefficients,
            d.gpuMemoryUtilization() != null ? d.gpuMemoryUtilization() : defaults.gpuMemoryUtilization(),
            d.blockSize() != null ? d.blockSize() : defaults.blockSize(), d.maxModelLen(), baseDir, loraConfig, lora);
    Values v = new Values(at, baseDir, lora);
    List<SweepConfig> configs = new ArrayList<>();
    SweepConfig dflt = SweepConfig.DEFAULTS;
    // max_loras left out: no LoRA, or with a LoRA configuration file its own slot count
    int slots = lora == null ? 0 : lora.maxLoras();
    GridFile.Axes a = f.grid();
    int inGrid = 0;
    if (a != null) {
      List<String> models = v.axis(a.model(), "model", dflt.model());
      List<String> gpus = v.axis(a.gpu(), "gpu", dflt.gpu());
      List<Integer> tps = v.axis(a.tp(), "tp", dflt.tp());
      List<Integer> pps = v.axis(a.pp(), "pp", dflt.pp());
      List<Integer> dps = v.axis(a.dp(), "dp", dflt.dp());
      List<Boolean> eps = v.axis(a.expertParallel(), "expert_parallel", dflt.expertParallel());
      List<Integer> replicas = v.axis(a.replicas(), "replicas", dflt.replicas());
      List<Integer> seqs = v.axis(a.maxNumSeqs(), "max_num_seqs", dflt.maxNumSeqs());
      List<Integer> tokens = v.axis(a.maxNumBatchedTokens(), "max_num_batched_tokens", dflt.maxNumBatchedTokens());
      List<String> routers = v.axis(a.router(), "router", dflt.router());
      List<String> schedulers = v.axis(a.scheduler(), "scheduler", dflt.scheduler());
      List<Integer> prefills = v.axis(a.prefillReplicas(), "prefill_replicas", dflt.prefillReplicas());
      List<Integer> decodes = v.axis(a.decodeReplicas(), "decode_replicas", dflt.decodeReplicas());
      List<String> deciders = a.pdDecider() == null ? java.util.Collections.singletonList(null)
          : v.axis(a.pdDecider(), "pd_decider", null); // left out: always when split, never otherwise
      List<Integer> loras = v.axis(a.maxLoras(), "max_loras", slots);
      long n = (long) models.size() * gpus.size() * tps.size() * pps.size() * dps.size() * eps.size() * replicas.size()
          * seqs.size() * tokens.size() * routers.size() * schedulers.size() * prefills.size() * decodes.size()
          * deciders.size() * loras.size();
      if (n > MAX_CONFIGS) {
        throw new IllegalArgumentException(at.apply("/grid") + "the grid has " + n + " configurations, at most " + MAX_CONFIGS);
      }
      // the first axis varies slowest, the last fastest
      for (String model : models) {
        for (String gpu : gpus) {
          for (int tp : tps) {
            for (int pp : pps) {
              for (int dp : dps) {
                for (boolean ep : eps) {
                  for (int r : replicas) {
                    for (int s : seqs) {
                      for (int t : tokens) {
                        for (String router : routers) {
                          for (String scheduler : schedulers) {
                            for (int pr : prefills) {
                              for (int dr : decodes) {
                                for (String decider : deciders) {
                                  for (int lr : loras) {
                                    configs.add(config(at, "/grid", new SweepConfig(model, gpu, tp, pp, dp, ep, r, s,
                                        t, router, scheduler), pr, dr, decider, lr));
                                  }
                                }
                              }
                            }
                          }
                        }
                      }
                    }
                  }
                }
              }
            }
          }
        }
      }
      inGrid = configs.size();
    }
    if (f.points() != null) {
      if (inGrid + (long) f.points().size() > MAX_CONFIGS) {
        throw new IllegalArgumentException(at.apply("/points") + "at most " + MAX_CONFIGS + " configurations");
      }
      for (int i = 0; i < f.points().size(); i++) {
        GridFile.PointFile p = f.points().get(i);
        String here = "/points/" + i;
        if (p == null) {
          throw new IllegalArgumentException(at.apply(here) + "points[" + i + "] is empty");
        }
        configs.add(config(at, here, new SweepConfig(
            v.value(p.model(), here, "model", dflt.model()),
            v.value(p.gpu(), here, "gpu", dflt.gpu()),
            v.value(p.tp(), here, "tp", dflt.tp()),
            v.value(p.pp(), here, "pp", dflt.pp()),
            v.value(p.dp(), here, "dp", dflt.dp()),
            v.value(p.expertParallel(), here, "expert_parallel", dflt.expertParallel()),
            v.value(p.replicas(), here, "replicas", dflt.replicas()),
            v.value(p.maxNumSeqs(), here, "max_num_seqs", dflt.maxNumSeqs()),
            v.value(p.maxNumBatchedTokens(), here, "max_num_batched_tokens", dflt.maxNumBatchedTokens()),
            v.value(p.router(), here, "router", dflt.router()),
            v.value(p.scheduler(), here, "scheduler", dflt.scheduler())),
            v.value(p.prefillReplicas(), here, "prefill_replicas", dflt.prefillReplicas()),
            v.value(p.decodeReplicas(), here, "decode_replicas", dflt.decodeReplicas()),
            v.value(p.pdDecider(), here, "pd_decider", null),
            v.value(p.maxLoras(), here, "max_loras", slots)));
      }
    }
    if (configs.isEmpty()) {
      throw new IllegalArgumentException(source + ": no configuration: give grid (lists of values) or points");
    }
    Map<String, Integer> seen = new HashMap<>();
    for (int i = 0; i < configs.size(); i++) {
      Integer before = seen.put(configs.get(i).key(), i);
      if (before != null) {
        throw new IllegalArgumentException(at.apply("/points/" + (i - inGrid)) + "points[" + (i - inGrid) + "] repeats "
            + (before < inGrid ? "a configuration of the grid" : "points[" + (before - inGrid) + "]") + " ("
            + configs.get(i).key() + ")");
      }
    }
    try {
      return new SweepGrid(source, question, slo, rates, workload, identity[0], deployment, configs,
          f.search() == null ? CapacitySearch.Settings.defaults() : f.search().settings(),
          f.search() == null || f.search().saturation() == null || f.search().saturation(), paretoLatency,
          intervals(f.intervals(), baseDir, at));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(source + ": " + e.getMessage(), e);
    }
  }

  private static Intervals intervals(GridFile.IntervalsFile f, Path baseDir, Function<String, String> at) {
    if (f == null) {
      return null;
    }
    double level = f.level() == null ? io.blis.engine.validate.PredictionInterval.DEFAULT_LEVEL : f.level();
    if (f.ensemble() == null) {
      return new Intervals(io.blis.engine.validate.Ensemble.bundled(), "bundled", level);
    }
    Path file = baseDir.resolve(f.ensemble());
    try {
      return new Intervals(io.blis.engine.validate.Ensemble.load(file), "file sha256:" + digest(file), level);
    } catch (IllegalArgumentException | UncheckedIOException e) {
      throw new IllegalArgumentException(at.apply("/intervals/ensemble") + "intervals.ensemble: " + e.getMessage(), e);
    }
  }

  /** Whether {@code s} is a latency statistic of the table, {@code e2e_p99} for example. */
  static boolean isLatencyStat(String s) {
    int us = s.indexOf('_');
    return us > 0 && SloSet.METRICS.contains(s.substring(0, us)) && SweepTable.STATS.contains(s.substring(us + 1));
  }

  /**
   * {@code c} with its replicas split into {@code prefill} and {@code decode} ones (the rest do
   * both), the decider ({@code null}: always when split, never otherwise) and {@code maxLoras}
   * LoRA slots per instance (0: none).
   */
  private static SweepConfig config(Function<String, String> at, String where, SweepConfig c, int prefill, int decode,
      String decider, int maxLoras) {
    String d = decider != null ? decider : prefill > 0 || decode > 0 ? "always" : "never";
    if (prefill + decode == 0 && io.blis.engine.disagg.Decider.parse(d) != io.blis.engine.disagg.Decider.NEVER) {
      throw new IllegalArgumentException(at.apply(where) + "pd_decider " + d + " has no effect without a prefill/decode"
          + " split (prefill_replicas and decode_replicas 0): give the split, or leave pd_decider out of this"
          + " configuration" + (where.equals("/grid") ? " (to compare deciders on splits only, list those"
              + " configurations under points)" : "") + " (" + c.key() + ")");
    }
    if (prefill + decode > c.replicas()) {
      throw new IllegalArgumentException(at.apply(where) + "prefill_replicas " + prefill + " + decode_replicas " + decode
          + " exceed replicas " + c.replicas() + " (" + c.key() + ")");
    }
    if (prefill + decode > 0 && c.replicas() - prefill - decode == 0 && (prefill == 0 || decode == 0)) {
      throw new IllegalArgumentException(at.apply(where) + "with every replica prefill or decode, give both some ("
          + c.key() + ")");
    }
    return new SweepConfig(c.model(), c.gpu(), c.tp(), c.pp(), c.dp(), c.expertParallel(), c.replicas(), c.maxNumSeqs(),
        c.maxNumBatchedTokens(), c.router(), c.scheduler(), prefill, decode, d, maxLoras);
  }

  /**
   * Checks the values of the axes and points, naming the element of an error.
   *
   * @param lora the LoRA configuration file's settings, or null
   */
  private record Values(Function<String, String> at, Path baseDir, LoraSpec lora) {

    <T> List<T> axis(List<T> values, String key, T dflt) {
      if (values == null) {
        return List.of(dflt);
      }
      if (values.isEmpty()) {
        throw new IllegalArgumentException(at.apply("/grid/" + key) + "grid." + key
            + " lists no value (leave the key out for the default)");
      }
      List<T> out = new ArrayList<>();
      List<Object> named = new ArrayList<>(); // each value as the catalog names it: an alias is its model
      for (int i = 0; i < values.size(); i++) {
        String pointer = "/grid/" + key + "/" + i;
        T value = values.get(i);
        if (value == null) {
          throw new IllegalArgumentException(at.apply(pointer) + "grid." + key + "[" + i + "] is empty");
        }
        check(value, pointer, "grid." + key + "[" + i + "]", key);
        Object name = catalogName(key, value);
        int before = named.indexOf(name);
        if (before >= 0) {
          throw new IllegalArgumentException(at.apply(pointer) + "grid." + key + " lists " + value + " twice"
              + (out.get(before).equals(value) ? "" : " (as " + out.get(before) + " at [" + before + "]: both name "
                  + name + ")"));
        }
        out.add(value);
        named.add(name);
      }
      return out;
    }

    /** A bundled model's or GPU's catalog name for an alias of it; any other value as it is. */
    private static Object catalogName(String key, Object value) {
      if (key.equals("model") && !looksLikePath((String) value)) {
        return ModelCatalog.byName((String) value).name();
      }
      if (key.equals("gpu") && !looksLikePath((String) value)) {
        return GpuCatalog.resolve((String) value).name();
      }
      return value;
    }

    <T> T value(T value, String point, String key, T dflt) {
      if (value == null) {
        return dflt;
      }
      String pointer = point + "/" + key;
      check(value, pointer, "points[" + point.substring(point.lastIndexOf('/') + 1) + "]." + key, key);
      return value;
    }

    private void check(Object value, String pointer, String name, String key) {
      try {
        switch (key) {
          case "model" -> {
            String m = (String) value;
            if (looksLikePath(m)) {
              file(m);
            } else {
              ModelCatalog.byName(m);
            }
          }
          case "gpu" -> {
            String g = (String) value;
            if (looksLikePath(g)) {
              file(g.contains("#") ? g.substring(0, g.lastIndexOf('#')) : g);
            } else {
              GpuCatalog.resolve(g);
            }
          }
          case "router" -> known((String) value, "router", Providers.names(RouterProvider.class));
          case "scheduler" -> known((String) value, "scheduler", Providers.names(SchedulerProvider.class));
          case "expert_parallel" -> { } // true or false, which the binding checked
          case "pd_decider" -> io.blis.engine.disagg.Decider.parse((String) value);
          case "prefill_replicas", "decode_replicas" -> {
            if ((Integer) value < 0) {
              throw new IllegalArgumentException("must be a whole number of at least 0, got " + value);
            }
          }
          case "max_loras" -> maxLoras((Integer) value);
          default -> {
            int n = (Integer) value;
            if (n < 1) {
              throw new IllegalArgumentException("must be a whole number of at least 1, got " + n);
            }
          }
        }
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(at.apply(pointer) + name + ": " + e.getMessage(), e);
      }
    }

    /**
     * A slot count: in [1, {@link LoraSpec#MAX_ADAPTERS}], and at most the host memory's adapters
     * that a LoRA configuration file sets above its own slot count (vLLM requires {@code
     * max_cpu_loras >= max_loras}).
     */
    private void maxLoras(int n) {
      if (n < 1 || n > LoraSpec.MAX_ADAPTERS) {
        throw new IllegalArgumentException("must be a whole number in [1, " + LoraSpec.MAX_ADAPTERS + "] (LoRA GPU"
            + " slots per instance; leave max_loras out for " + (lora == null ? "no LoRA"
                : "deployment.lora_config's " + lora.maxLoras()) + "), got " + n);
      }
      if (lora != null && lora.maxCpuLoras() > lora.maxLoras() && n > lora.maxCpuLoras()) {
        throw new IllegalArgumentException(n + " exceeds max_cpu_loras " + lora.maxCpuLoras() + " of"
            + " deployment.lora_config (vLLM requires max_cpu_loras >= max_loras); raise max_cpu_loras in the file"
            + " or leave it out (then it follows max_loras)");
      }
    }

    private void file(String path) {
      if (!Files.isRegularFile(baseDir.resolve(path))) {
        throw new IllegalArgumentException("no such file '" + path + "' (relative to " + baseDir + ")");
      }
    }

    private static void known(String name, String what, List<String> names) {
      if (!names.contains(name)) {
        throw new IllegalArgumentException("unknown " + what + " '" + name + "'; available: " + String.join(", ", names));
      }
    }
  }

  private static RateWorkload workload(GridFile.WorkloadFile w, Path baseDir, String[] identity) {
    if (w.preset() != null) {
      long seed = w.seed() != null ? w.seed() : 42;
      identity[0] = "preset " + w.preset() + " seed " + seed;
      return RateWorkload.preset(w.preset(), seed);
    }
    if (w.spec() != null) {
      Path file = baseDir.resolve(w.spec());
      io.blis.workload.spec.WorkloadFile f = io.blis.workload.spec.WorkloadFile.load(file);
      long seed = w.seed() != null ? w.seed() : f.seed();
      if (f.spec() != null && w.seed() != null) {
        WorkloadSpec spec = f.spec();
        f = new io.blis.workload.spec.WorkloadFile(f.format(), f.goVersion(),
            new WorkloadSpec(seed, spec.clients(), spec.maxRequests(), spec.horizonUs()), null, seed, f.notes());
      }
      identity[0] = "spec sha256:" + digest(file) + " seed " + seed;
      return RateWorkload.specFile(f, w.spec(), seed);
    }
    if (w.inferencePerf() != null) {
      Path file = baseDir.resolve(w.inferencePerf());
      long seed = w.seed() != null ? w.seed() : 42;
      identity[0] = "inference-perf sha256:" + digest(file) + " seed " + seed;
      return RateWorkload.inferencePerf(InferencePerfProfiles.load(file), w.inferencePerf(), seed);
    }
    Path file = baseDir.resolve(w.trace());
    TextFiles.requireFile(file);
    RateWorkload t = RateWorkload.trace(file);
    identity[0] = "trace sha256:" + digest(file);
    return t;
  }

  /** Whether a model or GPU value names a file rather than a catalog entry. */
  public static boolean looksLikePath(String value) {
    String v = value.contains("#") ? value.substring(0, value.lastIndexOf('#')) : value;
    return v.endsWith(".json") || v.startsWith("./") || v.startsWith("../") || v.startsWith("/");
  }

  /**
   * "SOURCE:LINE:COLUMN: " of the value at a JSON pointer ({@code /question}) of the YAML text, or
   * of its nearest enclosing key; "SOURCE: " when not found.
   */
  static String where(String text, String source, String pointer) {
    JsonLocation best = null;
    try (JsonParser p = new YAMLFactory().createParser(text)) {
      JsonToken t;
      while ((t = p.nextToken()) != null) {
        String here = p.getParsingContext().pathAsPointer().toString();
        boolean inArray = t.isScalarValue() && p.getParsingContext().inArray();
        if (t == JsonToken.FIELD_NAME || inArray || t.isStructStart()) {
          if (here.equals(pointer)) {
            best = p.currentTokenLocation();
            break;
          }
          if (pointer.startsWith(here + "/") && !here.isEmpty()) {
            best = p.currentTokenLocation();
          }
        }
      }
    } catch (IOException e) {
      // the text parsed before; keep what was found
    }
    return best == null ? source + ": " : source + ":" + best.getLineNr() + ":" + best.getColumnNr() + ": ";
  }

  /** The SHA-256 of a file's bytes, in hex. */
  public static String digest(Path file) {
    try (InputStream in = Files.newInputStream(file)) {
      MessageDigest md = MessageDigest.getInstance("SHA-256");
      byte[] buf = new byte[1 << 16];
      int n;
      while ((n = in.read(buf)) > 0) {
        md.update(buf, 0, n);
      }
      return HexFormat.of().formatHex(md.digest());
    } catch (IOException e) {
      throw new UncheckedIOException(file + ": cannot read: " + e.getMessage(), e);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  static String sha256(byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
