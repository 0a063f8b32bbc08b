package io.blis.engine.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.blis.engine.cluster.Cluster;
import io.blis.engine.cluster.PolicyBundle;
import io.blis.engine.cluster.PoolSpec;

/** {@code --policy-config FILE}; an accepted bundle's cluster, when small, simulates two requests. */
class PolicyBundleFuzzTest extends ParserFuzzing {

  @FuzzTest
  void fuzz(byte[] in) throws Exception {
    parseThenUse(getClass(), in, "bundle.yaml", PolicyBundle::load, (bundle, file) -> {
      long instances = bundle.pools().stream().mapToLong(PoolSpec::instances).sum();
      boolean smallKv = bundle.pools().stream()
          .allMatch(p -> p.totalKvBlocks() == null || p.totalKvBlocks() <= MAX_SIMULATED_KV_BLOCKS);
      if (instances <= MAX_SIMULATED_INSTANCES && smallKv) {
        simulate(Cluster.builder().bundle(bundle));
      }
    });
  }
}
