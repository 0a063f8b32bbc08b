package io.blis.engine;

import io.blis.engine.result.SimulationResult;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.blis.api.Coefficients;
import io.blis.api.DeploymentSpec;
import io.blis.api.HardwareSpec;
import io.blis.api.LatencyModelProvider;
import io.blis.api.ModelSpec;
import io.blis.api.ProviderContext;
import io.blis.api.Providers;
import io.blis.api.SchedulerProvider;
import io.blis.api.UnknownProviderException;
import io.blis.workload.RequestSource;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Plugins found by ServiceLoader and selected by name drive the engine. */
class PluginPathTest {

  private static ProviderContext context(Map<String, String> options) {
    return new ProviderContext() {
      @Override
      public ModelSpec model() {
        return null;
      }

      @Override
      public HardwareSpec hardware() {
        return null;
      }

      @Override
      public DeploymentSpec deployment() {
        return null;
      }

      @Override
      public Coefficients coefficients() {
        return Coefficients.empty();
      }

      @Override
      public Map<String, String> options() {
        return options;
      }
    };
  }

  private static SimulationResult runWith(String latencyModel, Map<String, String> options) {
    LatencyModelProvider p = Providers.select(LatencyModelProvider.class, latencyModel);
    return Simulation.builder().latencyModel(p.create(context(options)))
        .scheduler(Providers.select(SchedulerProvider.class, "fcfs").create(context(options)))
        .source(RequestSource.of(List.of(TestRequests.req(1, 0, 40, 4))))
        .recordRequests(true).build().run();
  }

  @Test
  void testOnlyProviderIsSelectedByNameAndChangesResults() {
    SimulationResult def = runWith("test-fixed-step", Map.of());
    SimulationResult slow = runWith("test-fixed-step", Map.of("step_us", "5000"));
    assertThat(def.requests().get(0).e2eUs()).isEqualTo(4 * 777);
    assertThat(slow.requests().get(0).e2eUs()).isEqualTo(4 * 5000);
  }

  @Test
  void builtInSchedulersAreRegisteredLikePlugins() {
    assertThat(Providers.names(SchedulerProvider.class))
        .contains("fcfs", "priority-fcfs", "sjf");
    assertThatThrownBy(() -> Providers.select(SchedulerProvider.class, "nope"))
        .isInstanceOf(UnknownProviderException.class)
        .hasMessageContaining("fcfs, priority-fcfs, reverse-priority, sjf");
  }
}
