package io.blis.cli.observe;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class PrometheusTextTest {

  private static final String VLLM = """
      # HELP vllm:num_requests_running Number of requests in model execution batches.
      # TYPE vllm:num_requests_running gauge
      vllm:num_requests_running{engine="0",model_name="m"} 7.0
      vllm:num_requests_running{engine="1",model_name="m"} 5.0
      vllm:num_requests_waiting{engine="0",model_name="m"} 3.0
      vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.25
      vllm:kv_cache_usage_perc{engine="1",model_name="m"} 0.75
      vllm:num_preemptions_total{engine="0",model_name="m"} 12.0
      vllm:prefix_cache_queries_total{engine="0",model_name="m"} 1000.0
      vllm:prefix_cache_hits_total{engine="0",model_name="m"} 400.0
      vllm:cache_config_info{block_size="16",cache_dtype="auto",gpu_memory_utilization="0.9",num_gpu_blocks="7462",engine="0"} 1.0
      vllm:time_to_first_token_seconds_bucket{le="+Inf",model_name="m"} 42
      weird{label="a \\"quoted\\" value, with a comma\\\\"} NaN
      this line is not a sample
      broken{label="unclosed} 1
      """;

  @Test
  void readsSamplesLabelsAndSpecialValues() {
    PrometheusText.Scrape s = PrometheusText.parse(VLLM);
    assertThat(s.malformedLines()).isEqualTo(2);
    assertThat(s.sum("vllm:num_requests_running")).isEqualTo(12.0);
    assertThat(s.mean("vllm:kv_cache_usage_perc")).isEqualTo(0.5);
    assertThat(s.sum("vllm:absent")).isNaN();
    assertThat(s.firstLabels("vllm:cache_config_info"))
        .containsEntry("num_gpu_blocks", "7462").containsEntry("block_size", "16")
        .containsEntry("gpu_memory_utilization", "0.9");
    assertThat(s.samples()).anySatisfy(x -> {
      assertThat(x.name()).isEqualTo("weird");
      assertThat(x.labels()).isEqualTo(Map.of("label", "a \"quoted\" value, with a comma\\"));
      assertThat(x.value()).isNaN();
    });
    assertThat(s.samples()).anySatisfy(x -> assertThat(x.labels()).containsEntry("le", "+Inf"));
  }

  @Test
  void aSampleSumsOverEnginesAndRoundTripsThroughItsCsvRow() {
    MetricsSample m = MetricsSample.of(2_500_000, PrometheusText.parse(VLLM));
    assertThat(m.running()).isEqualTo(12);
    assertThat(m.waiting()).isEqualTo(3);
    assertThat(m.kvCacheUsage()).isEqualTo(0.5);
    assertThat(m.preemptions()).isEqualTo(12);
    assertThat(m.prefixCacheHits() / m.prefixCacheQueries()).isEqualTo(0.4);
    assertThat(m.promptTokens()).isNaN();
    assertThat(m.csvRow()).isEqualTo("2.500,12,3,0.500000,12,,,1000,400,");
    assertThat(MetricsSample.parse(m.csvRow(), "t")).isEqualTo(m);
  }

  @Test
  void olderVllmNamesAreRead() {
    MetricsSample m = MetricsSample.of(0, PrometheusText.parse("vllm:gpu_cache_usage_perc{engine=\"0\"} 0.3\n"));
    assertThat(m.kvCacheUsage()).isEqualTo(0.3);
    assertThat(m.anyVllm()).isTrue();
    assertThat(MetricsSample.of(0, PrometheusText.parse("process_cpu_seconds_total 3\n")).anyVllm()).isFalse();
  }
}
