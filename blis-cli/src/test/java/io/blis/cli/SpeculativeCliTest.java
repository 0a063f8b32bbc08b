package io.blis.cli;

import static io.blis.cli.BlisCliTest.blis;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Go BLIS's speculative-decoding and KV-dtype flags, and vLLM's, mean what they say there. */
class SpeculativeCliTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  private static final List<String> BASE = List.of("run", "--model", "llama-3.1-8b", "--rate", "4",
      "--num-requests", "200", "--prompt-tokens", "512", "--output-tokens", "256");

  private static BlisCliTest.Outcome run(String... extra) {
    List<String> args = new ArrayList<>(BASE);
    args.addAll(List.of(extra));
    return blis(args.toArray(String[]::new));
  }

  private static JsonNode json(BlisCliTest.Outcome o) throws Exception {
    assertThat(o.code()).as(o.err()).isZero();
    return JSON.readTree(o.out());
  }

  @Test
  void goBlisMeanRateIsTheMeanFractionAccepted() throws Exception {
    JsonNode plain = json(run());
    JsonNode spec = json(run("--num-speculative-tokens", "3", "--speculative-acceptance-rate", "0.6",
        "--speculative-method", "mtp"));
    JsonNode sd = spec.path("speculative_decoding");
    assertThat(sd.path("method").asText()).isEqualTo("mtp");
    assertThat(sd.path("acceptance_rate").asDouble()).isBetween(0.57, 0.63);
    assertThat(sd.path("mean_acceptance_length").asDouble()).isBetween(2.7, 2.9);
    assertThat(plain.has("speculative_decoding")).isFalse();
    // fewer, longer steps: the same tokens, each request finished sooner
    assertThat(spec.path("overall").path("total_output_tokens").asLong())
        .isEqualTo(plain.path("overall").path("total_output_tokens").asLong());
    assertThat(spec.path("engine").path("steps").asLong()).isLessThan(plain.path("engine").path("steps").asLong());
    assertThat(spec.path("overall").path("e2e_ms").path("mean").asDouble())
        .isLessThan(plain.path("overall").path("e2e_ms").path("mean").asDouble());
  }

  @Test
  void vllmsConfigAndGoBlisFlagsGiveTheSameRun() throws Exception {
    BlisCliTest.Outcome vllm = run("--speculative-config", "{\"method\": \"eagle3\", \"num_speculative_tokens\": 2}",
        "--speculative-acceptance-rate", "0.5");
    BlisCliTest.Outcome go = run("--num-speculative-tokens", "2", "--speculative-acceptance-rate", "0.5",
        "--speculative-method", "eagle3");
    assertThat(json(vllm).path("speculative_decoding").path("drafts").asLong()).isPositive();
    assertThat(go.out()).isEqualTo(vllm.out());
  }

  @Test
  void anFp8KvCacheDoublesTheBlocks() throws Exception {
    long auto = json(run()).path("engine").path("kv_total_blocks").asLong();
    long fp8 = json(run("--kv-cache-dtype", "fp8")).path("engine").path("kv_total_blocks").asLong();
    assertThat(fp8).isBetween(2 * auto, 2 * auto + 1);
  }

  @Test
  void flagsWithoutSpeculationOrWithBadValuesAreRefused() {
    BlisCliTest.Outcome noK = run("--speculative-acceptance-rate", "0.5");
    assertThat(noK.code()).isNotZero();
    assertThat(noK.err()).contains("--num-speculative-tokens above 0");
    BlisCliTest.Outcome badRate = run("--num-speculative-tokens", "2", "--speculative-acceptance-rate", "1.5");
    assertThat(badRate.code()).isNotZero();
    assertThat(badRate.err()).contains("[0, 1]").doesNotContain("Exception");
    BlisCliTest.Outcome noProfile = run("--speculative-config", "{\"method\": \"ngram\", \"num_speculative_tokens\": 4}");
    assertThat(noProfile.code()).isNotZero();
    assertThat(noProfile.err()).contains("no published acceptance profile for ngram");
    BlisCliTest.Outcome both = run("--speculative-config", "{\"method\": \"mtp\", \"num_speculative_tokens\": 1}",
        "--num-speculative-tokens", "1");
    assertThat(both.err()).contains("not both");
  }

  @Test
  void aWorkloadCarriesItsOwnAcceptance() throws Exception {
    // the default workload's requests are of SLO class "standard"
    JsonNode high = json(run("--num-speculative-tokens", "2", "--speculative-acceptance-rate", "0.1",
        "--speculative-acceptance-for", "standard=0.9:0.8")).path("speculative_decoding");
    assertThat(high.path("position_acceptance_rates").get(0).asDouble()).isBetween(0.87, 0.93);
    JsonNode named = json(run("--num-speculative-tokens", "3", "--speculative-acceptance-rate", "0.1",
        "--speculative-acceptance-for", "standard=eagle3-qwen3-8b-mt-bench")).path("speculative_decoding");
    assertThat(named.path("position_acceptance_rates").get(0).asDouble()).isBetween(0.62, 0.69);
    BlisCliTest.Outcome bad = run("--num-speculative-tokens", "2", "--speculative-acceptance-for", "code=0.9:x");
    assertThat(bad.code()).isNotZero();
    assertThat(bad.err()).contains("'x' is not a rate");
  }
}
