package io.blis.cli;

import static io.blis.cli.BlisCliTest.blis;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.blis.cli.serve.ServeConfig;
import io.blis.cli.serve.SimulatedServer;
import io.blis.engine.cluster.Cluster;
import io.blis.engine.cluster.PolicyBundle;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Several models on one fleet: run, trace and replay, serve. */
class MultiModelCliTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  static final String FLEET = """
      pools:
        - {name: llama, instances: 2, model: llama-3.1-8b}
        - {name: qwen, instances: 1, model: qwen/qwen3-14b}
      router: {policy: least-loaded}
      slo:
        standard: {ttft_ms: 1000, e2e_ms: 20000}
      model_slo:
        qwen3-14b: {ttft_ms: 1, e2e_ms: 1}
      """;

  static final String SPEC = """
      seed: 4
      num_requests: 300
      clients:
        - id: chat
          model: llama-3.1-8b
          rate: 10
          input: {type: gaussian, mean: 600, std: 100, min: 20, max: 2000}
          output: {type: gaussian, mean: 100, std: 20, min: 10, max: 300}
        - id: code
          model: Qwen/Qwen3-14B
          rate: 4
          input: {type: gaussian, mean: 1500, std: 200, min: 20, max: 4000}
          output: {type: gaussian, mean: 200, std: 40, min: 10, max: 500}
        - id: typo
          model: llama-3.1-80b
          rate: 1
          input: {type: constant, value: 100}
          output: {type: constant, value: 10}
      """;

  @Test
  void eachModelsRequestsGoToItsPoolsAndTheResultHasMetricsPerModel(@TempDir Path dir) throws Exception {
    Path fleet = dir.resolve("fleet.yaml");
    Path spec = dir.resolve("spec.yaml");
    Path trace = dir.resolve("trace.csv");
    Files.writeString(fleet, FLEET);
    Files.writeString(spec, SPEC);
    BlisCliTest.Outcome r = blis("run", "--policy-config", fleet.toString(), "--workload-spec", spec.toString(),
        "--trace-out", trace.toString());
    assertThat(r.code()).as(r.err()).isZero();
    JsonNode out = JSON.readTree(r.out());
    JsonNode models = out.path("models");
    assertThat(models.fieldNames()).toIterable()
        .containsExactly("Qwen/Qwen3-14B", "llama-3.1-80b", "meta-llama/Llama-3.1-8B-Instruct");
    JsonNode typo = models.path("llama-3.1-80b");
    assertThat(typo.path("completed_requests").asLong()).isZero();
    assertThat(typo.path("rejected_by_reason").path("model_not_served").asLong())
        .isEqualTo(typo.path("injected_requests").asLong()).isPositive();
    // Qwen's own targets (1 ms) fail all its requests; Llama's class targets pass them
    assertThat(models.path("Qwen/Qwen3-14B").path("good_requests").asLong()).isZero();
    assertThat(models.path("meta-llama/Llama-3.1-8B-Instruct").path("good_requests").asLong()).isPositive();
    // instances 0-1 are Llama's, 2 Qwen's: every Qwen request, and only those, ran on the Qwen pool
    assertThat(out.path("instances").get(2).path("pool").asText()).isEqualTo("qwen");
    assertThat(out.path("instances").get(2).path("metrics").path("completed_requests").asLong())
        .isEqualTo(models.path("Qwen/Qwen3-14B").path("completed_requests").asLong()).isPositive();
    assertThat(out.path("instances").get(0).path("metrics").path("completed_requests").asLong()
        + out.path("instances").get(1).path("metrics").path("completed_requests").asLong())
        .isEqualTo(models.path("meta-llama/Llama-3.1-8B-Instruct").path("completed_requests").asLong());

    // the trace keeps each request's model; replayed, the same run
    assertThat(Files.readAllLines(trace).get(1)).endsWith(",timeout_us,model");
    BlisCliTest.Outcome again = blis("replay", "--policy-config", fleet.toString(), "--trace", trace.toString());
    assertThat(again.code()).as(again.err()).isZero();
    JsonNode replayed = JSON.readTree(again.out());
    assertThat(replayed.path("models")).isEqualTo(models);
    assertThat(replayed.path("overall")).isEqualTo(out.path("overall"));
  }

  @Test
  void serveListsEveryModelAndRoutesByTheRequestsModel(@TempDir Path dir) throws Exception {
    io.blis.engine.Simulation.Builder fleet = Cluster.builder().bundle(PolicyBundle.parse(FLEET, "fleet.yaml"))
        .toSimulation();
    List<String> names = List.of("meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen3-14B");
    ServeConfig config = new ServeConfig("127.0.0.1", 0, names, 2, ServeConfig.Limits.defaults(), true);
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    try (SimulatedServer server = SimulatedServer.start(fleet, config, 150_000)) {
      HttpResponse<String> list = http.send(HttpRequest.newBuilder(URI.create(server.baseUrl() + "/models")).GET()
          .build(), HttpResponse.BodyHandlers.ofString());
      assertThat(JSON.readTree(list.body()).path("data").findValuesAsText("id")).isEqualTo(names);
      // each model with its own pools' context limit: Qwen3-14B's 40,960 tokens, Llama's larger
      assertThat(JSON.readTree(list.body()).path("data").get(1).path("max_model_len").asInt()).isEqualTo(40_960);
      assertThat(JSON.readTree(list.body()).path("data").get(0).path("max_model_len").asInt()).isGreaterThan(40_960);
      for (String model : names) {
        HttpResponse<String> done = http.send(HttpRequest.newBuilder(URI.create(server.baseUrl() + "/completions"))
            .timeout(Duration.ofSeconds(20)).header("content-type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"" + model + "\",\"prompt\":\"a b c\",\"max_tokens\":3}"))
            .build(), HttpResponse.BodyHandlers.ofString());
        assertThat(done.statusCode()).as(done.body()).isEqualTo(200);
        assertThat(JSON.readTree(done.body()).path("model").asText()).isEqualTo(model);
      }
      // the Qwen request ran on the Qwen pool's instance (engine 2), labelled with its model (its
      // count reaches /metrics just after the response: read until it does, a bounded number of times)
      String qwenEngine = "";
      String body = "";
      for (int attempt = 0; attempt < 100 && !qwenEngine.endsWith(" 3.0"); attempt++) {
        if (attempt > 0) {
          Thread.sleep(20);
        }
        body = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/metrics")).GET()
            .build(), HttpResponse.BodyHandlers.ofString()).body();
        qwenEngine = body.lines().filter(l -> l.startsWith("vllm:generation_tokens_total{engine=\"2\""))
            .findFirst().orElse("");
      }
      assertThat(qwenEngine).contains("model_name=\"Qwen/Qwen3-14B\"").endsWith(" 3.0");
      assertThat(body).contains("vllm:num_requests_running{engine=\"0\",model_name=\"meta-llama/Llama-3.1-8B-Instruct\"}");
    }
  }
}
