package io.blis.engine.corpus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CorpusFilesTest {

  @TempDir Path dir;

  /** The published corpus, beside the module. */
  static final Path CORPUS = Path.of("..", "docs", "public-measurements");

  @Test
  void theHalfIsTheFirstHexDigitOfTheIdsSha256() {
    // printf %s vllm-pr-4002 | sha256sum -> 3..., vllm-pr-3692 -> 9...
    assertThat(CorpusHalf.of("vllm-pr-4002")).isEqualTo(CorpusHalf.CHOOSING);
    assertThat(CorpusHalf.of("vllm-pr-3692")).isEqualTo(CorpusHalf.REPORTING);
    assertThat(CorpusHalf.of("x")).isEqualTo(CorpusHalf.CHOOSING); // 2d71...
    assertThat(CorpusHalf.parse("reporting")).isEqualTo(CorpusHalf.REPORTING);
    assertThatThrownBy(() -> CorpusHalf.parse("both")).hasMessageContaining("choosing or reporting");
  }

  @Test
  void everySourceOfThePublishedCorpusReads() {
    assertThat(CorpusFiles.check(CORPUS)).isEmpty();
    List<CorpusFiles.Source> sources = CorpusFiles.read(CORPUS);
    long points = sources.stream().mapToLong(s -> s.points().size()).sum();
    assertThat(points).isGreaterThanOrEqualTo(80);
    assertThat(sources).extracting(CorpusFiles.Source::half).contains(CorpusHalf.CHOOSING, CorpusHalf.REPORTING);
    for (CorpusFiles.Source s : sources) {
      assertThat(s.points()).allSatisfy(p -> assertThat(p.half()).isEqualTo(CorpusHalf.of(s.id())));
    }
  }

  @Test
  void pointsTakeTheSourcesDefaultsAndMergeServerSettings() throws IOException {
    write("a-source", """
        id: a-source
        url: https://example.org/a
        kind: issue
        published: 2024-11
        vllm: {version: "0.6.3"}
        gpu: A100-80GB
        defaults:
          model: meta-llama/Llama-2-7b-hf
          benchmark: serving
          dataset: sharegpt
          num_prompts: 500
          mean_input_tokens: 200
          mean_output_tokens: 180
          server: {max_num_seqs: 128, enforce_eager: true}
        assumptions: ["source-wide"]
        points:
          - id: burst
            server: {max_num_seqs: 64}
            measured: {duration_s: 40.5, mean_tpot_ms: 31.0}
          - id: rated
            request_rate: 4
            tp: 2
            gpu: H100
            assumptions: ["point"]
            measured: {duration_s: 130.0, mean_tpot_ms: 20.0}
        """);
    CorpusFiles.Source s = CorpusFiles.read(dir).get(0);
    assertThat(s.published()).hasToString("2024-11-01");
    CorpusPoint burst = s.points().get(0);
    assertThat(burst.v1()).isFalse(); // 0.6.3 is V0
    assertThat(burst.server().maxNumSeqs()).contains(64);
    assertThat(burst.server().enforceEager()).contains(true);
    assertThat(burst.workload().allAtOnce()).isTrue();
    // a burst of varying lengths is judged by its per-token statistic, not its duration
    assertThat(burst.headline()).isEqualTo(Measured.MEAN_TPOT_MS);
    CorpusPoint rated = s.points().get(1);
    assertThat(rated.headline()).isEqualTo(Measured.DURATION_S);
    assertThat(rated.gpu()).isEqualTo("H100");
    assertThat(rated.tp()).isEqualTo(2);
    assertThat(rated.assumptions()).containsExactly("source-wide", "point");
    assertThat(rated.key()).isEqualTo("a-source/rated");
  }

  @Test
  void badInputNamesTheFileThePointAndTheKey() throws IOException {
    String head = """
        id: b
        url: https://example.org/b
        kind: blog
        published: 2025-01-02
        vllm: {version: "0.8.4"}
        gpu: H100
        points:
        """;
    write("b", head + "  - {id: p, model: meta-llama/Llama-2-7b-hf, benchmark: latency, batch: 1, input_tokens: 32,"
        + " output_tokens: 128, measured: {batch_latency_ms: 900}, colour: red}\n");
    assertThatThrownBy(() -> CorpusFiles.read(dir)).hasMessageContaining("b.yaml: point 'p': unknown key 'colour'");
    write("b", head + "  - {id: p, model: meta-llama/Llama-2-7b-hf, benchmark: latency, batch: 1, input_tokens: 32,"
        + " output_tokens: 128, measured: {mean_ttft_ms: 90}}\n");
    assertThatThrownBy(() -> CorpusFiles.read(dir)).hasMessageContaining("point 'p': a latency benchmark measures"
        + " batch_latency_ms");
    write("b", head + "  - {id: p, model: nobody/unknown-7b, benchmark: latency, batch: 1, input_tokens: 32,"
        + " output_tokens: 128, measured: {batch_latency_ms: 900}}\n");
    assertThatThrownBy(() -> CorpusFiles.read(dir)).hasMessageContaining("model 'nobody/unknown-7b' has no config");
    write("b", head + "  - {id: p, model: meta-llama/Llama-2-7b-hf, benchmark: serving, num_prompts: 10,"
        + " measured: {duration_s: 3}}\n");
    assertThatThrownBy(() -> CorpusFiles.read(dir)).hasMessageContaining("give input_tokens and output_tokens");
    write("b", head.replace("id: b", "id: B!") + "  - {id: p}\n");
    assertThatThrownBy(() -> CorpusFiles.read(dir)).hasMessageContaining("must be lower-case letters");
    assertThat(CorpusFiles.check(dir)).singleElement().asString().contains("b.yaml");
  }

  @Test
  void aHeadlineNamedInTheFileMustBeMeasured() throws IOException {
    write("c", """
        id: c
        url: https://example.org/c
        kind: benchmark-repo
        published: 2024-09-12
        vllm: {version: "0.5.4"}
        gpu: H100
        points:
          - {id: p, model: meta-llama/Llama-2-7b-hf, benchmark: serving, num_prompts: 320, input_tokens: 200,
             output_tokens: 200, headline: median_itl_ms, measured: {output_throughput: 1200}}
        """);
    assertThatThrownBy(() -> CorpusFiles.read(dir)).hasMessageContaining("headline median_itl_ms is not one of the"
        + " measured statistics");
  }

  private void write(String id, String text) throws IOException {
    Files.createDirectories(dir.resolve("sources"));
    try (var s = Files.list(dir.resolve("sources"))) {
      for (Path p : s.toList()) {
        Files.delete(p);
      }
    }
    Files.writeString(dir.resolve("sources").resolve(id + ".yaml"), text);
  }
}
