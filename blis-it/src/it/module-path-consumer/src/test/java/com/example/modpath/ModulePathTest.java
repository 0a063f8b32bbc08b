package com.example.modpath;

import static com.example.embed.ConstantStepModelProvider.PER_TOKEN_US;
import static com.example.embed.ConstantStepModelProvider.QUEUEING_US;
import static com.example.embed.ConstantStepModelProvider.SCHEDULING_US;
import static org.assertj.core.api.Assertions.assertThat;

import com.example.embed.ConstantStepModelProvider;
import com.example.embed.ShortestPromptFirstProvider;
import io.blis.api.LatencyModelProvider;
import io.blis.api.Providers;
import io.blis.engine.cluster.Cluster;
import io.blis.engine.cluster.PoolSpec;
import io.blis.engine.result.RequestRecord;
import io.blis.engine.result.SimulationResult;
import io.blis.workload.RequestOutcome;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The single-instance run of embed-consumer, with BLIS and this project as named modules. */
class ModulePathTest {

  private static final long STEP_US = 2_000;

  @Test
  void runsOnTheModulePath() {
    assertThat(ModulePathTest.class.getModule().getName()).isEqualTo("com.example.modpath");
    assertThat(Cluster.class.getModule().getName()).isEqualTo("io.blis.engine");
    assertThat(Cluster.class.getModule().getDescriptor().isAutomatic()).isTrue();
    assertThat(Providers.class.getModule().getName()).isEqualTo("io.blis.api");
    // the built-in models (from io.blis.latency's META-INF/services) and ours (from provides)
    assertThat(Providers.names(LatencyModelProvider.class)).contains("constant-step", "trained-physics");
  }

  @Test
  void singleInstanceWithLatencyModelAndSchedulerByName() {
    long models = ConstantStepModelProvider.CREATED.get();
    long steps = ConstantStepModelProvider.STEPS.get();
    long schedulers = ShortestPromptFirstProvider.CREATED.get();

    List<RequestSpec> requests = new ArrayList<>();
    for (int id = 0; id < 50; id++) {
      requests.add(RequestSpec.simple(id, id * 1_000_000L, prompt(id, 100), 8));
    }
    SimulationResult result = Cluster.builder()
        .overrides(PoolSpec.builder("flags").latencyModel("constant-step").build())
        .scheduler("shortest-prompt-first")
        .toSimulation()
        .source(RequestSource.of(requests))
        .recordRequests(true)
        .build()
        .run();

    assertThat(result.requests()).hasSize(50).allMatch(r -> r.outcome() == RequestOutcome.COMPLETED);
    assertThat(ConstantStepModelProvider.CREATED.get() - models).isEqualTo(1);
    assertThat(ShortestPromptFirstProvider.CREATED.get() - schedulers).isEqualTo(1);
    assertThat(ConstantStepModelProvider.STEPS.get() - steps).isEqualTo(50 * 8);
    for (RequestRecord r : result.requests()) {
      assertThat(r.e2eUs()).isEqualTo(QUEUEING_US + 8 * STEP_US + SCHEDULING_US + 8 * PER_TOKEN_US);
    }
  }

  private static int[] prompt(int id, int length) {
    int[] tokens = new int[length];
    for (int i = 0; i < length; i++) {
      tokens[i] = id * 1_000 + i;
    }
    return tokens;
  }
}
