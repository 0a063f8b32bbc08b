package io.blis.engine;

import io.blis.engine.result.RequestRecord;
import io.blis.engine.result.SimulationResult;
import static io.blis.engine.TestRequests.req;
import static org.assertj.core.api.Assertions.assertThat;

import io.blis.api.Providers;
import io.blis.api.RouterProvider;
import io.blis.engine.policy.Routers;
import io.blis.kvcache.KvBlockPool;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Several instances behind a router. */
class ClusterTest {

  private static SimulationResult run(int instances, io.blis.api.Router router,
      List<RequestSpec> reqs, Map<Long, KvBlockPool> servedBy) {
    return Simulation.builder().latencyModel(LinearTestModel.constant(100))
        .limits(new EngineLimits(1, 2048, 0, 0)).instances(instances).router(router)
        .source(RequestSource.of(reqs)).recordRequests(true)
        .stepObserver((t, dt, batch, running, w, pool) -> {
          for (int i = 0; i < batch.size(); i++) {
            servedBy.putIfAbsent(batch.get(i).id(), pool);
          }
        }).build().run();
  }

  @Test
  void twoInstancesServeInParallel() {
    List<RequestSpec> reqs = List.of(req(1, 0, 10, 3), req(2, 0, 10, 3), req(3, 0, 10, 3),
        req(4, 0, 10, 3));
    SimulationResult one = run(1, Routers.roundRobin(), reqs, new java.util.HashMap<>());
    SimulationResult two = run(2, Routers.roundRobin(), reqs, new java.util.HashMap<>());
    assertThat(one.requests()).extracting(RequestRecord::e2eUs)
        .containsExactly(300L, 600L, 900L, 1200L);
    assertThat(two.requests()).extracting(RequestRecord::e2eUs)
        .containsExactly(300L, 300L, 600L, 600L);
    assertThat(two.engine().instances()).isEqualTo(2);
    assertThat(two.engine().totalBlocks()).isEqualTo(2 * one.engine().totalBlocks());
  }

  @Test
  void leastLoadedAvoidsTheBusyInstanceWhereRoundRobinDoesNot() {
    // request 1 is long; 2 finishes at 310; 3 arrives at 5000 while 1 still runs on instance 0
    List<RequestSpec> reqs = List.of(req(1, 0, 10, 100), req(2, 10, 10, 3), req(3, 5000, 10, 3));
    Map<Long, KvBlockPool> rrById = new java.util.HashMap<>();
    Map<Long, KvBlockPool> llById = new java.util.HashMap<>();
    run(2, Routers.roundRobin(), reqs, rrById);
    run(2, Routers.leastLoaded(), reqs, llById);
    assertThat(rrById.get(3L)).isSameAs(rrById.get(1L));
    assertThat(llById.get(3L)).isNotSameAs(llById.get(1L));
    assertThat(llById.get(2L)).isNotSameAs(llById.get(1L));
  }

  @Test
  void routersAreRegisteredLikePlugins() {
    assertThat(Providers.names(RouterProvider.class)).contains("round-robin", "least-loaded");
  }
}
