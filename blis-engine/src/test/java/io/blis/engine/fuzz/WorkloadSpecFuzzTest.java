package io.blis.engine.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.blis.workload.spec.WorkloadSpec;

/** {@code --workload-spec FILE}; the first requests of an accepted spec are generated. */
class WorkloadSpecFuzzTest extends ParserFuzzing {

  @FuzzTest
  void fuzz(byte[] in) throws Exception {
    parseThenUse(getClass(), in, "spec.yaml", WorkloadSpec::load, (spec, file) -> pull(spec.source()));
  }
}
