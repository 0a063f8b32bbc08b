package io.blis.engine.serve;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.blis.engine.EngineLimits;
import io.blis.engine.LinearTestModel;
import io.blis.engine.result.RequestRecord;
import io.blis.engine.Simulation;
import io.blis.engine.result.SimulationResult;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class SimulatedServerTest {

  /** 4 ms per step plus 10 us per token; 1 ms of client-side processing at the first token. */
  private static Simulation.Builder deployment() {
    return Simulation.builder().latencyModel(new LinearTestModel(4000, 10, 0, 1000, 0, 0))
        .totalKvBlocks(2000).limits(new EngineLimits(64, 2048, 0, 1024));
  }

  private SimulatedServer server;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  @BeforeEach
  void start() {
    server = SimulatedServer.start(deployment(), ServeConfig.loopback(0, "sim-model"));
  }

  @AfterEach
  void stop() {
    server.close();
  }

  private HttpResponse<String> post(String path, String body) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create(server.baseUrl() + path))
        .timeout(Duration.ofSeconds(20)).header("content-type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> get(String path) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path)).GET().build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** The predicted TTFT and E2E (us) of one request alone on the deployment, by a batch run. */
  private static RequestRecord predictedAlone(int promptTokens, int outputTokens) {
    RequestSpec r = RequestSpec.simple(0, 0, IntStream.range(0, promptTokens).map(i -> 10 + i).toArray(), outputTokens);
    SimulationResult res = deployment().source(RequestSource.of(List.of(r))).recordRequests(true).build().run();
    return res.requests().get(0);
  }

  @Test
  void streamsEachTokenAtItsSimulatedTimeNeverEarly() throws Exception {
    RequestRecord predicted = predictedAlone(50, 30);
    String body = "{\"model\":\"sim-model\",\"prompt\":" + IntStream.range(0, 50).map(i -> 10 + i).boxed().toList()
        + ",\"max_tokens\":30,\"stream\":true,\"stream_options\":{\"include_usage\":true}}";
    long sent = System.nanoTime();
    HttpResponse<InputStream> res = http.send(HttpRequest.newBuilder(URI.create(server.baseUrl() + "/completions"))
        .header("content-type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
        HttpResponse.BodyHandlers.ofInputStream());
    assertThat(res.statusCode()).isEqualTo(200);
    assertThat(res.headers().firstValue("content-type")).hasValueSatisfying(v -> assertThat(v).startsWith("text/event-stream"));
    List<Long> tokenNanos = new ArrayList<>();
    List<JsonNode> events = new ArrayList<>();
    boolean done = false;
    try (BufferedReader in = new BufferedReader(new InputStreamReader(res.body(), StandardCharsets.UTF_8))) {
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        if (line.equals("data: [DONE]")) {
          done = true;
        } else if (line.startsWith("data: ")) {
          JsonNode n = OpenAiProtocol.JSON.readTree(line.substring(6));
          events.add(n);
          if (!n.get("choices").isEmpty()) {
            tokenNanos.add(System.nanoTime());
          }
        }
      }
    }
    assertThat(done).isTrue();
    assertThat(tokenNanos).hasSize(30);
    JsonNode usage = events.get(events.size() - 1).get("usage");
    assertThat(usage.get("prompt_tokens").asInt()).isEqualTo(50);
    assertThat(usage.get("completion_tokens").asInt()).isEqualTo(30);
    assertThat(events.get(29).at("/choices/0/finish_reason").asText()).isEqualTo("length");
    double ttftMs = (tokenNanos.get(0) - sent) / 1e6;
    double e2eMs = (tokenNanos.get(29) - sent) / 1e6;
    // a token can be late (this machine is shared) but never early
    assertThat(ttftMs).isGreaterThanOrEqualTo(predicted.ttftUs() / 1000.0 - 0.5);
    assertThat(e2eMs).isGreaterThanOrEqualTo(predicted.e2eUs() / 1000.0 - 0.5);
    assertThat(e2eMs).isLessThan(predicted.e2eUs() / 1000.0 + 1000);
    // tokens are spread over the run, one decode step apart on average
    double meanGapMs = (tokenNanos.get(29) - tokenNanos.get(0)) / 1e6 / 29;
    assertThat(meanGapMs).isGreaterThan(3.0);
    assertThat(server.deliveryLatenessUs().getTotalCount()).isEqualTo(30);
  }

  @Test
  void answersWithoutStreamingChatAndModelsHealthAndMetrics() throws Exception {
    HttpResponse<String> chat = post("/chat/completions",
        "{\"model\":\"sim-model\",\"messages\":[{\"role\":\"user\",\"content\":\"one two three\"}],\"max_tokens\":4}");
    assertThat(chat.statusCode()).isEqualTo(200);
    JsonNode c = OpenAiProtocol.JSON.readTree(chat.body());
    assertThat(c.get("object").asText()).isEqualTo("chat.completion");
    assertThat(c.at("/usage/completion_tokens").asInt()).isEqualTo(4);
    assertThat(c.at("/usage/prompt_tokens").asInt()).isEqualTo(1 + OpenAiProtocol.CHAT_TOKENS_PER_MESSAGE + 3 + OpenAiProtocol.CHAT_REPLY_TOKENS);

    JsonNode models = OpenAiProtocol.JSON.readTree(get("/v1/models").body());
    assertThat(models.at("/data/0/id").asText()).isEqualTo("sim-model");
    assertThat(models.at("/data/0/max_model_len").asInt()).isEqualTo(1024);
    assertThat(get("/health").statusCode()).isEqualTo(200);
    assertThat(OpenAiProtocol.JSON.readTree(get("/version").body()).get("version").asText())
        .isEqualTo("blis serve 0.1.0 (simulated vLLM)");

    Thread.sleep(2 * RealTimeDriver.STATUS_INTERVAL_US / 1000);
    String metrics = get("/metrics").body();
    assertThat(metrics).contains("vllm:num_requests_running{engine=\"0\",model_name=\"sim-model\"} 0.0");
    assertThat(metrics).contains("vllm:request_success_total{finished_reason=\"length\",model_name=\"sim-model\"} 1.0");
    assertThat(metrics).contains("vllm:generation_tokens_total{model_name=\"sim-model\"} 4.0");
    assertThat(metrics).contains("vllm:cache_config_info{block_size=\"16\",engine=\"0\",num_gpu_blocks=\"2000\"} 1");
    assertThat(metrics).contains("vllm:time_to_first_token_seconds_count{model_name=\"sim-model\"} 1");
  }

  @Test
  void badRequestsGetVllmStyleErrors() throws Exception {
    HttpResponse<String> unknown = post("/completions", "{\"model\":\"other\",\"prompt\":\"x\"}");
    assertThat(unknown.statusCode()).isEqualTo(404);
    assertThat(unknown.body()).contains("The model `other` does not exist.");
    HttpResponse<String> tooLong = post("/completions", "{\"prompt\":\"x y z\",\"max_tokens\":1022}");
    assertThat(tooLong.statusCode()).isEqualTo(400);
    assertThat(tooLong.body()).contains("maximum context length is 1024 tokens")
        .contains("you requested 1026 tokens (4 in the messages, 1022 in the completion)");
    assertThat(post("/completions", "{\"prompt\":").statusCode()).isEqualTo(400);
    assertThat(post("/completions", "{}").body()).contains("'prompt' is required");
    assertThat(get("/v1/nothing").statusCode()).isEqualTo(404);
    assertThat(get("/v1/completions").statusCode()).isEqualTo(405);
    // no max_tokens: up to max_model_len, as vLLM does
    HttpResponse<String> rest = post("/completions", "{\"prompt\":" + IntStream.range(0, 1000).boxed().toList() + "}");
    assertThat(OpenAiProtocol.JSON.readTree(rest.body()).at("/usage/completion_tokens").asInt()).isEqualTo(24);
  }

  @Test
  void aClientThatGoesAwayIsAbortedAndFreesItsBlocks() throws Exception {
    String body = "{\"prompt\":" + IntStream.range(0, 300).boxed().toList() + ",\"max_tokens\":700,\"stream\":true}";
    HttpResponse<InputStream> res = http.send(HttpRequest.newBuilder(URI.create(server.baseUrl() + "/completions"))
        .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofInputStream());
    InputStream in = res.body();
    in.read(new byte[64]);
    Thread.sleep(300);
    assertThat(server.status().get(0).running()).isEqualTo(1);
    assertThat(server.status().get(0).kvUsedBlocks()).isGreaterThan(18);
    in.close();
    long deadline = System.nanoTime() + 5_000_000_000L;
    while (server.status().get(0).running() > 0 && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
    assertThat(server.status().get(0).running()).isZero();
    assertThat(server.status().get(0).kvUsedBlocks()).isZero();
    SimulationResult result = server.stop();
    assertThat(result.overall().timedOutRequests()).isEqualTo(1);
  }

  @Test
  void concurrentStreamsShareTheSimulatedInstance() throws Exception {
    int n = 40;
    List<java.util.concurrent.CompletableFuture<HttpResponse<String>>> all = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      String body = "{\"prompt\":" + IntStream.range(0, 64).map(k -> k + 1000).boxed().toList()
          + ",\"max_tokens\":20,\"stream\":true}";
      all.add(http.sendAsync(HttpRequest.newBuilder(URI.create(server.baseUrl() + "/completions"))
          .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString()));
    }
    for (var f : all) {
      HttpResponse<String> r = f.get();
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(r.body().split("\n\n")).hasSize(21); // 20 tokens + [DONE]
    }
    SimulationResult result = server.stop();
    assertThat(result.overall().completedRequests()).isEqualTo(n);
    // shared 64-token prompts: all but the first find their prefix cached
    assertThat(result.engine().tokenHitRate()).isGreaterThan(0.5);
  }
}
