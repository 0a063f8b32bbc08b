package io.blis.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code blis corpus} on a two-point fixture corpus. */
class CorpusCommandTest {

  private static Path fixture() throws Exception {
    return Path.of(CorpusCommandTest.class.getResource("/corpus/sources/tiny-source.yaml").toURI()).getParent()
        .getParent();
  }

  @Test
  void replaysEveryPointAndSummarisesEachHalf(@TempDir Path dir) throws Exception {
    Path out = dir.resolve("c.json");
    BlisCliTest.Outcome o = BlisCliTest.blis("corpus", "--dir", fixture().toString(), "--intervals", "--out",
        out.toString(), "--threads", "1");
    assertThat(o.code()).as(o.err()).isZero();
    // tiny-source hashes to 3...: the choosing half
    assertThat(o.out()).contains("tiny-source                                  choosing")
        .contains("tiny-source/batch1").contains("tiny-source/burst").contains("choosing: V1 engine");
    JsonNode root = new ObjectMapper().readTree(out.toFile());
    assertThat(root.path("points")).hasSize(2);
    JsonNode burst = root.path("points").get(1);
    assertThat(burst.path("headline").asText()).isEqualTo("duration_s"); // fixed lengths: its duration
    assertThat(burst.path("statistics").path("duration_s").path("predicted").asDouble()).isPositive();
    // 0.9.2 schedules synchronously and 40 requests arrive at once: both said, both widen the interval
    assertThat(burst.path("extrapolation").toString()).contains("scheduling synchronously")
        .contains("40 requests arriving at once");
    JsonNode batch1 = root.path("points").get(0);
    assertThat(batch1.path("extrapolation").toString()).contains("requests a step on average");
    // the points as validation runs, for interval-scales --leave-out source
    assertThat(root.path("experiments")).hasSize(2);
    assertThat(root.path("experiments").get(0).path("id").asText()).isEqualTo("tiny-source/batch1");
    // the same inputs and seed give the same bytes
    Path again = dir.resolve("d.json");
    assertThat(BlisCliTest.blis("corpus", "--dir", fixture().toString(), "--intervals", "--out", again.toString(),
        "--threads", "2").code()).isZero();
    assertThat(Files.readString(again)).isEqualTo(Files.readString(out));
  }

  @Test
  void theReportingHalfOfThisCorpusIsEmptyAndUnknownSourcesAreRefused() throws Exception {
    BlisCliTest.Outcome o = BlisCliTest.blis("corpus", "--dir", fixture().toString(), "--half", "reporting");
    assertThat(o.code()).as(o.err()).isZero();
    assertThat(o.out()).doesNotContain("tiny-source/");
    BlisCliTest.Outcome bad = BlisCliTest.blis("corpus", "--dir", fixture().toString(), "--source", "nope");
    assertThat(bad.code()).isNotZero();
    assertThat(bad.err()).contains("--source: no source 'nope'").doesNotContain("Exception");
    BlisCliTest.Outcome half = BlisCliTest.blis("corpus", "--dir", fixture().toString(), "--half", "first");
    assertThat(half.err()).contains("--half: expected choosing, reporting or both");
    BlisCliTest.Outcome host = BlisCliTest.blis("corpus", "--dir", fixture().toString(), "--host-times", "/nonexistent");
    assertThat(host.err()).contains("--host-times: no such file");
  }

  @Test
  void checkListsEveryBadFileAndFails(@TempDir Path dir) throws Exception {
    Path sources = Files.createDirectories(dir.resolve("sources"));
    Files.copy(fixture().resolve("sources/tiny-source.yaml"), sources.resolve("tiny-source.yaml"));
    Files.writeString(sources.resolve("bad-one.yaml"), "id: bad-one\nurl: u\nkind: blog\npublished: 2024-01-01\n"
        + "vllm: {version: \"0.4.0\"}\ngpu: H100\npoints:\n  - {id: p, model: meta-llama/Llama-2-7b-hf, benchmark:"
        + " latency, batch: 0, input_tokens: 1, output_tokens: 1, measured: {batch_latency_ms: 1}}\n");
    Files.writeString(sources.resolve("bad-two.yaml"), "id: other-name\n");
    BlisCliTest.Outcome o = BlisCliTest.blis("corpus", "--dir", dir.toString(), "--check");
    assertThat(o.code()).isEqualTo(1);
    assertThat(o.out()).contains("2 source file(s) with a problem");
    assertThat(o.err()).contains("bad-one.yaml: point 'p': key 'batch' must be an integer in [1, 1000000], got 0")
        .contains("bad-two.yaml");
    assertThat(BlisCliTest.blis("corpus", "--dir", fixture().toString(), "--check").out())
        .contains("every source file reads");
  }
}
