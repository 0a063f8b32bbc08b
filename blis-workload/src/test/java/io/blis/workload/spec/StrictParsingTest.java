package io.blis.workload.spec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class StrictParsingTest {

  static final String BASE = """
      aggregate_rate: 5
      num_requests: 10
      clients:
        - id: a
          input: {type: constant, value: 10}
          output: {type: constant, value: 5}
      """;

  @Test
  void baseParses() {
    assertThat(WorkloadSpec.parse(BASE, "b.yaml").clients()).hasSize(1);
  }

  @Test
  void duplicateKeysQuotedNumbersAndEmptyDocumentsAreErrors() {
    assertThatThrownBy(() -> WorkloadSpec.parse(BASE + "num_requests: 11\n", "d.yaml"))
        .hasMessageStartingWith("d.yaml:7:")
        .hasMessageContaining("num_requests");
    assertThatThrownBy(() -> WorkloadSpec.parse(BASE.replace("aggregate_rate: 5", "aggregate_rate: \"5\""), "q.yaml"))
        .hasMessageStartingWith("q.yaml:1:")
        .hasMessageContaining("aggregate_rate");
    assertThatThrownBy(() -> WorkloadSpec.parse("", "e.yaml")).hasMessageStartingWith("e.yaml");
    assertThatThrownBy(() -> WorkloadSpec.parse(BASE.replace("value: 5", "value: 5, mean: 3"), "m.yaml"))
        .hasMessageStartingWith("m.yaml:6:")
        .hasMessageContaining("constant length takes only value");
    assertThatThrownBy(() -> WorkloadSpec.parse(BASE.replace("aggregate_rate: 5", "aggregate_rate: .inf"), "i.yaml"))
        .hasMessageContaining("aggregate_rate");
    assertThatThrownBy(() -> WorkloadSpec.parse(BASE.replace("clients:", "clients: 3\nx:"), "t.yaml"))
        .hasMessageStartingWith("t.yaml:");
  }
}
