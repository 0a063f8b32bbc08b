package io.blis.cli;

import static io.blis.cli.BlisCliTest.blis;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Outputs cannot be half-written: results, traces, coefficient files and reports go to a temporary
 * file beside {@code FILE} ({@code .FILE.PID-N-HOST.blis-tmp}) and are moved into place when complete, so a run that fails leaves the old file (and
 * no temporary), and one that succeeds leaves the whole new file.
 */
class OutputFilesCliTest {

  /** A per_step_us (beta 11) of 4e9 us: the run fails at its first step, after its outputs opened. */
  private static final String FAILING_COEFFICIENTS =
      "beta=2.15,1.48,0.87,1.09,1.12,1.13,1.49,2.0,21.3,9.6,3.9,4e9,0.48,5.2,31.2;alpha=8224,0,0,0";

  private static String[] run(Path dir, String... more) {
    String[] base = {"run", "--num-requests", "20", "--results-path", dir.resolve("r.json").toString(),
        "--trace-out", dir.resolve("t.csv.gz").toString(), "--otel-out", dir.resolve("o.jsonl.gz").toString()};
    String[] out = java.util.Arrays.copyOf(base, base.length + more.length);
    System.arraycopy(more, 0, out, base.length, more.length);
    return out;
  }

  private static void assertNoTemporaries(Path dir) throws Exception {
    try (var s = Files.list(dir)) {
      assertThat(s.map(p -> p.getFileName().toString())).noneMatch(n -> n.endsWith(".tmp") || n.endsWith(".blis-tmp"));
    }
  }

  @Test
  void aFailedRunLeavesTheOldOutputsWholeAndNoTemporaries(@TempDir Path dir) throws Exception {
    for (String name : new String[] {"r.json", "t.csv.gz", "o.jsonl.gz"}) {
      Files.writeString(dir.resolve(name), "old " + name);
    }
    BlisCliTest.Outcome failed = blis(run(dir, "--coefficients", FAILING_COEFFICIENTS));
    BadInputCliTest.refused(failed, "step time of", "exceeds the limit of 3600000000 us (one hour)");
    for (String name : new String[] {"r.json", "t.csv.gz", "o.jsonl.gz"}) {
      assertThat(dir.resolve(name)).hasContent("old " + name);
    }
    assertNoTemporaries(dir);
  }

  @Test
  void aSuccessfulRunReplacesThemWholeInTheirFormats(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("r.json"), "old");
    BlisCliTest.Outcome ok = blis(run(dir));
    assertThat(ok.code()).as(ok.err()).isZero();
    assertThat(Files.readString(dir.resolve("r.json"))).isEqualTo(ok.out());
    for (String gz : new String[] {"t.csv.gz", "o.jsonl.gz"}) {
      try (InputStream in = new GZIPInputStream(Files.newInputStream(dir.resolve(gz)))) {
        assertThat(in.readAllBytes()).isNotEmpty(); // gzip as the final name says, complete
      }
    }
    assertNoTemporaries(dir);
    // the trace replays to the same result
    BlisCliTest.Outcome replay = blis("replay", "--trace", dir.resolve("t.csv.gz").toString());
    assertThat(replay.code()).as(replay.err()).isZero();
  }

  @Test
  void aRefusedFitLeavesTheOldCoefficientFile(@TempDir Path dir) throws Exception {
    Path trace = dir.resolve("t.jsonl");
    assertThat(blis("run", "--num-requests", "200", "--rate", "8", "--otel-out", trace.toString(),
        "--otel-request-snapshots").code()).isZero();
    Path coeffs = dir.resolve("c.yaml");
    Files.writeString(coeffs, "old");
    BlisCliTest.Outcome wrong = blis("fit", "--traces", trace.toString(), "--model", "meta-llama/Llama-2-70b-hf",
        "--tp", "4", "--out", coeffs.toString());
    assertThat(wrong.code()).isEqualTo(2);
    assertThat(coeffs).hasContent("old");
    BlisCliTest.Outcome fit = blis("fit", "--traces", trace.toString(), "--out", coeffs.toString(),
        "--report", dir.resolve("report.json").toString());
    assertThat(fit.code()).as(fit.err()).isZero();
    assertThat(Files.readString(coeffs)).startsWith("# fitted from the trace: ").contains("\nversion: 1\n");
    assertNoTemporaries(dir);
  }
}
