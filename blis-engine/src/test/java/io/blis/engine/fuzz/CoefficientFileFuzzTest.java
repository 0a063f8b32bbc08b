package io.blis.engine.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.blis.api.LatencyModelProvider;
import io.blis.api.Providers;
import io.blis.engine.cluster.Cluster;
import io.blis.engine.cluster.PoolSpec;
import io.blis.latency.coeff.CoefficientFiles;

/**
 * {@code --coefficients FILE} and the inline {@code --coefficients 'alpha=...;beta=...'}; an
 * accepted file's coefficients time two requests on one instance with the latency model it names
 * (the default one when it names none that exists).
 */
class CoefficientFileFuzzTest extends ParserFuzzing {

  @FuzzTest
  void fuzz(byte[] in) throws Exception {
    parseThenUse(getClass(), in, "coefficients.yaml", CoefficientFiles::read, (read, file) -> {
      PoolSpec d = Cluster.BUILT_IN_DEFAULTS;
      String model = Providers.names(LatencyModelProvider.class).contains(read.latencyModel())
          ? read.latencyModel() : d.latencyModel();
      simulate(Cluster.builder().defaults(new PoolSpec(d.name(), 1, d.model(), d.gpu(), d.tp(), model,
          file.toString(), d.maxNumSeqs(), d.maxNumBatchedTokens(), d.longPrefillTokenThreshold(),
          d.maxModelLen(), d.blockSize(), 2_000L, d.gpuMemoryUtilization())));
    });
    if (in.length <= MAX_INPUT_BYTES) {
      String text = text(in);
      OneLineErrors.accepted(text, null, () -> CoefficientFiles.parseInline(text));
    }
  }
}
