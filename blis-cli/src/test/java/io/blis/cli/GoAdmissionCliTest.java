package io.blis.cli;

import static io.blis.cli.BlisCliTest.blis;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Go BLIS's tier-shed and gaie-legacy admission, from its docs' policy configs. */
class GoAdmissionCliTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  /** A critical client beside a batch one, more than one H100 serves. */
  private static final String SPEC = """
      seed: 9
      aggregate_rate: 60
      num_requests: 1500
      clients:
        - id: chat
          slo_class: critical
          input: {type: constant, value: 300}
          output: {type: constant, value: 150}
        - id: bulk
          slo_class: batch
          rate_fraction: 2
          input: {type: constant, value: 1000}
          output: {type: constant, value: 300}
      """;

  private static JsonNode run(Path dir, String config) throws Exception {
    Path spec = dir.resolve("spec.yaml");
    Files.writeString(spec, SPEC);
    Path policies = dir.resolve("policies.yaml");
    Files.writeString(policies, config);
    BlisCliTest.Outcome o = blis("run", "--model", "llama-3.1-8b", "--num-instances", "2", "--workload-spec",
        spec.toString(), "--policy-config", policies.toString());
    assertThat(o.code()).as(o.err()).isZero();
    return JSON.readTree(o.out());
  }

  @Test
  void tierShedAtThresholdZeroShedsTheBatchClassAndKeepsTheCriticalOne(@TempDir Path dir) throws Exception {
    // docs/guide/admission.md's policies.yaml, as written there
    JsonNode r = run(dir, "admission:\n  policy: \"tier-shed\"\n  tier_shed_threshold: 0        # 0 = shed at any load level\n"
        + "  tier_shed_min_priority: 3     # admit standard(3)+critical(4), shed the rest\n");
    JsonNode classes = r.path("slo_classes");
    assertThat(classes.path("critical").path("rejected_requests").asLong()).isZero();
    assertThat(classes.path("batch").path("rejected_requests").asLong()).isPositive();
    assertThat(r.path("overall").path("rejected_by_reason").path("tier_shed").asLong())
        .isEqualTo(classes.path("batch").path("rejected_requests").asLong());
  }

  @Test
  void gaieLegacyShedsBatchRequestsOnlyWhileThePoolIsSaturated(@TempDir Path dir) throws Exception {
    JsonNode r = run(dir, "admission:\n  policy: \"gaie-legacy\"\n  gaie_qd_threshold: 5\n  gaie_kv_threshold: 0.8\n");
    JsonNode classes = r.path("slo_classes");
    long shed = classes.path("batch").path("rejected_requests").asLong();
    assertThat(classes.path("critical").path("rejected_requests").asLong()).isZero();
    assertThat(shed).isPositive().isLessThan(1000); // some batch requests pass while the pool is not saturated
    assertThat(r.path("overall").path("rejected_by_reason").path("gaie_saturated").asLong()).isEqualTo(shed);
  }
}
