package com.example.embed;

import static com.example.embed.ConstantStepModelProvider.PER_TOKEN_US;
import static com.example.embed.ConstantStepModelProvider.QUEUEING_US;
import static com.example.embed.ConstantStepModelProvider.SCHEDULING_US;
import static org.assertj.core.api.Assertions.assertThat;

import io.blis.api.BatchView;
import io.blis.api.Coefficients;
import io.blis.api.LatencyModel;
import io.blis.api.RequestView;
import io.blis.engine.EngineLimits;
import io.blis.engine.Simulation;
import io.blis.engine.capacity.CapacitySearch;
import io.blis.engine.capacity.RateWorkload;
import io.blis.engine.capacity.SloSet;
import io.blis.engine.cluster.Cluster;
import io.blis.engine.cluster.PolicySpec;
import io.blis.engine.cluster.PoolSpec;
import io.blis.engine.result.InstanceResult;
import io.blis.engine.result.RequestRecord;
import io.blis.engine.result.SimulationResult;
import io.blis.engine.validate.Ensemble;
import io.blis.engine.validate.PredictionInterval;
import io.blis.engine.validate.SimulationIntervals;
import io.blis.latency.LatencyModels;
import io.blis.latency.catalog.GpuCatalog;
import io.blis.latency.catalog.GpuSpec;
import io.blis.latency.catalog.ModelCatalog;
import io.blis.latency.catalog.ModelConfig;
import io.blis.workload.RequestOutcome;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import io.blis.workload.synthetic.LengthSpec;
import io.blis.workload.synthetic.SyntheticWorkload;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * Runs the engine with this project's plugins, each selected by name as {@code blis run
 * --latency-model constant-step --scheduler shortest-prompt-first --routing-policy pinned} does.
 */
class EmbedTest {

  private static final long STEP_US = 2_000; // the constant-step model's default

  @Test
  void singleInstanceWithLatencyModelAndSchedulerByName() {
    long models = ConstantStepModelProvider.CREATED.get();
    long steps = ConstantStepModelProvider.STEPS.get();
    long schedulers = ShortestPromptFirstProvider.CREATED.get();
    long comparisons = ShortestPromptFirstProvider.COMPARISONS.get();

    List<RequestSpec> requests = new ArrayList<>();
    // 50 requests 1 s apart: each has the instance to itself
    for (int id = 0; id < 50; id++) {
      requests.add(RequestSpec.simple(id, id * 1_000_000L, prompt(id, 100), 8));
    }
    // then 5 at once, longest prompt first; one runs at a time (max_num_seqs 1)
    for (int id = 50; id < 55; id++) {
      requests.add(RequestSpec.simple(id, 100_000_000L, prompt(id, 100 * (55 - id)), 4));
    }

    SimulationResult result = Cluster.builder()
        // the pool fields set here win over the defaults (Llama-2-7B on one H100)
        .overrides(PoolSpec.builder("flags").latencyModel("constant-step").maxNumSeqs(1).build())
        .scheduler("shortest-prompt-first")
        .toSimulation()
        .source(RequestSource.of(requests))
        .recordRequests(true)
        .build()
        .run();

    assertThat(result.overall().completedRequests()).isEqualTo(55);
    assertThat(result.requests()).allMatch(r -> r.outcome() == RequestOutcome.COMPLETED);
    assertThat(ConstantStepModelProvider.CREATED.get() - models).isEqualTo(1);
    assertThat(ShortestPromptFirstProvider.CREATED.get() - schedulers).isEqualTo(1);
    assertThat(ShortestPromptFirstProvider.COMPARISONS.get() - comparisons).isPositive();
    // one step per output token (each prompt fits one step): 50 x 8 + 5 x 4
    assertThat(ConstantStepModelProvider.STEPS.get() - steps).isEqualTo(420);
    assertThat(result.engine().steps()).isEqualTo(420);

    // a request alone: queueing, one step per token, scheduling once, processing per token
    long e2eAlone = QUEUEING_US + 8 * STEP_US + SCHEDULING_US + 8 * PER_TOKEN_US; // 16,480 us
    long ttftAlone = QUEUEING_US + STEP_US + SCHEDULING_US + PER_TOKEN_US; // 2,410 us
    for (RequestRecord r : result.requests().subList(0, 50)) {
      assertThat(r.e2eUs()).as("E2E of request %d", r.id()).isEqualTo(e2eAlone);
      assertThat(r.ttftUs()).as("TTFT of request %d", r.id()).isEqualTo(ttftAlone);
    }

    // the burst is served shortest prompt first, each request 4 steps after the one before it
    List<RequestRecord> burst = new ArrayList<>(result.requests().subList(50, 55));
    burst.sort(Comparator.comparingLong(RequestRecord::e2eUs));
    assertThat(burst).extracting(RequestRecord::id).containsExactly(54L, 53L, 52L, 51L, 50L);
    for (int k = 0; k < 5; k++) {
      assertThat(burst.get(k).e2eUs())
          .isEqualTo(QUEUEING_US + (4L * k + 4) * STEP_US + SCHEDULING_US + 4 * PER_TOKEN_US);
    }
  }

  @Test
  void clusterWithRouterByName() {
    long models = ConstantStepModelProvider.CREATED.get();
    long steps = ConstantStepModelProvider.STEPS.get();
    long routers = PinnedRouterProvider.CREATED.get();
    long routed = PinnedRouterProvider.ROUTED.get();

    List<RequestSpec> requests = new ArrayList<>();
    for (int id = 0; id < 300; id++) {
      requests.add(RequestSpec.simple(id, id * 10_000L, prompt(id, 64), 16));
    }

    SimulationResult result = Cluster.builder()
        .overrides(PoolSpec.builder("flags").latencyModel("constant-step").build())
        .instances(3)
        .router(new PolicySpec("pinned", Map.of("instance", "2")))
        .toSimulation()
        .source(RequestSource.of(requests))
        .recordRequests(true)
        .build()
        .run();

    assertThat(result.overall().completedRequests()).isEqualTo(300);
    assertThat(ConstantStepModelProvider.CREATED.get() - models).isEqualTo(3); // one per instance
    assertThat(PinnedRouterProvider.CREATED.get() - routers).isEqualTo(1);
    assertThat(PinnedRouterProvider.ROUTED.get() - routed).isEqualTo(300);

    // the router pins every request on instance 2; the others never step
    assertThat(result.requests()).allMatch(r -> r.instance() == 2);
    List<InstanceResult> instances = result.cluster().instances();
    assertThat(instances).extracting(i -> i.metrics().injectedRequests()).containsExactly(0L, 0L, 300L);
    assertThat(instances).extracting(InstanceResult::steps)
        .containsExactly(0L, 0L, ConstantStepModelProvider.STEPS.get() - steps);

    // the first request finds the instance idle; every later token comes one step after the last
    assertThat(result.requests().get(0).e2eUs())
        .isEqualTo(QUEUEING_US + 16 * STEP_US + SCHEDULING_US + 16 * PER_TOKEN_US);
    assertThat(result.overall().itl().count()).isEqualTo(300 * 15);
    assertThat(result.overall().itl().meanUs()).isEqualTo(STEP_US + PER_TOKEN_US);
  }

  @Test
  void aLatencyModelObjectWithoutAName() {
    // README, Embedding: a model given as an object to Simulation.builder()
    LatencyModel model = new LatencyModel() {
      public long stepTime(BatchView batch) { return 5_000 + 20L * batch.totalNewTokens(); } // us
      public long queueingTime(RequestView r) { return 2_000; }
      public long outputTokenProcessingTime() { return 50; }
      public long schedulingProcessingTime() { return 0; }
      public long preemptionProcessingTime() { return 0; }
    };
    RequestSource workload = SyntheticWorkload.poissonGaussian(
        5.0, 1_000, new LengthSpec(512, 128, 16, 2048), new LengthSpec(128, 32, 1, 512), 0, 42);
    SimulationResult result = Simulation.builder()
        .latencyModel(model)
        .limits(new EngineLimits(256, 2048, 0, 4096))
        .totalKvBlocks(7462)
        .source(workload)
        .build()
        .run();
    System.out.println(result.overall().e2e().meanUs() / 1000 + " ms mean E2E");
    String json = result.toJson();   // the result as blis run prints it

    assertThat(result.overall().completedRequests()).isEqualTo(1_000);
    // one request alone would take its queueing, a prefill step of its whole prompt (at most 2,048
    // tokens) and a decode step per later token: E2E lies between those bounds for the shortest
    // (16 prompt, 1 output) and, with batching, above them on average
    assertThat(result.overall().e2e().meanUs()).isGreaterThan(2_000 + 5_000 + 20 * 16);
    assertThat(json).contains("\"completed_requests\" : 1000");
  }

  @Test
  void aPredictionIntervalFromTheBundledEnsemble() {
    // README, Embedding: the 90% interval of mean E2E and TTFT of a trained-physics simulation
    ModelConfig llama = ModelCatalog.byName("llama-2-7b");
    GpuSpec h100 = GpuCatalog.byName("H100");
    Function<Coefficients, SimulationResult> simulate = c -> Simulation.builder()
        .latencyModel(LatencyModels.create("trained-physics", llama, h100, 1, c))
        .limits(new EngineLimits(256, 2048, 0, 4096))
        .totalKvBlocks(7462)
        .source(SyntheticWorkload.poissonGaussian(5.0, 300, new LengthSpec(512, 128, 16, 2048),
            new LengthSpec(128, 32, 1, 512), 0, 42))
        .build()
        .run();
    SimulationResult point = simulate.apply(Coefficients.empty());                  // bundled defaults
    Map<String, PredictionInterval> iv = SimulationIntervals.of(point, simulate, Ensemble.bundled(), 0.9);
    System.out.printf("mean E2E %.0f ms, 90%% interval %.0f - %.0f ms%n",
        iv.get("e2e_mean_ms").point(), iv.get("e2e_mean_ms").low(), iv.get("e2e_mean_ms").high());

    PredictionInterval e2e = iv.get("e2e_mean_ms");
    assertThat(e2e.point()).isEqualTo(point.overall().e2e().meanUs() / 1000.0);
    assertThat(e2e.low()).isLessThan(e2e.point());
    assertThat(e2e.high()).isGreaterThan(e2e.point());
    assertThat(iv.get("ttft_mean_ms").low()).isLessThan(iv.get("ttft_mean_ms").high());
  }

  @Test
  void aCapacitySearch() {
    // README, Embedding: the highest chatbot rate one H100 (Llama-2-7B, the defaults) serves with
    // TTFT p99 <= 500 ms and E2E p99 <= 20 s, as `blis capacity` searches it
    CapacitySearch search = new CapacitySearch(
        (instances, coefficients) -> Cluster.builder().instances(Math.max(1, instances)).toSimulation(),
        RateWorkload.preset("chatbot", 42),
        SloSet.parse("ttft_p99=500ms,e2e_p99=20s"),
        CapacitySearch.Settings.defaults());
    CapacitySearch.Found max = search.maxRate(null);   // null: the configured coefficients
    System.out.printf("%.2f req/s%n", max.rateRps());   // max.points(): every rate tried, its metrics

    assertThat(max.rateRps()).isGreaterThan(0);
    assertThat(max.at().meetsTargets()).isTrue();
    if (!max.atLeast()) {
      // the bracket's upper side: a higher rate tried and missed a target
      assertThat(max.points()).anyMatch(p -> p.rateRps() > max.rateRps() && !p.meetsTargets());
    }
  }

  @Test
  void theEngineBringsNoApplicationLibraries() {
    // what this build resolved for blis-engine: the simulator, not the CLI, servers or reports
    for (String absent : List.of("io.blis.cli.BlisCli", "picocli.CommandLine", "io.netty.channel.Channel",
        "io.prometheus.metrics.core.metrics.Counter", "org.slf4j.simple.SimpleLogger")) {
      assertThat(getClass().getClassLoader().getResource(absent.replace('.', '/') + ".class"))
          .as(absent).isNull();
    }
    assertThat(getClass().getClassLoader().getResource("META-INF/resources/webjars")).isNull();
    assertThat(getClass().getClassLoader().getResource("io/blis/engine/Simulation.class")).isNotNull();
  }

  /** {@code length} prompt tokens no other request shares (no prefix-cache hits). */
  private static int[] prompt(int id, int length) {
    int[] tokens = new int[length];
    for (int i = 0; i < length; i++) {
      tokens[i] = id * 1_000 + i;
    }
    return tokens;
  }
}
