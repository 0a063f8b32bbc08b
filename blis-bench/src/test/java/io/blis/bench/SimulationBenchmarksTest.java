package io.blis.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.blis.engine.result.SimulationResult;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SimulationBenchmarksTest {

  @Test
  void engineStepScenarioIsSteadyDecodeOfTheWholeBatch() {
    EngineStepBenchmark b = new EngineStepBenchmark();
    b.runningRequests = 128;
    b.setUp();
    SimRunCounters counters = new SimRunCounters();
    counters.reset();
    SimulationResult r = b.steadyDecode(counters);
    assertThat(r.overall().completedRequests()).isEqualTo(128);
    assertThat(r.engine().preemptions()).isZero();
    // 128 x 64 prompt tokens fit one 2048-token step per 32 requests: 4 prefill steps at most,
    // then one step per further output token
    assertThat(r.engine().steps()).isBetween(768L, 768L + 4);
    assertThat(counters.steps).isEqualTo(r.engine().steps());
    assertThat(counters.requests).isEqualTo(128);
    // byte-identical on a second run
    assertThat(b.simulate().toJson()).isEqualTo(r.toJson());
  }

  @ParameterizedTest
  @ValueSource(strings = {"codegen-9000", "synthetic-10k"})
  void simulationScenariosCompleteEveryRequest(String workload) {
    SimulationBenchmark b = new SimulationBenchmark();
    b.workload = workload;
    b.setUp();
    SimRunCounters counters = new SimRunCounters();
    SimulationResult r = b.run(counters);
    long expected = workload.equals("codegen-9000") ? 9000 : 10_000;
    assertThat(r.overall().injectedRequests()).isEqualTo(expected);
    assertThat(r.overall().completedRequests()).isEqualTo(expected);
    assertThat(counters.requests).isEqualTo(expected);
    assertThat(counters.steps).isEqualTo(r.engine().steps()).isGreaterThan(expected);
  }

  @Test
  void unknownWorkloadIsNamed() {
    SimulationBenchmark b = new SimulationBenchmark();
    b.workload = "nope";
    b.setUp();
    org.assertj.core.api.Assertions.assertThatThrownBy(b::source)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'nope'");
  }
}
