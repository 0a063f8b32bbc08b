package io.blis.cli.serve;

import io.blis.engine.result.AutoscaleReport;
import io.blis.engine.result.InstanceStatus;
import io.prometheus.metrics.config.EscapingScheme;
import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.datapoints.DistributionDataPoint;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.core.metrics.Info;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;
import java.util.function.ToLongFunction;

/**
 * The simulated server's Prometheus metrics as vLLM's V1 engine exposes them ({@code
 * vllm/v1/metrics/loggers.py}): the same names, label sets ({@code model_name} the served name,
 * {@code engine} the simulated instance, "0" for a single one) and bucket boundaries, each label
 * child created at start so that a scrape before the first request already lists every series,
 * as vLLM's do. Gauges and counters come from the simulation's status snapshots; the per-request
 * histograms from the simulated times of delivered answers; plus {@code
 * blis:token_delivery_lateness_seconds}, how late each token was written to its connection
 * against its simulated time.
 *
 * <p>vLLM's per-request intervals, all in engine time: queue = first queued to first scheduled;
 * prefill = first scheduled to first token; decode = first token to last token; inference = first
 * scheduled to last token (prefill + decode); a preemption's time counts in the interval it falls
 * in. The per-request time per output token is decode / (generated tokens - 1), 0 for a single
 * token. TTFT, inter-token latency and E2E are client-side, as vLLM's front end measures them
 * (here the simulated client times).
 */
final class ServeMetrics {

  /** vLLM's buckets of request latencies, seconds. */
  static final double[] REQUEST_BUCKETS = {0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0,
      15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
  static final double[] TTFT_BUCKETS = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,
      0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0};
  /** vLLM's buckets of inter-token latency and time per output token, seconds. */
  static final double[] ITL_BUCKETS = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4,
      0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0};
  /** vLLM's buckets of {@code vllm:iteration_tokens_total}, tokens per engine step. */
  static final double[] ITERATION_TOKEN_BUCKETS = {1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048,
      4096, 8192, 16384};
  /** vLLM's buckets of {@code vllm:request_params_n}. */
  static final double[] N_BUCKETS = {1, 2, 5, 10, 20};
  private static final double[] LATENESS_BUCKETS = {0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005,
      0.01, 0.02, 0.05, 0.1, 0.5};
  /** vLLM's finish reasons ({@code FINISH_REASON_STRINGS}) the simulator can end a request with. */
  static final List<String> FINISH_REASONS = List.of(RequestStats.STOP, RequestStats.LENGTH,
      RequestStats.ABORT);

  private final PrometheusRegistry registry = new PrometheusRegistry();
  private final PrometheusTextFormatWriter writer = PrometheusTextFormatWriter.create();
  private final String model;
  private final java.util.function.IntFunction<String> engineModel;
  private final Supplier<RealTimeDriver.Snapshot> status;
  private final List<Engine> engines = new ArrayList<>();

  /** One engine's label children of the metrics observed per request or per token. */
  static final class Engine {
    final DistributionDataPoint ttft;
    final DistributionDataPoint itl;
    /** vLLM's older name of the inter-token latency (V1 observes the same values). */
    final DistributionDataPoint tpot;
    final DistributionDataPoint e2e;
    final DistributionDataPoint lateness;
    final DistributionDataPoint queue;
    final DistributionDataPoint prefill;
    final DistributionDataPoint decode;
    final DistributionDataPoint inference;
    final DistributionDataPoint requestTpot;
    final DistributionDataPoint promptTokens;
    final DistributionDataPoint generationTokens;
    final DistributionDataPoint maxTokens;
    final DistributionDataPoint maxGenerationTokens;
    final DistributionDataPoint n;
    final CounterDataPoint[] success;

    private Engine(ServeMetrics m, String... labels) {
      ttft = m.ttft.labelValues(labels);
      itl = m.itl.labelValues(labels);
      tpot = m.tpot.labelValues(labels);
      e2e = m.e2e.labelValues(labels);
      lateness = m.lateness.labelValues(labels);
      queue = m.queue.labelValues(labels);
      prefill = m.prefill.labelValues(labels);
      decode = m.decode.labelValues(labels);
      inference = m.inference.labelValues(labels);
      requestTpot = m.requestTpot.labelValues(labels);
      promptTokens = m.promptTokens.labelValues(labels);
      generationTokens = m.generationTokens.labelValues(labels);
      maxTokens = m.maxTokens.labelValues(labels);
      maxGenerationTokens = m.maxGenerationTokens.labelValues(labels);
      n = m.n.labelValues(labels);
      success = new CounterDataPoint[FINISH_REASONS.size()];
      for (int i = 0; i < success.length; i++) {
        success[i] = m.success.labelValues(labels[0], labels[1], FINISH_REASONS.get(i));
      }
    }
  }

  private final Histogram ttft;
  private final Histogram itl;
  private final Histogram tpot;
  private final Histogram e2e;
  private final Histogram lateness;
  private final Histogram queue;
  private final Histogram prefill;
  private final Histogram decode;
  private final Histogram inference;
  private final Histogram requestTpot;
  private final Histogram promptTokens;
  private final Histogram generationTokens;
  private final Histogram maxTokens;
  private final Histogram maxGenerationTokens;
  private final Histogram n;
  private final Counter success;
  /** vLLM's {@code vllm:lora_requests_info}, when the engines serve LoRA adapters; else null. */
  private Info loraInfo;
  /** The labels of each engine's {@link #loraInfo} sample. */
  private String[][] loraLabels;

  ServeMetrics(String model, Supplier<RealTimeDriver.Snapshot> status) {
    this(model, i -> model, status);
  }

  /**
   * With {@code engineModel} naming the model of each engine's labels (a fleet of several models);
   * {@code model} labels the pool-wide figures.
   */
  ServeMetrics(String model, java.util.function.IntFunction<String> engineModel,
      Supplier<RealTimeDriver.Snapshot> status) {
    this.model = model;
    this.engineModel = engineModel;
    this.status = status;
    gauge("vllm:num_requests_running", "Number of requests in model execution batches.",
        InstanceStatus::running);
    gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.",
        InstanceStatus::waiting);
    gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.",
        InstanceStatus::kvUsage);
    gauge("vllm:gpu_cache_usage_perc", "GPU KV-cache usage. 1 means 100 percent usage."
        + " DEPRECATED: Use vllm:kv_cache_usage_perc instead.", InstanceStatus::kvUsage);
    counter("vllm:num_preemptions", "Cumulative number of preemption from the engine.",
        InstanceStatus::preemptions);
    counter("vllm:prefix_cache_queries",
        "Prefix cache queries, in terms of number of queried tokens.",
        InstanceStatus::prefixQueriedTokens);
    counter("vllm:prefix_cache_hits", "Prefix cache hits, in terms of number of cached tokens.",
        InstanceStatus::prefixHitTokens);
    RealTimeDriver.Snapshot first = status.get();
    if (first.instances().stream().anyMatch(s -> s.speculative() != null)) {
      // vLLM's spec-decode counters, per engine; the per-position one labelled by position
      counter("vllm:spec_decode_num_drafts", "Number of spec decoding drafts.",
          s -> s.speculative() == null ? 0 : s.speculative().drafts());
      counter("vllm:spec_decode_num_draft_tokens", "Number of draft tokens.",
          s -> s.speculative() == null ? 0 : s.speculative().draftTokens());
      counter("vllm:spec_decode_num_accepted_tokens", "Number of accepted tokens.",
          s -> s.speculative() == null ? 0 : s.speculative().acceptedTokens());
      CounterWithCallback.builder().name("vllm:spec_decode_num_accepted_tokens_per_pos")
          .help("Accepted tokens per draft position.").labelNames("model_name", "engine", "position")
          .callback(cb -> {
            for (InstanceStatus s : status.get().instances()) {
              if (s.speculative() == null) {
                continue;
              }
              java.util.List<Long> per = s.speculative().acceptedPerPosition();
              for (int p = 0; p < per.size(); p++) {
                cb.call(per.get(p), engineModel.apply(s.index()), String.valueOf(s.index()), String.valueOf(p));
              }
            }
          }).register(registry);
    }
    if (first.instances().stream().anyMatch(s -> s.maxLoras() > 0)) {
      // as vLLM's, one sample per engine whose labels list its adapters (refreshed at each scrape)
      loraInfo = Info.builder().name("vllm:lora_requests").help("Running stats on lora requests.")
          .labelNames("max_lora", "waiting_lora_adapters", "running_lora_adapters", "model_name", "engine")
          .register(registry);
      loraLabels = new String[first.instances().size()][];
    }
    if (first.replicas().isPresent()) {
      poolGauge("blis:autoscaler_desired_replicas", "Replicas the autoscaler asks for.",
          s -> s.replicas().map(AutoscaleReport.Sample::desired).orElse(0));
      poolGauge("blis:autoscaler_ready_replicas", "Replicas ready, taking requests.",
          s -> s.replicas().map(AutoscaleReport.Sample::ready).orElse(0));
      poolGauge("blis:autoscaler_starting_replicas", "Replicas waiting for a node, loading or warming up.",
          s -> s.replicas().map(AutoscaleReport.Sample::starting).orElse(0));
      poolGauge("blis:autoscaler_draining_replicas", "Replicas finishing their requests before release.",
          s -> s.replicas().map(AutoscaleReport.Sample::draining).orElse(0));
      poolGauge("blis:autoscaler_nodes", "Nodes of the node pool held.",
          s -> s.replicas().map(AutoscaleReport.Sample::nodes).orElse(0));
    }
    if (first.replicasByPool().size() > 1) { // several pools scaled apart: each pool's replicas too
      GaugeWithCallback.builder().name("blis:autoscaler_pool_replicas")
          .help("An autoscaled pool's replicas by state: desired, ready, starting, draining.")
          .labelNames("pool", "state")
          .callback(cb -> status.get().replicasByPool().forEach((pool, s) -> {
            cb.call(s.desired(), pool, "desired");
            cb.call(s.ready(), pool, "ready");
            cb.call(s.starting(), pool, "starting");
            cb.call(s.draining(), pool, "draining");
          })).register(registry);
    }
    if (first.gatewayQueued().isPresent()) {
      poolGauge("blis:gateway_queue_depth", "Requests waiting in the gateway's flow-control queue.",
          s -> s.gatewayQueued().orElse(0));
    }
    List<InstanceStatus> instances = first.instances();
    Info config = Info.builder().name("vllm:cache_config")
        .help("Information of the LLMEngine CacheConfig")
        .labelNames("engine", "block_size", "num_gpu_blocks").register(registry);
    for (InstanceStatus s : instances) {
      config.addLabelValues(String.valueOf(s.index()), String.valueOf(s.blockSizeTokens()),
          String.valueOf(s.kvTotalBlocks()));
    }
    engineCounter("vllm:prompt_tokens", "Number of prefill tokens processed.",
        RealTimeDriver.EngineCounts::promptTokens);
    engineCounter("vllm:generation_tokens", "Number of generation tokens processed.",
        RealTimeDriver.EngineCounts::generationTokens);
    success = Counter.builder().name("vllm:request_success")
        .help("Count of successfully processed requests.")
        .labelNames("model_name", "engine", "finished_reason").register(registry);

    double[] tokenBuckets = build125Buckets(maxModelLen(instances));
    ttft = histogram("vllm:time_to_first_token_seconds",
        "Histogram of time to first token in seconds.", TTFT_BUCKETS);
    itl = histogram("vllm:inter_token_latency_seconds",
        "Histogram of inter-token latency in seconds.", ITL_BUCKETS);
    tpot = histogram("vllm:time_per_output_token_seconds",
        "Histogram of time per output token in seconds."
            + " DEPRECATED: Use vllm:inter_token_latency_seconds instead.", ITL_BUCKETS);
    requestTpot = histogram("vllm:request_time_per_output_token_seconds",
        "Histogram of time_per_output_token_seconds per request.", ITL_BUCKETS);
    e2e = histogram("vllm:e2e_request_latency_seconds",
        "Histogram of e2e request latency in seconds.", REQUEST_BUCKETS);
    queue = histogram("vllm:request_queue_time_seconds",
        "Histogram of time spent in WAITING phase for request.", REQUEST_BUCKETS);
    inference = histogram("vllm:request_inference_time_seconds",
        "Histogram of time spent in RUNNING phase for request.", REQUEST_BUCKETS);
    prefill = histogram("vllm:request_prefill_time_seconds",
        "Histogram of time spent in PREFILL phase for request.", REQUEST_BUCKETS);
    decode = histogram("vllm:request_decode_time_seconds",
        "Histogram of time spent in DECODE phase for request.", REQUEST_BUCKETS);
    promptTokens = histogram("vllm:request_prompt_tokens",
        "Number of prefill tokens processed.", tokenBuckets);
    generationTokens = histogram("vllm:request_generation_tokens",
        "Number of generation tokens processed.", tokenBuckets);
    maxGenerationTokens = histogram("vllm:request_max_num_generation_tokens",
        "Histogram of maximum number of requested generation tokens.", tokenBuckets);
    n = histogram("vllm:request_params_n", "Histogram of the n request parameter.", N_BUCKETS);
    maxTokens = histogram("vllm:request_params_max_tokens",
        "Histogram of the max_tokens request parameter.", tokenBuckets);
    GaugeWithCallback.builder().name("blis:simulated_time_held_back_seconds")
        .help("Wall-clock time the simulation was held back so far because tokens could not be delivered"
            + " on time (a machine short of CPU); every latency above includes it, as clients see it.")
        .labelNames("model_name")
        .callback(cb -> cb.call(status.get().heldBackUs() / 1e6, model)).register(registry);
    lateness = histogram("blis:token_delivery_lateness_seconds",
        "How late each streamed token was written to its connection, against its simulated time.",
        LATENESS_BUCKETS);
    for (InstanceStatus s : instances) {
      engines.add(new Engine(this, engineModel.apply(s.index()), String.valueOf(s.index())));
    }
    if (engines.isEmpty()) {
      engines.add(new Engine(this, model, "0"));
    }
  }

  /** The label children of {@code engine} (an instance index; out of range: the first). */
  Engine engine(int engine) {
    return engines.get(engine >= 0 && engine < engines.size() ? engine : 0);
  }

  /** Counts a request that ended, and observes a completed one's per-request histograms. */
  void observeFinished(Engine e, RequestStats s) {
    observeFinished(e, s, 1);
  }

  /**
   * As above, for one of the sequences of a request with {@code n} > 1 (parallel sampling): each
   * is a request of its own in the engine, with its own times and tokens; the request's parameters
   * ({@code vllm:request_params_n}, {@code _max_tokens}, {@code vllm:request_max_num_generation_tokens})
   * are observed once per client request, with its first sequence ({@code nParam} > 0), and not
   * with the others ({@code nParam} 0).
   */
  void observeFinished(Engine e, RequestStats s, int nParam) {
    int reason = FINISH_REASONS.indexOf(s.finishReason());
    e.success[reason < 0 ? FINISH_REASONS.indexOf(RequestStats.ABORT) : reason].inc();
    if (RequestStats.ABORT.equals(s.finishReason()) || s.firstTokenUs() < 0) {
      return; // vLLM's per-request histograms are those of the requests it finished
    }
    long scheduled = s.scheduledUs() >= 0 ? s.scheduledUs() : s.firstTokenUs();
    long queued = s.queuedUs() >= 0 ? s.queuedUs() : scheduled;
    double decodeS = (s.lastTokenUs() - s.firstTokenUs()) / 1e6;
    e.queue.observe((scheduled - queued) / 1e6);
    e.prefill.observe((s.firstTokenUs() - scheduled) / 1e6);
    e.decode.observe(decodeS);
    e.inference.observe((s.lastTokenUs() - scheduled) / 1e6);
    e.requestTpot.observe(s.generationTokens() > 1 ? decodeS / (s.generationTokens() - 1) : 0);
    e.promptTokens.observe(s.promptTokens());
    e.generationTokens.observe(s.generationTokens());
    if (nParam > 0) {
      e.maxTokens.observe(s.maxTokens());
      e.maxGenerationTokens.observe(s.maxTokens());
      e.n.observe(nParam);
    }
  }

  /**
   * vLLM's {@code build_1_2_5_buckets(max_model_len)}: 1, 2, 5, 10, 20, 50, ... up to {@code max}.
   */
  static double[] build125Buckets(long max) {
    List<Double> out = new ArrayList<>();
    for (long p = 1; ; p *= 10) {
      for (int m : new int[] {1, 2, 5}) {
        if (m * p > max) {
          return out.stream().mapToDouble(Double::doubleValue).toArray();
        }
        out.add((double) (m * p));
      }
    }
  }

  /**
   * vLLM's {@code max_model_len}: the smallest of the instances'; an instance without one holds
   * at most its KV cache.
   */
  private static long maxModelLen(List<InstanceStatus> instances) {
    long min = Long.MAX_VALUE;
    for (InstanceStatus s : instances) {
      long len = s.maxModelLen() > 0 ? s.maxModelLen() : s.kvTotalBlocks() * s.blockSizeTokens();
      if (len > 0) {
        min = Math.min(min, len);
      }
    }
    return min == Long.MAX_VALUE ? 1 << 20 : min;
  }

  private Histogram histogram(String name, String help, double[] buckets) {
    return Histogram.builder().name(name).help(help).labelNames("model_name", "engine")
        .classicOnly().classicUpperBounds(buckets).register(registry);
  }

  /** A gauge of the whole pool (no engine label). */
  private void poolGauge(String name, String help, ToDoubleFunction<RealTimeDriver.Snapshot> value) {
    GaugeWithCallback.builder().name(name).help(help).labelNames("model_name")
        .callback(cb -> cb.call(value.applyAsDouble(status.get()), model)).register(registry);
  }

  private void gauge(String name, String help, ToDoubleFunction<InstanceStatus> value) {
    GaugeWithCallback.builder().name(name).help(help).labelNames("model_name", "engine")
        .callback(cb -> {
          for (InstanceStatus s : status.get().instances()) {
            cb.call(value.applyAsDouble(s), engineModel.apply(s.index()), String.valueOf(s.index()));
          }
        }).register(registry);
  }

  private void counter(String name, String help, ToDoubleFunction<InstanceStatus> value) {
    CounterWithCallback.builder().name(name).help(help).labelNames("model_name", "engine")
        .callback(cb -> {
          for (InstanceStatus s : status.get().instances()) {
            cb.call(value.applyAsDouble(s), engineModel.apply(s.index()), String.valueOf(s.index()));
          }
        }).register(registry);
  }

  private void engineCounter(String name, String help,
      ToLongFunction<RealTimeDriver.EngineCounts> value) {
    CounterWithCallback.builder().name(name).help(help).labelNames("model_name", "engine")
        .callback(cb -> {
          List<RealTimeDriver.EngineCounts> counts = status.get().engines();
          for (int i = 0; i < counts.size(); i++) {
            cb.call(value.applyAsLong(counts.get(i)), engineModel.apply(i), String.valueOf(i));
          }
        }).register(registry);
  }

  /**
   * {@code vllm:iteration_tokens_total}, the tokens of each engine step (its scheduled prefill and
   * decode tokens), from the status snapshot. vLLM counts a step's generated tokens plus the whole
   * prompt of each request whose first token the step emitted: the same total without prefix-cache
   * hits, spread differently with chunked prefill. Written by hand: the client library does not
   * take a histogram name ending in {@code _total}.
   */
  private void writeIterationTokens(StringBuilder out) {
    String name = "vllm:iteration_tokens_total";
    out.append("# HELP ").append(name).append(" Histogram of number of tokens per engine_step.\n");
    out.append("# TYPE ").append(name).append(" histogram\n");
    List<RealTimeDriver.EngineCounts> counts = status.get().engines();
    for (int i = 0; i < counts.size(); i++) {
      String escapedModel = engineModel.apply(i).replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
      long[] buckets = counts.get(i).stepTokenBuckets();
      String labels = "engine=\"" + i + "\",model_name=\"" + escapedModel + "\"";
      long cumulative = 0;
      for (int b = 0; b <= ITERATION_TOKEN_BUCKETS.length; b++) {
        cumulative += buckets[b];
        String le = b < ITERATION_TOKEN_BUCKETS.length ? String.valueOf(ITERATION_TOKEN_BUCKETS[b]) : "+Inf";
        out.append(name).append("_bucket{").append(labels).append(",le=\"").append(le).append("\"} ")
            .append(cumulative).append('\n');
      }
      out.append(name).append("_count{").append(labels).append("} ").append(cumulative).append('\n');
      out.append(name).append("_sum{").append(labels).append("} ")
          .append((double) counts.get(i).stepTokenSum()).append('\n');
    }
  }

  /** The exposition text of every metric now. */
  byte[] scrape() {
    if (loraInfo != null) {
      refreshLoraInfo();
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream(16384);
    try {
      writer.write(out, registry.scrape(), EscapingScheme.ALLOW_UTF8);
      StringBuilder extra = new StringBuilder(1024);
      writeIterationTokens(extra);
      out.write(extra.toString().getBytes(StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toByteArray();
  }

  String contentType() {
    return writer.getContentType();
  }

  /** Replaces each engine's LoRA sample by one labelled with the adapters it has now. */
  private synchronized void refreshLoraInfo() {
    for (InstanceStatus st : status.get().instances()) {
      if (st.index() >= loraLabels.length) {
        continue;
      }
      String[] labels = {String.valueOf(st.maxLoras()), String.join(",", st.waitingAdapters()),
          String.join(",", st.runningAdapters()), engineModel.apply(st.index()), String.valueOf(st.index())};
      String[] old = loraLabels[st.index()];
      if (!java.util.Arrays.equals(old, labels)) {
        if (old != null) {
          loraInfo.remove(old);
        }
        loraInfo.addLabelValues(labels);
        loraLabels[st.index()] = labels;
      }
    }
  }
}
