package io.blis.cli;

import static io.blis.cli.BlisCliTest.blis;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * README's cluster example (the example bundle: 4 H100 + 2 A100 behind the weighted router, the
 * chat-and-batch workload) with the weighted router's scorers as README writes them: every
 * instance serves, none holds more than twice the mean, and the prefix cache hits more often than
 * under round-robin.
 */
class WeightedBalanceCliTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String BUNDLE = Path.of("..", "docs", "examples", "cluster-bundle.yaml").toString();
  private static final String WORKLOAD = Path.of("..", "docs", "examples", "chat-and-batch.yaml").toString();

  private static JsonNode run(String... extra) throws Exception {
    List<String> args = new ArrayList<>(List.of("run", "--policy-config", BUNDLE, "--workload-spec", WORKLOAD));
    args.addAll(List.of(extra));
    BlisCliTest.Outcome o = blis(args.toArray(String[]::new));
    assertThat(o.code()).as(o.err()).isZero();
    return JSON.readTree(o.out());
  }

  private static void balanced(JsonNode r, String what) {
    List<Long> injected = new ArrayList<>();
    for (JsonNode i : r.path("instances")) {
      injected.add(i.path("metrics").path("injected_requests").asLong());
    }
    assertThat(injected).as(what).hasSize(6);
    double mean = injected.stream().mapToLong(Long::longValue).average().orElseThrow();
    assertThat(injected).as(what + ": no instance idle, none above twice the mean").allSatisfy(n ->
        assertThat(n).isPositive().isLessThanOrEqualTo((long) (2 * mean)));
    // routing decisions that found an instance with twice the mean backlog: rare
    long total = r.path("overall").path("injected_requests").asLong();
    assertThat(r.path("anomalies").path("hol_blocking_events").asLong()).as(what).isLessThan(total / 100);
    assertThat(r.path("overall").path("timed_out_requests").asLong()).as(what).isZero();
  }

  @Test
  void theReadmeClusterExampleStaysBalancedAndHitsThePrefixCacheMoreThanRoundRobin() throws Exception {
    JsonNode roundRobin = run("--routing-policy", "round-robin");
    JsonNode flags = run("--routing-policy", "weighted", "--routing-scorers", "prefix-cache:2,queue-depth:1,in-flight:1");
    JsonNode bundle = run();
    balanced(flags, "README's flags");
    balanced(bundle, "the bundle's scorers");
    double rrHit = roundRobin.path("engine").path("kv_token_hit_rate").asDouble();
    assertThat(flags.path("engine").path("kv_token_hit_rate").asDouble()).isGreaterThan(rrHit + 0.1);
    assertThat(bundle.path("engine").path("kv_token_hit_rate").asDouble()).isGreaterThan(rrHit + 0.1);
    assertThat(flags.path("overall").path("ttft_ms").path("p99").asDouble())
        .isLessThanOrEqualTo(roundRobin.path("overall").path("ttft_ms").path("p99").asDouble() * 1.5);
  }
}
