package io.blis.engine.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.blis.engine.cluster.Cluster;
import io.blis.engine.cluster.PoolSpec;
import io.blis.latency.catalog.GpuCatalog;

/**
 * {@code --gpu FILE}: a GPU file (datasheet, node figures and kernel-efficiency entry, as {@code
 * blis gpu-profile} writes it); an accepted GPU times two requests on one instance of a model
 * that fits it, or is refused with one line (a model too large for it).
 */
class GpuFileFuzzTest extends ParserFuzzing {

  @FuzzTest
  void fuzz(byte[] in) throws Exception {
    parseThenUse(getClass(), in, "gpu.json", GpuCatalog::fromFile, (gpu, file) -> {
      PoolSpec d = Cluster.BUILT_IN_DEFAULTS;
      simulate(Cluster.builder().defaults(new PoolSpec(d.name(), 1, d.model(), file.toString(), 2,
          d.latencyModel(), d.coefficients(), d.maxNumSeqs(), d.maxNumBatchedTokens(),
          d.longPrefillTokenThreshold(), d.maxModelLen(), d.blockSize(), 2_000L, d.gpuMemoryUtilization())));
    });
  }
}
