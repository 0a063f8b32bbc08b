package io.blis.engine.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.blis.workload.inferenceperf.InferencePerfProfiles;
import io.blis.workload.inferenceperf.InferencePerfWorkload;

/** {@code --inference-perf FILE}; the first requests of an accepted profile are generated. */
class InferencePerfProfileFuzzTest extends ParserFuzzing {

  @FuzzTest
  void fuzz(byte[] in) throws Exception {
    parseThenUse(getClass(), in, "profile.yaml", InferencePerfProfiles::load,
        (profile, file) -> pull(InferencePerfWorkload.synthetic(profile, 1)));
  }
}
