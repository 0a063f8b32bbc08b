package io.blis.cli;

import static io.blis.cli.BlisCliTest.blis;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@code blis run} with Go BLIS's prefill/decode disaggregation flags, and the same as a policy bundle. */
class DisaggregationCliTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  private static final List<String> BASE = List.of("run", "--model", "llama-3.1-8b", "--num-instances", "4",
      "--rate", "8", "--num-requests", "200", "--prompt-tokens", "3000", "--output-tokens", "100");

  private static BlisCliTest.Outcome run(String... extra) throws Exception {
    List<String> args = new ArrayList<>(BASE);
    args.addAll(List.of(extra));
    return blis(args.toArray(String[]::new));
  }

  @Test
  void goFlagsAndTheBundleMeanTheSame(@TempDir Path dir) throws Exception {
    BlisCliTest.Outcome flags = run("--prefill-instances", "1", "--decode-instances", "3", "--pd-decider", "always",
        "--pd-transfer-bandwidth", "25", "--pd-transfer-base-latency", "0.05", "--pd-transfer-contention");
    assertThat(flags.code()).as(flags.err()).isZero();
    JsonNode pd = JSON.readTree(flags.out()).path("disaggregation");
    assertThat(pd.path("decider").asText()).isEqualTo("always");
    assertThat(pd.path("disaggregated").asLong()).isEqualTo(200);
    assertThat(pd.path("transferred").asLong()).isEqualTo(200);
    assertThat(pd.path("transfer").asText()).isEqualTo("25.0 GB/s shared, base latency 50 us");
    assertThat(pd.path("pools").get(0).path("pool").asText()).isEqualTo("prefill");
    assertThat(pd.path("pools").get(1).path("instances").asInt()).isEqualTo(3);
    assertThat(JSON.readTree(flags.out()).path("overall").path("completed_requests").asLong()).isEqualTo(200);

    Path bundle = dir.resolve("pd.yaml");
    Files.writeString(bundle, """
        pools:
          - {name: prefill, instances: 1, role: prefill}
          - {name: decode, instances: 3, role: decode}
        disaggregation:
          decider: always
          transfer_bandwidth_gb_s: 25
          transfer_base_latency_ms: 0.05
          transfer_contention: true
        """);
    List<String> args = new ArrayList<>(BASE);
    args.remove("--num-instances");
    args.remove("4");
    args.addAll(List.of("--policy-config", bundle.toString()));
    BlisCliTest.Outcome fromBundle = blis(args.toArray(String[]::new));
    assertThat(fromBundle.code()).as(fromBundle.err()).isZero();
    assertThat(fromBundle.out()).isEqualTo(flags.out());
  }

  @Test
  void theRestOfTheInstancesDoBothAndPoolsDifferByTheirFlags() throws Exception {
    BlisCliTest.Outcome r = run("--prefill-instances", "1", "--decode-instances", "1", "--pd-decider",
        "prefix-threshold", "--decode-tp", "2");
    assertThat(r.code()).as(r.err()).isZero();
    JsonNode pools = JSON.readTree(r.out()).path("disaggregation").path("pools");
    assertThat(pools.size()).isEqualTo(3);
    assertThat(pools.get(2).path("pool").asText()).isEqualTo("shared");
    assertThat(pools.get(2).path("role").asText()).isEqualTo("both");
    assertThat(pools.get(2).path("instances").asInt()).isEqualTo(2);
    // the decode instance (index 1) is TP 2: twice the GPUs' memory, more KV blocks than a TP 1 one
    JsonNode instances = JSON.readTree(r.out()).path("instances");
    assertThat(instances.get(1).path("pool").asText()).isEqualTo("decode");
    assertThat(instances.get(1).path("kv_total_blocks").asLong())
        .isGreaterThan(instances.get(0).path("kv_total_blocks").asLong());
    assertThat(instances.get(2).path("kv_total_blocks").asLong())
        .isEqualTo(instances.get(0).path("kv_total_blocks").asLong());
  }

  @Test
  void withoutDisaggregationFlagsTheResultHasNoSection() throws Exception {
    BlisCliTest.Outcome r = run();
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(JSON.readTree(r.out()).has("disaggregation")).isFalse();
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "--prefill-instances 2|disaggregation needs both --prefill-instances and --decode-instances",
      "--prefill-instances 3 --decode-instances 2|exceed --num-instances 4",
      "--prefill-instances -1 --decode-instances 2|must be >= 0, got -1",
      "--pd-decider sometimes|--pd-decider must be never, always or prefix-threshold, got 'sometimes'",
      "--pd-prefix-threshold -1|--pd-prefix-threshold must be >= 0, got -1",
      "--pd-transfer-bandwidth 0|--pd-transfer-bandwidth must be in [0.01, 1e6) GB/s (from 10 MB/s, slower than any link"
          + " between GPU servers, to 1 PB/s), got 0.0",
      "--pd-transfer-base-latency -1|--pd-transfer-base-latency must be milliseconds in [0, 3600000]",
      "--decode-tp 2|give those too",
      "--prefill-instances 1 --decode-instances 1 --decode-tp 0|must be at least 1, got 0",
  })
  void badFlagsAreOneLine(String flags, String expected) throws Exception {
    BlisCliTest.Outcome r = run(flags.split(" "));
    assertThat(r.code()).isNotZero();
    assertThat(r.err()).contains(expected);
    assertThat(r.err().strip().lines().count()).as(r.err()).isEqualTo(1);
    assertThat(r.out()).isEmpty();
  }
}
