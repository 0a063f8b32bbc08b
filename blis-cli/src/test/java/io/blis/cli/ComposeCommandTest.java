package io.blis.cli;

import static io.blis.cli.BlisCliTest.blis;
import static org.assertj.core.api.Assertions.assertThat;

import io.blis.workload.spec.WorkloadSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code blis compose}: specs merged with every client keeping its rate. */
class ComposeCommandTest {

  private static final String OWN_A = """
      seed: 3
      aggregate_rate: 12
      num_requests: 100
      clients:
        - {id: a1, rate_fraction: 3, input: {type: constant, value: 10}, output: {type: constant, value: 5}}
        - {id: a2, rate_fraction: 1, input: {type: constant, value: 10}, output: {type: constant, value: 5}}
      """;

  private static final String OWN_B = """
      seed: 4
      num_requests: 50
      clients:
        - {id: b1, rate: 6, input: {type: constant, value: 20}, output: {type: constant, value: 5}}
      """;

  @Test
  void ownSpecsKeepEveryClientsRate(@TempDir Path dir) throws Exception {
    Path a = Files.writeString(dir.resolve("a.yaml"), OWN_A);
    Path b = Files.writeString(dir.resolve("b.yaml"), OWN_B);
    Path out = dir.resolve("ab.yaml");
    BlisCliTest.Outcome r = blis("compose", "--from", a.toString(), "--from", b.toString(), "--out", out.toString());
    assertThat(r.code()).as(r.err()).isZero();
    WorkloadSpec merged = WorkloadSpec.load(out);
    // a1 9 req/s and a2 3 req/s of a's 12, b1 its own 6; 150 requests; a's seed
    assertThat(merged.clients()).extracting(c -> c.arrival().rateRps()).containsExactly(9.0, 3.0, 6.0);
    assertThat(merged.maxRequests()).isEqualTo(150);
    assertThat(merged.seed()).isEqualTo(3);
  }

  @Test
  void clashesAndMixedFormatsAreOneLine(@TempDir Path dir) throws Exception {
    Path a = Files.writeString(dir.resolve("a.yaml"), OWN_A);
    BlisCliTest.Outcome twice = blis("compose", "--from", a.toString(), "--from", a.toString());
    assertThat(twice.code()).isEqualTo(2);
    assertThat(twice.err()).contains("client id 'a1' is in both").hasLineCount(1);
    Path go = Files.writeString(dir.resolve("go.yaml"), """
        version: "2"
        aggregate_rate: 5
        num_requests: 10
        clients:
          - id: g
            rate_fraction: 1.0
            arrival: {process: poisson}
            input_distribution: {type: constant, params: {value: 10}}
            output_distribution: {type: constant, params: {value: 5}}
        """);
    BlisCliTest.Outcome mixed = blis("compose", "--from", a.toString(), "--from", go.toString());
    assertThat(mixed.code()).isEqualTo(2);
    assertThat(mixed.err()).contains("compose specs of one format").hasLineCount(1);
    BlisCliTest.Outcome missing = blis("compose", "--from", dir.resolve("nope.yaml").toString());
    assertThat(missing.code()).isEqualTo(2);
    assertThat(missing.err()).contains("--from: no such file").hasLineCount(1);
  }
}
