package io.blis.cli.serve;

import static org.assertj.core.api.Assertions.assertThat;

import io.blis.cli.observe.PrometheusTextAccess;
import io.blis.cli.observe.PrometheusTextAccess.Series;
import io.blis.engine.EngineLimits;
import io.blis.engine.LinearTestModel;
import io.blis.engine.Simulation;
import io.blis.engine.spec.AcceptanceProfile;
import io.blis.engine.spec.SpeculativeConfig;
import io.blis.engine.spec.SpeculativeMethod;
import io.blis.engine.spec.SpeculativeModel;
import io.blis.engine.spec.Speculator;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** {@code blis serve} exports vLLM's speculative-decoding counters. */
class ServeSpecDecodeTest {

  @Test
  void specDecodeCountersAreExportedPerEngineAndPosition() throws Exception {
    SpeculativeConfig c = new SpeculativeConfig(SpeculativeMethod.EAGLE3, 3,
        AcceptanceProfile.ofPositionRates(0.8, 0.5, 0.3), "test", "", 1, 0);
    Simulation.Builder deployment = Simulation.builder().instances(1)
        .latencyModels(i -> new SpeculativeModel(new LinearTestModel(2000, 1, 0, 0, 0, 0), null,
            new Speculator(c, 3, i)))
        .totalKvBlocks(2000).limits(new EngineLimits(64, 2048, 0, 4096));
    ServeConfig config = new ServeConfig("127.0.0.1", 0, List.of("sim-model"), 2, ServeConfig.Limits.defaults(),
        false, List.of());
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    try (SimulatedServer server = SimulatedServer.start(deployment, config)) {
      String body = "{\"model\":\"sim-model\",\"prompt\":\"one two three\",\"max_tokens\":60,\"ignore_eos\":true}";
      HttpResponse<String> done = http.send(HttpRequest.newBuilder(URI.create(server.baseUrl() + "/completions"))
          .timeout(Duration.ofSeconds(60)).header("content-type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(done.statusCode()).isEqualTo(200);
      Map<String, Double> totals = new TreeMap<>();
      Map<String, Double> perPosition = new TreeMap<>();
      // the engines' status is a snapshot the server refreshes as it runs: scrape until it shows the request
      long deadline = System.nanoTime() + 20_000_000_000L;
      do {
        totals.clear();
        perPosition.clear();
        String metrics = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port()
            + "/metrics")).GET().build(), HttpResponse.BodyHandlers.ofString()).body();
        for (Series s : PrometheusTextAccess.parse(metrics)) {
          if (s.name().startsWith("vllm:spec_decode_")) {
            assertThat(s.labels()).containsEntry("engine", "0");
            if (s.labels().containsKey("position")) {
              perPosition.put(s.labels().get("position"), s.value());
            } else {
              totals.put(s.name(), s.value());
            }
          }
        }
        if (totals.getOrDefault("vllm:spec_decode_num_drafts_total", 0.0)
            + totals.getOrDefault("vllm:spec_decode_num_accepted_tokens_total", 0.0) >= 59) {
          break;
        }
        Thread.sleep(20);
      } while (System.nanoTime() < deadline);
      double drafts = totals.get("vllm:spec_decode_num_drafts_total");
      double accepted = totals.get("vllm:spec_decode_num_accepted_tokens_total");
      assertThat(drafts).isPositive();
      assertThat(totals.get("vllm:spec_decode_num_draft_tokens_total")).isEqualTo(3 * drafts);
      assertThat(perPosition).containsOnlyKeys("0", "1", "2");
      assertThat(perPosition.values().stream().mapToDouble(Double::doubleValue).sum()).isEqualTo(accepted);
      // the 59 tokens after the first came one per verification plus its accepted drafts (the last
      // verification may accept more than the request still needed)
      assertThat(drafts + accepted).isBetween(59.0, 62.0);
    }
  }
}
