package io.blis.cli.serve;

import io.blis.engine.result.InstanceStatus;
import io.prometheus.metrics.config.EscapingScheme;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.core.metrics.Info;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.function.Supplier;

/**
 * The simulated server's Prometheus metrics under vLLM's names (per simulated instance, label
 * {@code engine}; {@code model_name} the served name), from the simulation's status snapshots and
 * the latencies of delivered answers; plus {@code blis:token_delivery_lateness_seconds}, how late
 * each token was written to its connection against its simulated time.
 */
final class ServeMetrics {

  /** vLLM's buckets of request latencies, seconds. */
  private static final double[] REQUEST_BUCKETS = {0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0,
      15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
  private static final double[] TTFT_BUCKETS = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,
      0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0};
  private static final double[] ITL_BUCKETS = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4,
      0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0};
  private static final double[] LATENESS_BUCKETS = {0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005,
      0.01, 0.02, 0.05, 0.1, 0.5};

  private final PrometheusRegistry registry = new PrometheusRegistry();
  private final PrometheusTextFormatWriter writer = PrometheusTextFormatWriter.create();
  final Histogram ttft;
  final Histogram e2e;
  final Histogram itl;
  final Histogram lateness;

  ServeMetrics(String model, Supplier<RealTimeDriver.Snapshot> status) {
    gauge("vllm:num_requests_running", "Requests in the running batch.", model, status,
        InstanceStatus::running);
    gauge("vllm:num_requests_waiting", "Requests waiting to be scheduled.", model, status,
        InstanceStatus::waiting);
    gauge("vllm:kv_cache_usage_perc", "Fraction of the GPU KV cache in use (1 = 100%).", model,
        status, InstanceStatus::kvUsage);
    gauge("vllm:gpu_cache_usage_perc", "Fraction of the GPU KV cache in use (older vLLM name).",
        model, status, InstanceStatus::kvUsage);
    counter("vllm:num_preemptions", "Preemptions so far.", model, status, InstanceStatus::preemptions);
    counter("vllm:prefix_cache_queries", "Prompt tokens looked up in the prefix cache.", model,
        status, InstanceStatus::prefixQueriedTokens);
    counter("vllm:prefix_cache_hits", "Prompt tokens found in the prefix cache.", model, status,
        InstanceStatus::prefixHitTokens);
    Info config = Info.builder().name("vllm:cache_config")
        .help("KV cache configuration of each simulated instance.")
        .labelNames("engine", "block_size", "num_gpu_blocks").register(registry);
    for (InstanceStatus s : status.get().instances()) {
      config.addLabelValues(String.valueOf(s.index()), String.valueOf(s.blockSizeTokens()),
          String.valueOf(s.kvTotalBlocks()));
    }
    CounterWithCallback.builder().name("vllm:prompt_tokens").help("Prompt tokens of completed requests.")
        .labelNames("model_name").callback(cb -> cb.call(status.get().promptTokens(), model))
        .register(registry);
    CounterWithCallback.builder().name("vllm:generation_tokens").help("Tokens generated.")
        .labelNames("model_name").callback(cb -> cb.call(status.get().generationTokens(), model))
        .register(registry);
    CounterWithCallback.builder().name("vllm:request_success").help("Requests completed.")
        .labelNames("model_name", "finished_reason")
        .callback(cb -> cb.call(status.get().completed(), model, "length")).register(registry);
    ttft = Histogram.builder().name("vllm:time_to_first_token_seconds")
        .help("Time to first token, simulated.").labelNames("model_name")
        .classicOnly().classicUpperBounds(TTFT_BUCKETS).register(registry);
    e2e = Histogram.builder().name("vllm:e2e_request_latency_seconds")
        .help("End-to-end request latency, simulated.").labelNames("model_name")
        .classicOnly().classicUpperBounds(REQUEST_BUCKETS).register(registry);
    itl = Histogram.builder().name("vllm:inter_token_latency_seconds")
        .help("Time between consecutive output tokens, simulated.").labelNames("model_name")
        .classicOnly().classicUpperBounds(ITL_BUCKETS).register(registry);
    lateness = Histogram.builder().name("blis:token_delivery_lateness_seconds")
        .help("How late each streamed token was written to its connection, against its simulated time.")
        .classicOnly().classicUpperBounds(LATENESS_BUCKETS).register(registry);
  }

  private void gauge(String name, String help, String model, Supplier<RealTimeDriver.Snapshot> status,
      java.util.function.ToDoubleFunction<InstanceStatus> value) {
    GaugeWithCallback.builder().name(name).help(help).labelNames("model_name", "engine")
        .callback(cb -> {
          for (InstanceStatus s : status.get().instances()) {
            cb.call(value.applyAsDouble(s), model, String.valueOf(s.index()));
          }
        }).register(registry);
  }

  private void counter(String name, String help, String model, Supplier<RealTimeDriver.Snapshot> status,
      java.util.function.ToDoubleFunction<InstanceStatus> value) {
    CounterWithCallback.builder().name(name).help(help).labelNames("model_name", "engine")
        .callback(cb -> {
          for (InstanceStatus s : status.get().instances()) {
            cb.call(value.applyAsDouble(s), model, String.valueOf(s.index()));
          }
        }).register(registry);
  }

  /** The exposition text of every metric now. */
  byte[] scrape() {
    ByteArrayOutputStream out = new ByteArrayOutputStream(8192);
    try {
      writer.write(out, registry.scrape(), EscapingScheme.ALLOW_UTF8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toByteArray();
  }

  String contentType() {
    return writer.getContentType();
  }
}
