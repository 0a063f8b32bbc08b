package io.blis.engine.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.blis.engine.cluster.Cluster;
import io.blis.engine.cluster.LoraFile;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.util.List;

/**
 * {@code --lora-config FILE} (Go BLIS's {@code lora:} block, with vLLM's names beside): an accepted
 * configuration serves two requests on one instance, one naming the registry's first adapter (or
 * any name, without a registry), one the base model.
 */
class LoraFileFuzzTest extends ParserFuzzing {

  @FuzzTest
  void fuzz(byte[] in) throws Exception {
    parseThenUse(getClass(), in, "lora.yaml", f -> LoraFile.load(f, null), (spec, file) -> {
      String adapter = spec.adapters().isEmpty() ? "any" : spec.adapters().keySet().iterator().next();
      List<RequestSpec> requests = List.of(
          RequestSpec.simple(0, 0, new int[] {1, 2, 3, 4}, 3).withAdapter(adapter),
          RequestSpec.simple(1, 1_000, new int[] {1, 2, 5}, 2));
      Cluster.builder().lora(spec).seed(1).toSimulation().source(RequestSource.of(requests)).build().run();
    });
  }
}
