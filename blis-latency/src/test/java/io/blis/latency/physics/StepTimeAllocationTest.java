package io.blis.latency.physics;

import static io.blis.latency.Fixtures.decode;
import static io.blis.latency.Fixtures.prefill;
import static org.assertj.core.api.Assertions.assertThat;

import io.blis.api.Coefficients;
import io.blis.api.LatencyModel;
import io.blis.latency.Fixtures.Batch;
import io.blis.latency.LatencyModels;
import io.blis.latency.Fixtures.Req;
import io.blis.latency.catalog.GpuCatalog;
import io.blis.latency.catalog.ModelCatalog;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** stepTime is on the hot path: it must not allocate per call. */
class StepTimeAllocationTest {

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"blackbox", "roofline", "trained-physics"})
  void stepTimeAllocatesNothing(String latencyModel) {
    java.lang.management.ThreadMXBean bean = ManagementFactory.getThreadMXBean();
    Assumptions.assumeTrue(bean instanceof com.sun.management.ThreadMXBean);
    com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) bean;
    Assumptions.assumeTrue(threads.isThreadAllocatedMemorySupported());
    threads.setThreadAllocatedMemoryEnabled(true);

    LatencyModel m =
        LatencyModels.create(latencyModel, ModelCatalog.byName("mixtral-8x7b"),
            GpuCatalog.byName("H100"), 2, Coefficients.empty());
    List<Req> reqs = new ArrayList<>();
    reqs.add(prefill(3000, 1000, 512));
    for (int i = 0; i < 127; i++) {
      reqs.add(decode(500, 500 + 7 * i));
    }
    Batch batch = new Batch(reqs);
    long sink = 0;
    for (int i = 0; i < 20_000; i++) {
      sink += m.stepTime(batch);
    }
    long tid = Thread.currentThread().getId();
    long before = threads.getThreadAllocatedBytes(tid);
    for (int i = 0; i < 100_000; i++) {
      sink += m.stepTime(batch);
    }
    long allocated = threads.getThreadAllocatedBytes(tid) - before;
    assertThat(sink).isPositive();
    // a single allocation per call would be >= 1.6 MB here
    assertThat(allocated).isLessThan(64 * 1024);
  }
}
