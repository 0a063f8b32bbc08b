package io.blis.engine;

import static io.blis.engine.TestRequests.req;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.blis.engine.models.ModelRouting;
import io.blis.engine.policy.Routers;
import io.blis.engine.result.MetricsSummary;
import io.blis.engine.result.RequestRecord;
import io.blis.engine.result.SimulationResult;
import io.blis.workload.RequestOutcome;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Several models on one fleet: each request to the pools serving the model it names. */
class MultiModelTest {

  private static InstancePool pool(String name, int instances, long stepUs) {
    LinearTestModel m = LinearTestModel.constant(stepUs);
    return InstancePool.of(name, instances, i -> m, EngineLimits.defaults(), 1000, 16);
  }

  private static ModelRouting routing(ModelRouting.Targets alphaSlo) {
    return new ModelRouting(List.of(
        new ModelRouting.Served("org/Alpha-7B", Set.of("alpha", "Alpha-7B"), Set.of("a"), Routers.roundRobin(), alphaSlo),
        new ModelRouting.Served("org/Beta-70B", Set.of("beta"), Set.of("b1", "b2"), Routers.roundRobin(), null)));
  }

  private static SimulationResult run(ModelRouting models, List<RequestSpec> reqs) {
    Simulation.Builder b = Simulation.builder().source(RequestSource.of(reqs)).recordRequests(true)
        .router(Routers.roundRobin()).addPool(pool("a", 2, 1_000)).addPool(pool("b1", 1, 3_000))
        .addPool(pool("b2", 1, 3_000)).sloTarget("standard", new SloTarget(1, 1));
    if (models != null) {
      b.models(models);
    }
    return b.build().run();
  }

  @Test
  void requestsGoToThePoolsOfTheirModelAndUnservedOnesAreRefused() {
    List<RequestSpec> reqs = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      String model = switch (i % 4) {
        case 0 -> "alpha";
        case 1 -> "ORG/BETA-70B"; // any case
        case 2 -> "gamma";
        default -> "";
      };
      reqs.add(req(i, i * 500L, 50, 5).withModel(model));
    }
    SimulationResult r = run(routing(null), reqs);
    for (RequestRecord rec : r.requests()) {
      String model = reqs.get((int) rec.id()).model();
      switch ((int) rec.id() % 4) {
        case 0 -> assertThat(rec.instance()).as(model).isIn(0, 1);
        case 1 -> assertThat(rec.instance()).as(model).isIn(2, 3);
        case 2 -> {
          assertThat(rec.outcome()).isEqualTo(RequestOutcome.REJECTED);
          assertThat(rec.rejectReason()).isEqualTo(ModelRouting.NOT_SERVED);
        }
        default -> assertThat(rec.outcome()).isEqualTo(RequestOutcome.COMPLETED); // any instance
      }
    }
    Map<String, MetricsSummary> models = r.cluster().models();
    assertThat(models.keySet()).containsExactly("gamma", "org/Alpha-7B", "org/Beta-70B");
    assertThat(models.get("org/Alpha-7B").completedRequests()).isEqualTo(10);
    assertThat(models.get("org/Beta-70B").completedRequests()).isEqualTo(10);
    assertThat(models.get("gamma").rejectedRequests()).isEqualTo(10);
    assertThat(models.get("gamma").rejectedByReason()).isEqualTo(Map.of(ModelRouting.NOT_SERVED, 10L));
    assertThat(r.overall().completedRequests()).isEqualTo(30);
    // Beta's steps are three times Alpha's
    assertThat(models.get("org/Beta-70B").e2e().meanUs()).isGreaterThan(2.5 * models.get("org/Alpha-7B").e2e().meanUs());
  }

  @Test
  void aModelsOwnTargetsReplaceItsClasssAndRequestsNamingNoneAreAsBefore() {
    List<RequestSpec> reqs = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      reqs.add(req(i, i * 100_000L, 50, 5).withModel(i % 2 == 0 ? "alpha" : "beta"));
    }
    // the class target (1 us) fails everything; Alpha's own (1 s) passes its requests
    SimulationResult r = run(routing(new ModelRouting.Targets(1000, 1000)), reqs);
    assertThat(r.cluster().models().get("org/Alpha-7B").goodRequests()).isEqualTo(5);
    assertThat(r.cluster().models().get("org/Beta-70B").goodRequests()).isZero();
    // without model routing, and with requests naming no model, nothing per model and the same run
    List<RequestSpec> unnamed = reqs.stream().map(s -> s.withModel("")).toList();
    SimulationResult plain = run(null, unnamed);
    assertThat(plain.cluster().models()).isEmpty();
    assertThat(run(routing(null), unnamed).toJson()).isEqualTo(plain.toJson());
  }

  @Test
  void aDecisionTraceListsTheModelsInstancesOnly() {
    List<RequestSpec> reqs = List.of(req(1, 0, 50, 5).withModel("beta"), req(2, 10, 50, 5).withModel("alpha"));
    SimulationResult r = Simulation.builder().source(RequestSource.of(reqs)).router(Routers.roundRobin())
        .addPool(pool("a", 2, 1_000)).addPool(pool("b1", 1, 3_000)).addPool(pool("b2", 1, 3_000))
        .models(routing(null)).traceDecisions(1).build().run();
    List<io.blis.engine.result.RoutingDecision> routing = new ArrayList<>();
    r.cluster().decisions().forEach(d -> {
      if (d.kind().equals("routing")) {
        routing.add(d);
      }
    });
    assertThat(routing.get(0).candidates()).extracting(io.blis.engine.result.RoutingDecision.Candidate::instance)
        .containsExactly(2, 3);
    assertThat(routing.get(0).alternatives()).hasSize(1).doesNotContain(routing.get(0).chosen()).allMatch(i -> i >= 2);
    assertThat(routing.get(1).candidates()).extracting(io.blis.engine.result.RoutingDecision.Candidate::instance)
        .containsExactly(0, 1);
  }

  @Test
  void aPoolServesOneModelAndANameOne() {
    assertThatThrownBy(() -> new ModelRouting(List.of(
        new ModelRouting.Served("x", Set.of("x"), Set.of("a"), Routers.roundRobin(), null),
        new ModelRouting.Served("y", Set.of("X"), Set.of("b1"), Routers.roundRobin(), null))))
        .hasMessageContaining("model name 'x' names two served models");
    assertThatThrownBy(() -> new ModelRouting(List.of(
        new ModelRouting.Served("x", Set.of("x"), Set.of("a"), Routers.roundRobin(), null),
        new ModelRouting.Served("y", Set.of("y"), Set.of("a"), Routers.roundRobin(), null))))
        .hasMessageContaining("pool 'a' serves two models");
  }
}
