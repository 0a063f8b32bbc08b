package io.blis.cli;

import static io.blis.cli.BlisCliTest.blis;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.blis.latency.catalog.GpuCatalog;
import io.blis.latency.catalog.GpuEfficiency;
import io.blis.latency.catalog.GpuSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code blis gpu-profile}: the shipped A100 timings give the bundled A100 entry; the written GPU
 * file is what {@code --gpu} takes and simulates like the bundled GPU; a table entry is merged; bad
 * input is one line.
 */
class GpuProfileCliTest {

  /** The A100 kernel profiles the latency module's tests ship (trimmed to the rows the fit uses). */
  static final String A100 = "../blis-latency/src/test/resources/io/blis/latency/profile/a100";

  @TempDir Path dir;

  @Test
  void theShippedA100TimingsGiveAGpuFileThatSimulatesLikeTheBundledA100() throws Exception {
    Path out = dir.resolve("a100.json");
    BlisCliTest.Outcome o = blis("gpu-profile", "--from", A100, "--gpu", "A100-80GB", "--out", out.toString());
    assertThat(o.code()).as(o.err()).isZero();
    assertThat(o.err()).contains("A100-80GB: GEMM bandwidth 0.792 of peak").contains("all-reduce over 4:");
    GpuSpec mine = GpuCatalog.fromFile(out);
    GpuEfficiency bundled = GpuCatalog.byName("A100-80GB").efficiency();
    assertThat(mine.efficiency().as(bundled.basis(), bundled.source())).isEqualTo(bundled);
    assertThat(mine.efficiency().source()).startsWith("timings in " + A100);
    String[] run = {"run", "--model", "llama-3.1-8b", "--num-requests", "60", "--rate", "6", "--gpu", ""};
    run[run.length - 1] = out.toString();
    BlisCliTest.Outcome fromFile = blis(run);
    run[run.length - 1] = "A100-80GB";
    BlisCliTest.Outcome bundledRun = blis(run);
    assertThat(fromFile.code()).as(fromFile.err()).isZero();
    JsonNode a = new ObjectMapper().readTree(fromFile.out());
    JsonNode b = new ObjectMapper().readTree(bundledRun.out());
    assertThat(a.path("overall")).isEqualTo(b.path("overall"));
    // the A100 is measured, and its predictions differ from the datasheet-only ones
    assertThat(a.path("overall").path("e2e_ms").path("mean").asDouble()).isPositive();
  }

  @Test
  void aTableEntryIsPutBesideTheOthers() throws Exception {
    Path table = dir.resolve("table.json");
    Files.writeString(table, "{\"Mine\": " + GpuCatalog.measuredEfficiency("A40").toJson() + "}");
    BlisCliTest.Outcome o = blis("gpu-profile", "--from", A100, "--gpu", "A100-80GB", "--table", table.toString(),
        "--source", "the test's A100 timings");
    assertThat(o.code()).as(o.err()).isZero();
    assertThat(o.out()).isEmpty();
    JsonNode t = new ObjectMapper().readTree(table.toFile());
    assertThat(t.fieldNames()).toIterable().containsExactly("Mine", "A100-80GB");
    assertThat(t.path("A100-80GB").path("source").asText()).startsWith("the test's A100 timings (");
    assertThat(GpuEfficiency.parse(t.path("Mine"), "t")).isEqualTo(GpuCatalog.measuredEfficiency("A40"));
  }

  @Test
  void badInputIsOneLine() throws Exception {
    BadInputCliTest.refused(blis("gpu-profile", "--from", dir.resolve("none").toString(), "--gpu", "A100"),
        "none: no such file or directory");
    BadInputCliTest.refused(blis("gpu-profile", "--from", A100, "--gpu", "Z100"), "unknown GPU 'Z100'");
    Path bad = dir.resolve("t.csv");
    Files.writeString(bad, "kind,tokens,k,n,time_us\ngemm,16,4096,4096,40\ngemm,sixteen,4096,8192,70\n");
    BadInputCliTest.refused(blis("gpu-profile", "--from", bad.toString(), "--gpu", "A100"),
        "t.csv:3: column 'tokens': expected a whole number, got 'sixteen'");
    Files.writeString(bad, "kind,tokens,k,n,time_us\ngemm,16,4096,4096,40\n");
    BadInputCliTest.refused(blis("gpu-profile", "--from", bad.toString(), "--gpu", "A100"),
        "needs timings of at least two GEMM shapes");
    BadInputCliTest.refused(blis("gpu-profile", "--from", A100, "--gpu", "A100", "--out", dir.toString()),
        "--out: '" + dir + "' is a directory");
  }
}
