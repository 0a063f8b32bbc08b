package io.blis.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.blis.api.ClusterView;
import io.blis.api.InstanceSnapshot;
import io.blis.api.RequestView;
import io.blis.api.Router;
import io.blis.engine.policy.Routers;
import io.blis.engine.result.SimulationResult;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Go BLIS's scorers of the weighted router on a running cluster. */
class GoScorersClusterTest {

  private static final EngineLimits LIMITS = new EngineLimits(16, 512, 0, 0);

  private static InstancePool pool(String name, int n, long baseStepUs) {
    LinearTestModel m = new LinearTestModel(baseStepUs, 2, 0, 0, 0, 0);
    return InstancePool.of(name, n, i -> m, LIMITS, 5_000, 16);
  }

  /** Poisson arrivals at {@code ratePerS}, prompts of 64..463 tokens, 20..119 output tokens. */
  private static List<RequestSpec> poisson(int n, double ratePerS, long seed) {
    SplittableRandom rnd = new SplittableRandom(seed);
    List<RequestSpec> out = new ArrayList<>();
    double t = 0;
    for (int i = 0; i < n; i++) {
      t += -Math.log(1 - rnd.nextDouble()) / ratePerS;
      out.add(TestRequests.req(i, (long) (t * 1e6), 64 + rnd.nextInt(400), 20 + rnd.nextInt(100)));
    }
    return out;
  }

  /** The router under test, checking each choice against the view it was given. */
  private static final class Checked implements Router {
    final Router inner;
    int decisions;
    int unequal;
    int wrong;
    int notFirst;

    Checked(Router inner) {
      this.inner = inner;
    }

    @Override
    public int route(RequestView request, ClusterView cluster) {
      long[] raw = new long[cluster.size()];
      long min = Long.MAX_VALUE;
      long max = Long.MIN_VALUE;
      for (int i = 0; i < raw.length; i++) {
        InstanceSnapshot s = cluster.get(i);
        raw[i] = 4L * s.queueDepth() + s.runningBatchSize();
        min = Math.min(min, raw[i]);
        max = Math.max(max, raw[i]);
      }
      int choice = inner.route(request, cluster);
      decisions++;
      if (max > min) {
        unequal++;
      }
      if (raw[choice] != min) {
        wrong++;
      }
      for (int i = 0; i < choice; i++) {
        if (raw[i] == min) {
          notFirst++;
        }
      }
      return choice;
    }
  }

  @Test
  void vllmDpSendsEachRequestToTheLowestFourWaitingPlusRunning() {
    List<RequestSpec> reqs = poisson(1_500, 120, 5);
    Checked router = new Checked(Routers.weighted(Map.of("vllm-dp", 1.0)));
    SimulationResult r = Simulation.builder().router(router).source(RequestSource.of(reqs)).snapshotRefreshUs(0)
        .addPool(pool("fast", 2, 2_000)).addPool(pool("slow", 2, 12_000)).build().run();
    assertThat(r.overall().completedRequests()).isEqualTo(reqs.size());
    assertThat(router.decisions).isEqualTo(reqs.size());
    assertThat(router.unequal).as("decisions where the instances differed").isGreaterThan(reqs.size() / 4);
    assertThat(router.wrong).isZero();
    assertThat(router.notFirst).isZero(); // ties to the lowest index
    // the slow instances keep longer queues and batches, so they are sent fewer requests
    long toFast = r.cluster().instances().stream().filter(i -> i.pool().equals("fast"))
        .mapToLong(i -> i.metrics().injectedRequests()).sum();
    assertThat(toFast).isGreaterThan(reqs.size() / 2);
  }
}
