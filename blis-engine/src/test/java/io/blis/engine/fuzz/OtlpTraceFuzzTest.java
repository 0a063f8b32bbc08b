package io.blis.engine.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.blis.latency.fit.BatchReconstruction;
import io.blis.latency.fit.TraceImport;

/**
 * {@code blis fit --traces FILE}: OTLP JSON lines; an accepted trace's step batches are rebuilt
 * from its journeys as the fit does.
 */
class OtlpTraceFuzzTest extends ParserFuzzing {

  @FuzzTest
  void fuzz(byte[] in) throws Exception {
    parseThenUse(getClass(), in, "trace.jsonl", TraceImport::read,
        (trace, file) -> BatchReconstruction.reconstruct(trace.steps(), trace.journeys()));
  }
}
