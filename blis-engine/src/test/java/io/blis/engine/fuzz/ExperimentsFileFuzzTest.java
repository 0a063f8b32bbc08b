package io.blis.engine.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.blis.engine.validate.ExperimentsFile;
import io.blis.workload.inferenceperf.InferencePerfProfiles;

/**
 * {@code --experiments FILE} of validate, calibrate, replay and fit; for an accepted file, the
 * workload of its first experiment as blis replay reads it.
 */
class ExperimentsFileFuzzTest extends ParserFuzzing {

  @FuzzTest
  void fuzz(byte[] in) throws Exception {
    parseThenUse(getClass(), in, "experiments.json", ExperimentsFile::read,
        (experiments, file) -> InferencePerfProfiles.fromExperiments(file, experiments.get(0).id()));
  }
}
