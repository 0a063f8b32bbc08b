package io.blis.cli.observe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.blis.workload.trace.TraceV2Reader;
import io.blis.workload.trace.TraceV2Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** observe --scrape-kv-metrics: the hit rate over the window, from two scrapes. */
class ObservedKvRateTest {

  private static PrometheusText.Scrape scrape(String text) {
    return PrometheusText.parse(text);
  }

  /** vLLM v1's token counters, _total and per engine: the window's increase of both engines. */
  @Test
  void theCountersIncreaseOverTheWindowGivesTheRate() {
    PrometheusText.Scrape start = scrape("""
        vllm:prefix_cache_queries_total{engine="0"} 1000
        vllm:prefix_cache_queries_total{engine="1"} 500
        vllm:prefix_cache_hits_total{engine="0"} 100
        vllm:prefix_cache_hits_total{engine="1"} 0
        """);
    PrometheusText.Scrape end = scrape("""
        vllm:prefix_cache_queries_total{engine="0"} 3000
        vllm:prefix_cache_queries_total{engine="1"} 2500
        vllm:prefix_cache_hits_total{engine="0"} 900
        vllm:prefix_cache_hits_total{engine="1"} 1200
        """);
    TraceV2Writer.ObservedKv kv = ObservedKvRate.of(start, end, "abc");
    assertThat(kv.source()).isEqualTo("prefix-cache");
    assertThat(kv.blockQueries()).isEqualTo(4000);
    assertThat(kv.blockHits()).isEqualTo(2000);
    assertThat(kv.hitRate()).isCloseTo(0.5, within(1e-12));
    assertThat(kv.vllmCommit()).isEqualTo("abc");
  }

  @Test
  void theTieredFamilyComesFirstThenTheGauge() {
    PrometheusText.Scrape both = scrape("""
        vllm:kv_offload_tiering_block_queries{tier="cpu"} 40
        vllm:kv_offload_tiering_block_queries{tier="disk"} 60
        vllm:kv_offload_tiering_block_hits{tier="cpu"} 25
        vllm:prefix_cache_queries_total 10
        vllm:prefix_cache_hits_total 10
        """);
    TraceV2Writer.ObservedKv tiered = ObservedKvRate.of(scrape(""), both, "");
    assertThat(tiered.source()).isEqualTo("tiered");
    assertThat(tiered.hitRate()).isCloseTo(0.25, within(1e-12));
    TraceV2Writer.ObservedKv gauge = ObservedKvRate.of(scrape(""), scrape("vllm:gpu_prefix_cache_hit_rate 0.4\n"), "");
    assertThat(gauge.source()).isEqualTo("gpu-prefix-cache-fallback");
    assertThat(gauge.hitRate()).isEqualTo(0.4);
  }

  @Test
  void noQueriesOrMoreHitsThanQueriesRecordNothing() {
    PrometheusText.Scrape same = scrape("vllm:prefix_cache_queries_total 50\nvllm:prefix_cache_hits_total 5\n");
    assertThatThrownBy(() -> ObservedKvRate.of(same, same, "")).hasMessageContaining("did not grow");
    assertThatThrownBy(() -> ObservedKvRate.of(scrape("vllm:prefix_cache_queries_total 50\n"),
        scrape("vllm:prefix_cache_queries_total 60\nvllm:prefix_cache_hits_total 20\n"), ""))
        .hasMessageContaining("not a hit rate");
    assertThatThrownBy(() -> ObservedKvRate.of(scrape(""), scrape("vllm:num_requests_running 1\n"), ""))
        .hasMessageContaining("no prefix-cache counters");
  }

  /** Written as Go BLIS's header block, and read back by calibrate's reader. */
  @Test
  void theHeaderBlockIsGoBlisesAndReadsBack(@TempDir Path dir) throws Exception {
    TraceV2Writer.ObservedKv kv = new TraceV2Writer.ObservedKv("prefix-cache", 0.25, 10, 40, "abc123");
    String yaml = TraceV2Writer.headerYaml(new TraceV2Writer.Header(3, "", "real", 0, null, null, "vllm", "m", 0, kv));
    assertThat(yaml).endsWith("""
        network: {}
        observed_kv_metrics:
            source: prefix-cache
            hit_rate: 0.25
            block_hits: 10
            block_queries: 40
            vllm_commit: abc123
        """);
    Path header = dir.resolve("t.yaml");
    Path data = dir.resolve("t.csv");
    Files.writeString(header, yaml);
    TraceV2Writer.writeData(data, java.util.List.of(new TraceV2Writer.Row(0, "", "", "standard", "", 0, "", 0, true,
        32, 4, "m", 0, 0, 0, 1_000, 2_000, 3_000, 4, "ok", "", "length", "")));
    TraceV2Reader.Recorded r = TraceV2Reader.recorded(header, data);
    assertThat(r.observedKv()).isEqualTo(new TraceV2Reader.ObservedKvMetrics("prefix-cache", 0.25));
  }
}
