package io.blis.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The step loop allocates nothing per step once requests are running. */
class StepAllocationTest {

  @Test
  void steadyDecodeStepsDoNotAllocate() {
    com.sun.management.ThreadMXBean bean =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    long tid = Thread.currentThread().getId();
    int steps = 30_000;
    long[] allocatedAtStep = new long[steps + 1];
    int[] n = {0};
    List<RequestSpec> reqs = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      reqs.add(TestRequests.req(i + 1, 0, 100, steps + 10));
    }
    Simulation.builder().latencyModel(new LinearTestModel(100, 1, 0, 0, 0, 0))
        .source(RequestSource.of(reqs))
        .stepObserver((t, dt, batch, running, w, pool) -> {
          if (n[0] <= steps) {
            allocatedAtStep[n[0]++] = bean.getThreadAllocatedBytes(tid);
          }
        }).build().run();
    // after warm-up (JIT), 10,000 consecutive decode steps of 8 requests allocate nothing
    long bytes = allocatedAtStep[steps] - allocatedAtStep[steps - 10_000];
    assertThat(bytes).as("bytes allocated over 10,000 steps").isLessThan(10_000);
  }
}
