package io.blis.engine.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.blis.engine.StepRecord;
import io.blis.engine.result.SimulationResult;
import io.blis.latency.catalog.ModelCatalog;
import io.blis.latency.catalog.ModelConfig;
import io.blis.latency.catalog.ModelSizes;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** vLLM's --kv-cache-dtype fp8: one byte a KV element, so twice the tokens, fewer preemptions. */
class KvCacheDtypeTest {

  private static final String MODEL = "meta-llama/Llama-3.1-8B-Instruct";

  @Test
  void anFp8CacheHalvesTheBytesOfAToken() {
    ModelConfig bf16 = ModelCatalog.byName(MODEL);
    ModelConfig fp8 = bf16.withKvCacheDtype("fp8_e4m3");
    assertThat(ModelSizes.kvBytesPerToken(bf16)).isEqualTo(131_072); // 2 x 32 layers x 8 heads x 128 x 2 bytes
    assertThat(ModelSizes.kvBytesPerToken(fp8)).isEqualTo(65_536);
    assertThat(fp8.activationBytes()).as("the activations keep their width").isEqualTo(2);
    assertThat(bf16.withKvCacheDtype("auto").kvCacheBytesPerElement()).isEqualTo(2);
    assertThatThrownBy(() -> bf16.withKvCacheDtype("int4")).hasMessageContaining("kv-cache-dtype")
        .hasMessageContaining("fp8_e5m2");
  }

  private record Run(SimulationResult result, int maxRunning) {}

  private static Run run(String dtype) {
    List<RequestSpec> reqs = new ArrayList<>();
    for (int i = 1; i <= 60; i++) {
      int[] prompt = new int[2000];
      for (int t = 0; t < prompt.length; t++) {
        prompt[t] = i * 10_000 + t; // no shared prefix
      }
      reqs.add(RequestSpec.simple(i, 0, prompt, 2000));
    }
    int[] maxRunning = {0};
    Cluster.Builder b = Cluster.builder().defaults(PoolSpec.builder("default").model(MODEL).gpu("H100")
        .gpuMemoryUtilization(0.3).build());
    if (dtype != null) {
      b.kvCacheDtype(dtype);
    }
    SimulationResult r = b.toSimulation().source(RequestSource.of(reqs)).listener(new io.blis.engine.EngineListener() {
      @Override
      public void onStep(int instance, StepRecord step) {
        maxRunning[0] = Math.max(maxRunning[0], step.prefillRequests() + step.decodeRequests());
      }
    }).build().run();
    return new Run(r, maxRunning[0]);
  }

  @Test
  void anFp8RunHoldsAboutTwiceTheRequestsAndPreemptsLess() {
    Run bf16 = run(null);
    Run fp8 = run("fp8");
    long b = bf16.result().engine().totalBlocks();
    long f = fp8.result().engine().totalBlocks();
    assertThat(f).isBetween(2 * b, 2 * b + 1);
    assertThat(bf16.result().overall().completedRequests()).isEqualTo(60);
    assertThat(fp8.result().overall().completedRequests()).isEqualTo(60);
    assertThat((double) fp8.maxRunning() / bf16.maxRunning()).isBetween(1.7, 2.3);
    assertThat(fp8.result().engine().preemptions()).isLessThan(bf16.result().engine().preemptions());
  }
}
