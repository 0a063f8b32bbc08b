package io.blis.engine.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.blis.engine.cluster.Cluster;
import io.blis.engine.cluster.KvOffloadFile;

/**
 * {@code --kv-offload-config FILE} (Go BLIS's {@code kv_offload:} block: a CPU tier and file-system
 * tiers behind it), read for a GPU block of 16 tokens: an accepted configuration's tiers, as {@code
 * blis run} applies them, serve two requests on one instance, or are refused in one line (too
 * small a CPU tier for the tiers behind it).
 */
class KvOffloadConfigFuzzTest extends ParserFuzzing {

  @FuzzTest
  void fuzz(byte[] in) throws Exception {
    parseThenUse(getClass(), in, "kv-offload.yaml", f -> KvOffloadFile.read(f, 16), (config, file) -> {
      config.headerYaml(1 << 20);
      simulate(Cluster.builder().cpuKvTier(0, config.cpuBytes() / (1L << 30), 25.0)
          .kvOffloadTiers(config.tiers(), !config.promptOnly()));
    });
  }
}
