package io.blis.cli;

import static io.blis.cli.BlisCliTest.blis;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** observe --scrape-kv-metrics writes to the TraceV2 header: without one it is refused, in one line. */
class ObserveScrapeKvCliTest {

  @Test
  void theHitRateNeedsATraceHeaderAndItsFlagsNeedTheScrape(@TempDir Path dir) {
    BlisCliTest.Outcome noTrace = blis("observe", "--server-url", "http://127.0.0.1:9", "--out",
        dir.resolve("run").toString(), "--scrape-kv-metrics");
    assertThat(noTrace.code()).isEqualTo(2);
    assertThat(noTrace.err()).contains("--scrape-kv-metrics writes observed_kv_metrics to the TraceV2 header");
    BlisCliTest.Outcome commit = blis("observe", "--server-url", "http://127.0.0.1:9", "--trace-header",
        dir.resolve("t.yaml").toString(), "--trace-data", dir.resolve("t.csv").toString(), "--vllm-commit", "abc");
    assertThat(commit.code()).isEqualTo(2);
    assertThat(commit.err()).contains("--kv-metrics-url and --vllm-commit go with --scrape-kv-metrics");
  }
}
