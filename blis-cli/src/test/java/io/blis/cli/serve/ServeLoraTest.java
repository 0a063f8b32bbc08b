package io.blis.cli.serve;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.blis.cli.observe.PrometheusTextAccess;
import io.blis.cli.observe.PrometheusTextAccess.Series;
import io.blis.engine.EngineLimits;
import io.blis.engine.LinearTestModel;
import io.blis.engine.Simulation;
import io.blis.engine.lora.LoraCosts;
import io.blis.engine.lora.LoraSpec;
import io.blis.latency.catalog.GpuCatalog;
import io.blis.latency.catalog.ModelCatalog;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** {@code blis serve} with LoRA adapters answered to by name, as vLLM's {@code --lora-modules}. */
class ServeLoraTest {

  private static final String MODEL = "sim-model";
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private static Simulation.Builder deployment() {
    return Simulation.builder().instances(1)
        .latencyModels(i -> new LinearTestModel(4000, 10, 0, 1000, 0, 0))
        .totalKvBlocks(2000).limits(new EngineLimits(64, 2048, 0, 1024))
        .lora("", LoraCosts.of(LoraSpec.of(2), ModelCatalog.resolve("meta-llama/llama-3.1-8b-instruct"),
            GpuCatalog.resolve("H100"), 1, 32));
  }

  private HttpResponse<String> get(SimulatedServer server, String path) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path)).GET().build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private CompletableFuture<HttpResponse<String>> complete(SimulatedServer server, String model, int maxTokens) {
    String body = "{\"model\":\"" + model + "\",\"prompt\":\"one two three four\",\"max_tokens\":" + maxTokens
        + ",\"ignore_eos\":true}";
    return http.sendAsync(HttpRequest.newBuilder(URI.create(server.baseUrl() + "/completions"))
        .timeout(Duration.ofSeconds(60)).header("content-type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void adaptersAreListedServedAndReportedAsVllmDoes() throws Exception {
    ServeConfig config = new ServeConfig("127.0.0.1", 0, List.of(MODEL), 2, ServeConfig.Limits.defaults(), false,
        List.of("sql", "chat"));
    try (SimulatedServer server = SimulatedServer.start(deployment(), config)) {
      JsonNode models = OpenAiProtocol.JSON.readTree(get(server, "/v1/models").body());
      assertThat(models.at("/data/1/id").asText()).isEqualTo("sql");
      assertThat(models.at("/data/1/parent").asText()).isEqualTo(MODEL);
      assertThat(models.at("/data/2/id").asText()).isEqualTo("chat");
      HttpResponse<String> unknown = complete(server, "nope", 2).get();
      assertThat(unknown.statusCode()).isEqualTo(404);
      assertThat(unknown.body()).contains("The model `nope` does not exist.");

      // 400 tokens of 4 ms or more each: the request runs for over 1.6 s of wall time while it is sampled
      CompletableFuture<HttpResponse<String>> running = complete(server, "sql", 400);
      boolean seen = false;
      long deadline = System.nanoTime() + 30_000_000_000L;
      while (!seen && !running.isDone() && System.nanoTime() < deadline) {
        for (Series s : PrometheusTextAccess.parse(get(server, "/metrics").body())) {
          if (s.name().equals("vllm:lora_requests_info")) {
            assertThat(s.labels()).containsEntry("max_lora", "2");
            seen |= s.labels().get("running_lora_adapters").equals("sql");
          }
        }
        Thread.sleep(20);
      }
      assertThat(seen).as("an engine listed sql among its running adapters").isTrue();
      assertThat(running.get().statusCode()).isEqualTo(200);
      assertThat(complete(server, MODEL, 2).get().statusCode()).isEqualTo(200);
    }
  }

  @Test
  void adapterNamesMustDifferFromTheModels() {
    assertThatThrownBy(() -> new ServeConfig("127.0.0.1", 0, List.of(MODEL), 2, ServeConfig.Limits.defaults(), false,
        List.of(MODEL))).hasMessageContaining("--lora-modules: adapter names must be non-blank and differ");
  }
}
