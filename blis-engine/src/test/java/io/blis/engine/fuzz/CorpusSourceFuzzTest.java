package io.blis.engine.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.blis.api.Coefficients;
import io.blis.engine.corpus.CorpusFiles;
import io.blis.engine.corpus.CorpusPoint;
import io.blis.engine.corpus.CorpusReplay;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A source file of the corpus of published measurements ({@code docs/public-measurements/sources}):
 * read as {@code blis corpus} reads it, it is refused with one line naming the file, or each point's
 * deployment resolves (model, GPU, limits, KV blocks) or is refused with one line, and a small point
 * is replayed.
 */
class CorpusSourceFuzzTest extends ParserFuzzing {

  private static final CorpusReplay REPLAY = new CorpusReplay("trained-physics", 1);

  @FuzzTest
  void fuzz(byte[] in) throws Exception {
    Path dir = scratch("corpus");
    Files.createDirectories(dir.resolve("sources"));
    parseThenUse(getClass(), in, "corpus/sources/fuzz.yaml", f -> CorpusFiles.readSource(dir, f), (source, file) -> {
      for (CorpusPoint p : source.points()) {
        CorpusReplay.setup(p);
        CorpusPoint.Workload w = p.workload();
        if (Math.max(w.batch(), w.numPrompts()) <= 8 && Math.max(w.inputTokens(), w.outputTokens()) <= 512
            && !(w.meanInputTokens() > 512) && !(w.meanOutputTokens() > 512)) {
          REPLAY.simulate(p, Coefficients.empty());
        }
      }
    });
  }
}
