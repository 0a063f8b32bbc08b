package io.blis.cli.serve;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.blis.cli.observe.PrometheusTextAccess;
import io.blis.cli.observe.PrometheusTextAccess.Series;
import io.blis.engine.EngineLimits;
import io.blis.engine.LinearTestModel;
import io.blis.engine.Simulation;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@code /metrics} of {@code blis serve}: vLLM's V1 names, labels and buckets, and their counts. */
class ServeMetricsTest {

  private static final String MODEL = "sim-model";
  /** The deployment's max_model_len: the token histograms' buckets are 1, 2, 5, ... up to it. */
  private static final int MAX_MODEL_LEN = 1024;
  private static final double[] TOKEN_BUCKETS = {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000};

  /** Every histogram vLLM's V1 engine exposes that the simulated server has, with its buckets. */
  private static final Map<String, double[]> HISTOGRAMS = Map.ofEntries(
      Map.entry("vllm:time_to_first_token_seconds", new double[] {0.001, 0.005, 0.01, 0.02, 0.04,
          0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0,
          640.0, 2560.0}),
      Map.entry("vllm:inter_token_latency_seconds", itlBuckets()),
      Map.entry("vllm:time_per_output_token_seconds", itlBuckets()),
      Map.entry("vllm:request_time_per_output_token_seconds", itlBuckets()),
      Map.entry("vllm:e2e_request_latency_seconds", requestBuckets()),
      Map.entry("vllm:request_queue_time_seconds", requestBuckets()),
      Map.entry("vllm:request_prefill_time_seconds", requestBuckets()),
      Map.entry("vllm:request_decode_time_seconds", requestBuckets()),
      Map.entry("vllm:request_inference_time_seconds", requestBuckets()),
      Map.entry("vllm:request_prompt_tokens", TOKEN_BUCKETS),
      Map.entry("vllm:request_generation_tokens", TOKEN_BUCKETS),
      Map.entry("vllm:request_params_max_tokens", TOKEN_BUCKETS),
      Map.entry("vllm:request_max_num_generation_tokens", TOKEN_BUCKETS),
      Map.entry("vllm:request_params_n", new double[] {1, 2, 5, 10, 20}),
      Map.entry("vllm:iteration_tokens_total", new double[] {1, 8, 16, 32, 64, 128, 256, 512,
          1024, 2048, 4096, 8192, 16384}));

  private static double[] itlBuckets() {
    return new double[] {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5,
        5.0, 7.5, 10.0, 20.0, 40.0, 80.0};
  }

  private static double[] requestBuckets() {
    return new double[] {0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0,
        50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
  }

  private static final List<String> COUNTERS = List.of("vllm:prompt_tokens_total",
      "vllm:generation_tokens_total", "vllm:num_preemptions_total",
      "vllm:prefix_cache_queries_total", "vllm:prefix_cache_hits_total");
  private static final List<String> GAUGES = List.of("vllm:num_requests_running",
      "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc");

  private SimulatedServer server;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  @BeforeEach
  void start() {
    Simulation.Builder deployment = Simulation.builder()
        .latencyModel(new LinearTestModel(4000, 10, 0, 1000, 0, 0))
        .totalKvBlocks(2000).limits(new EngineLimits(64, 2048, 0, MAX_MODEL_LEN));
    server = SimulatedServer.start(deployment, ServeConfig.loopback(0, MODEL));
  }

  @AfterEach
  void stop() {
    server.close();
  }

  private List<Series> scrape() throws Exception {
    HttpResponse<String> res = http.send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + server.port() + "/metrics")).GET().build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(res.statusCode()).isEqualTo(200);
    return PrometheusTextAccess.parse(res.body());
  }

  /** The value of the series {@code name} of engine 0 with {@code extra} labels (key, value...). */
  private static double value(List<Series> scrape, String name, String... extra) {
    Predicate<Series> match = s -> s.name().equals(name) && MODEL.equals(s.labels().get("model_name"))
        && "0".equals(s.labels().get("engine"));
    for (int i = 0; i < extra.length; i += 2) {
      String k = extra[i];
      String v = extra[i + 1];
      match = match.and(s -> v.equals(s.labels().get(k)));
    }
    List<Series> found = scrape.stream().filter(match).toList();
    assertThat(found).as("series %s %s", name, Arrays.toString(extra)).hasSize(1);
    return found.get(0).value();
  }

  private static int[] prompt(int first, int length) {
    return IntStream.range(first, first + length).toArray();
  }

  private HttpResponse<String> complete(int[] prompt, int maxTokens) throws Exception {
    String body = "{\"model\":\"" + MODEL + "\",\"prompt\":" + Arrays.toString(prompt)
        + ",\"max_tokens\":" + maxTokens + "}";
    return http.send(HttpRequest.newBuilder(URI.create(server.baseUrl() + "/completions"))
        .timeout(Duration.ofSeconds(20)).header("content-type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
  }

  /** Streams a completion and closes the connection after the first token arrived. */
  private void abortAfterFirstToken(int[] prompt, int maxTokens) throws Exception {
    byte[] body = ("{\"prompt\":" + Arrays.toString(prompt) + ",\"max_tokens\":" + maxTokens
        + ",\"stream\":true}").getBytes(StandardCharsets.UTF_8);
    try (Socket socket = new Socket("127.0.0.1", server.port())) {
      socket.setSoTimeout(20_000);
      socket.getOutputStream().write(("POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
          + "Content-Type: application/json\r\nContent-Length: " + body.length + "\r\n\r\n")
          .getBytes(StandardCharsets.US_ASCII));
      socket.getOutputStream().write(body);
      BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
      assertThat(in.readLine()).isEqualTo("HTTP/1.1 200 OK");
      String line;
      do {
        line = in.readLine();
      } while (line != null && !line.startsWith("data: {"));
      assertThat(line).as("a first token").isNotNull();
    }
  }

  /** Scrapes until {@code done} holds (the status snapshot and aborts lag), at most 20 s. */
  private List<Series> scrapeUntil(Predicate<List<Series>> done) throws Exception {
    long deadline = System.nanoTime() + 20_000_000_000L;
    List<Series> s = scrape();
    while (!done.test(s) && System.nanoTime() < deadline) {
      Thread.sleep(50);
      s = scrape();
    }
    return s;
  }

  @Test
  void beforeAnyRequestEverySeriesIsListedWithVllmsLabelsAndBuckets() throws Exception {
    List<Series> s = scrape();
    for (var h : HISTOGRAMS.entrySet()) {
      String name = h.getKey();
      assertThat(value(s, name + "_count")).as(name).isZero();
      assertThat(value(s, name + "_sum")).as(name).isZero();
      List<Double> bounds = new ArrayList<>();
      for (Series x : s) {
        if (x.name().equals(name + "_bucket")) {
          assertThat(x.labels()).as(name).containsEntry("model_name", MODEL).containsEntry("engine", "0");
          assertThat(x.value()).as(name).isZero();
          bounds.add(Double.parseDouble(x.labels().get("le").replace("+Inf", "Infinity")));
        }
      }
      List<Double> expected = new ArrayList<>(Arrays.stream(h.getValue()).boxed().toList());
      expected.add(Double.POSITIVE_INFINITY);
      assertThat(bounds).as(name + " buckets").isEqualTo(expected);
    }
    for (String reason : List.of("stop", "length", "abort")) {
      assertThat(value(s, "vllm:request_success_total", "finished_reason", reason)).isZero();
    }
    for (String c : COUNTERS) {
      assertThat(value(s, c)).as(c).isZero();
    }
    for (String g : GAUGES) {
      assertThat(value(s, g)).as(g).isZero();
    }
    // every vLLM series carries model_name and engine (cache_config_info: engine, as in vLLM)
    for (Series x : s) {
      if (x.name().startsWith("vllm:") && !x.name().equals("vllm:cache_config_info")) {
        assertThat(x.labels()).as(x.toString()).containsEntry("model_name", MODEL).containsEntry("engine", "0");
      }
    }
  }

  @Test
  void countsWhatWasServedAndTheAbortedRequest() throws Exception {
    int[][] prompts = {prompt(10, 20), prompt(100, 35), prompt(200, 50)};
    int[] outputs = {5, 8, 3};
    for (int i = 0; i < prompts.length; i++) {
      assertThat(complete(prompts[i], outputs[i]).statusCode()).isEqualTo(200);
    }
    int[] abortedPrompt = prompt(300, 30);
    abortAfterFirstToken(abortedPrompt, 900);
    int completedPrompt = 20 + 35 + 50;
    int completedOutput = 5 + 8 + 3;

    List<Series> s = scrapeUntil(x -> value(x, "vllm:request_success_total", "finished_reason", "abort") >= 1
        && value(x, "vllm:prompt_tokens_total") >= completedPrompt + 30
        && value(x, "vllm:iteration_tokens_total_sum") >= completedPrompt + 30 + completedOutput);

    assertThat(value(s, "vllm:request_success_total", "finished_reason", "length")).isEqualTo(3);
    assertThat(value(s, "vllm:request_success_total", "finished_reason", "stop")).isZero();
    assertThat(value(s, "vllm:request_success_total", "finished_reason", "abort")).isEqualTo(1);

    // the per-request histograms count the completed requests
    assertThat(value(s, "vllm:request_prompt_tokens_count")).isEqualTo(3);
    assertThat(value(s, "vllm:request_prompt_tokens_sum")).isEqualTo(completedPrompt);
    assertThat(value(s, "vllm:request_prompt_tokens_bucket", "le", "20.0")).isEqualTo(1);
    assertThat(value(s, "vllm:request_prompt_tokens_bucket", "le", "50.0")).isEqualTo(3);
    assertThat(value(s, "vllm:request_generation_tokens_count")).isEqualTo(3);
    assertThat(value(s, "vllm:request_generation_tokens_sum")).isEqualTo(completedOutput);
    assertThat(value(s, "vllm:request_params_max_tokens_sum")).isEqualTo(completedOutput);
    assertThat(value(s, "vllm:request_max_num_generation_tokens_sum")).isEqualTo(completedOutput);
    assertThat(value(s, "vllm:request_params_n_sum")).isEqualTo(3);
    for (String name : List.of("vllm:request_queue_time_seconds", "vllm:request_prefill_time_seconds",
        "vllm:request_decode_time_seconds", "vllm:request_inference_time_seconds",
        "vllm:request_time_per_output_token_seconds", "vllm:e2e_request_latency_seconds")) {
      assertThat(value(s, name + "_count")).as(name).isEqualTo(3);
      assertThat(value(s, name + "_sum")).as(name).isGreaterThanOrEqualTo(0);
    }
    // inference = prefill + decode, request by request, hence in sum
    assertThat(value(s, "vllm:request_inference_time_seconds_sum")).isCloseTo(
        value(s, "vllm:request_prefill_time_seconds_sum") + value(s, "vllm:request_decode_time_seconds_sum"),
        within(1e-9));
    // each request prefills in one step and decodes a token a step: decode > 0, prefill > 0
    assertThat(value(s, "vllm:request_prefill_time_seconds_sum")).isGreaterThan(0);
    assertThat(value(s, "vllm:request_decode_time_seconds_sum")).isGreaterThan(0);

    // per token: a TTFT per request that got a token, the older TPOT name counts as the ITL does
    assertThat(value(s, "vllm:time_to_first_token_seconds_count")).isEqualTo(4);
    assertThat(value(s, "vllm:inter_token_latency_seconds_count"))
        .isGreaterThanOrEqualTo(completedOutput - 3)
        .isEqualTo(value(s, "vllm:time_per_output_token_seconds_count"));

    // engine counters: prompts when prefilled (the aborted one's too), the steps' tokens
    assertThat(value(s, "vllm:prompt_tokens_total")).isEqualTo(completedPrompt + 30);
    assertThat(value(s, "vllm:generation_tokens_total")).isGreaterThanOrEqualTo(completedOutput + 1);
    assertThat(value(s, "vllm:iteration_tokens_total_count")).isGreaterThanOrEqualTo(completedOutput);
    assertThat(value(s, "vllm:iteration_tokens_total_bucket", "le", "+Inf"))
        .isEqualTo(value(s, "vllm:iteration_tokens_total_count"));
  }
}
