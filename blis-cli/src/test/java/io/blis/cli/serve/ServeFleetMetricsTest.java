package io.blis.cli.serve;

import static org.assertj.core.api.Assertions.assertThat;

import io.blis.cli.observe.PrometheusTextAccess;
import io.blis.cli.observe.PrometheusTextAccess.Series;
import io.blis.engine.EngineLimits;
import io.blis.engine.LinearTestModel;
import io.blis.engine.Simulation;
import io.blis.engine.autoscale.FleetConfig;
import io.blis.engine.flow.FlowControl;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code /metrics} of a served autoscaled pool behind a gateway: the replicas and the queue. */
class ServeFleetMetricsTest {

  private static final String MODEL = "sim-model";
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private double gauge(SimulatedServer server, String name) throws Exception {
    HttpResponse<String> res = http.send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + server.port() + "/metrics")).GET().build(),
        HttpResponse.BodyHandlers.ofString());
    List<Series> found = PrometheusTextAccess.parse(res.body()).stream()
        .filter(s -> s.name().equals(name) && MODEL.equals(s.labels().get("model_name"))).toList();
    assertThat(found).as(name).hasSize(1);
    return found.get(0).value();
  }

  @Test
  void theReplicasAndTheGatewayQueueAreGauges() throws Exception {
    // one replica at the start, three asked for at the first tick (0.2 s), ready at once
    FleetConfig fleet = new FleetConfig(1, 3, 1, 200_000, 1, 8, 1, 0, 0, 0, 0, 0, 0, 0, 0);
    Simulation.Builder deployment = Simulation.builder().instances(3)
        .latencyModels(i -> new LinearTestModel(4000, 10, 0, 1000, 0, 0))
        .totalKvBlocks(2000).limits(new EngineLimits(64, 2048, 0, 1024))
        .autoscaling(fleet, view -> 3, "three").flowControl(FlowControl.DEFAULTS);
    try (SimulatedServer server = SimulatedServer.start(deployment, ServeConfig.loopback(0, MODEL))) {
      assertThat(gauge(server, "blis:gateway_queue_depth")).isZero();
      assertThat(gauge(server, "blis:autoscaler_nodes")).isEqualTo(1);
      long deadline = System.nanoTime() + 10_000_000_000L;
      while (gauge(server, "blis:autoscaler_ready_replicas") < 3 && System.nanoTime() < deadline) {
        Thread.sleep(50);
      }
      assertThat(gauge(server, "blis:autoscaler_ready_replicas")).isEqualTo(3);
      assertThat(gauge(server, "blis:autoscaler_desired_replicas")).isEqualTo(3);
      assertThat(gauge(server, "blis:autoscaler_starting_replicas")).isZero();
    }
  }

  @Test
  void eachAutoscaledPoolHasItsOwnReplicaGauges() throws Exception {
    // pool a: 1 replica, 2 asked for at the first tick (0.2 s), ready at once; pool b: holds 1
    FleetConfig fleet = new FleetConfig(1, 2, 1, 200_000, 1, 8, 1, 0, 0, 0, 0, 0, 0, 0, 0);
    LinearTestModel m = new LinearTestModel(4000, 10, 0, 1000, 0, 0);
    Simulation.Builder deployment = Simulation.builder()
        .addPool(io.blis.engine.InstancePool.of("a", 2, i -> m, new EngineLimits(64, 2048, 0, 1024), 2000, 16))
        .addPool(io.blis.engine.InstancePool.of("b", 2, i -> m, new EngineLimits(64, 2048, 0, 1024), 2000, 16))
        .autoscaling("a", null, fleet, view -> 2, "two").autoscaling("b", null, fleet, view -> 1, "one");
    try (SimulatedServer server = SimulatedServer.start(deployment, ServeConfig.loopback(0, MODEL))) {
      long deadline = System.nanoTime() + 10_000_000_000L;
      while (poolGauge(server, "a", "ready") < 2 && System.nanoTime() < deadline) {
        Thread.sleep(50);
      }
      assertThat(poolGauge(server, "a", "ready")).isEqualTo(2);
      assertThat(poolGauge(server, "a", "desired")).isEqualTo(2);
      assertThat(poolGauge(server, "b", "ready")).isEqualTo(1);
      assertThat(poolGauge(server, "b", "draining")).isZero();
      assertThat(gauge(server, "blis:autoscaler_ready_replicas")).isEqualTo(3); // the pools' sum
    }
  }

  private double poolGauge(SimulatedServer server, String pool, String state) throws Exception {
    HttpResponse<String> res = http.send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + server.port() + "/metrics")).GET().build(),
        HttpResponse.BodyHandlers.ofString());
    List<Series> found = PrometheusTextAccess.parse(res.body()).stream()
        .filter(s -> s.name().equals("blis:autoscaler_pool_replicas") && pool.equals(s.labels().get("pool"))
            && state.equals(s.labels().get("state"))).toList();
    assertThat(found).as(pool + " " + state).hasSize(1);
    return found.get(0).value();
  }
}
