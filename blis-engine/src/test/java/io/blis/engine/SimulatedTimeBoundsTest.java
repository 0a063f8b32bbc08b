package io.blis.engine;

import static io.blis.engine.TestRequests.req;
import static io.blis.engine.TestRequests.withTimeout;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.blis.workload.RequestSource;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Simulated time cannot overflow: inputs are bounded ({@link Simulation#MAX_SIMULATED_TIME_US},
 * {@link Simulation#MAX_DELAY_US}) and refused beyond with a message naming the bound; an overflow
 * inside the engine fails fast instead of running the clock backwards.
 */
class SimulatedTimeBoundsTest {

  private static Simulation.Builder sim(LinearTestModel model, RequestSource source) {
    return Simulation.builder().latencyModel(model).source(source);
  }

  @Test
  void theBoundsAreAYearOfSimulatedTimeAndAnHourPerDelay() {
    assertThat(Simulation.MAX_SIMULATED_TIME_US).isEqualTo(31_536_000_000_000L);
    assertThat(Simulation.MAX_DELAY_US).isEqualTo(3_600_000_000L);
  }

  @Test
  void controlPlaneLatenciesAboveAnHourAreRefused() {
    assertThatThrownBy(() -> Simulation.builder().routingLatencyUs(Long.MAX_VALUE))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("routing latency must be between 0 and 3600000000 us (one hour), got 9223372036854775807");
    assertThatThrownBy(() -> Simulation.builder().admissionLatencyUs(Simulation.MAX_DELAY_US + 1))
        .hasMessageContaining("admission latency must be between 0 and 3600000000 us (one hour)");
    assertThatThrownBy(() -> Simulation.builder().horizonUs(Long.MAX_VALUE))
        .hasMessageContaining("horizon must be between 0 and 31536000000000 us (365 days)");
    assertThatThrownBy(() -> Simulation.builder().cpuKvTier(10, 1e300))
        .hasMessageContaining("CPU KV load time per block must be between 0 and 3600000000 us");
    // the largest accepted latencies simulate
    var r = sim(LinearTestModel.constant(1000), RequestSource.of(List.of(req(0, 0, 16, 2))))
        .instances(2).admissionLatencyUs(Simulation.MAX_DELAY_US).routingLatencyUs(Simulation.MAX_DELAY_US)
        .build().run();
    assertThat(r.overall().completedRequests()).isEqualTo(1);
    assertThat(r.overall().e2e().meanUs()).isGreaterThan(2.0 * Simulation.MAX_DELAY_US);
  }

  @Test
  void anArrivalAtTheSimulatedTimeLimitIsSimulated() {
    // later arrivals and longer timeouts are refused where requests are built (RequestSpec), at the
    // same bound (Simulation.MAX_SIMULATED_TIME_US is RequestSpec.MAX_TIME_US)
    var r = sim(LinearTestModel.constant(1000), RequestSource.of(List.of(
        withTimeout(req(0, Simulation.MAX_SIMULATED_TIME_US, 16, 2), Simulation.MAX_SIMULATED_TIME_US))))
        .build().run();
    assertThat(r.overall().completedRequests()).isEqualTo(1);
  }

  @Test
  void aLatencyModelTimeAboveAnHourNamesTheModelsCoefficients() {
    RequestSource one = RequestSource.of(List.of(req(0, 0, 16, 2)));
    assertThatThrownBy(() -> sim(LinearTestModel.constant(Long.MAX_VALUE), one).build().run())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("latency model: step time of 9223372036854775807 us exceeds the limit of 3600000000 us"
            + " (one hour); check its coefficients");
    assertThatThrownBy(() -> sim(new LinearTestModel(1000, 0, Long.MAX_VALUE, 0, 0, 0),
        RequestSource.of(List.of(req(0, 0, 16, 2)))).build().run())
        .hasMessageContaining("latency model: queueing time of 9223372036854775807 us exceeds the limit");
    assertThatThrownBy(() -> sim(new LinearTestModel(1000, 0, 0, 0, Long.MAX_VALUE, 0),
        RequestSource.of(List.of(req(0, 0, 16, 2)))).build().run())
        .hasMessageContaining("latency model: output token processing time of 9223372036854775807 us");
    assertThatThrownBy(() -> sim(new LinearTestModel(1000, 0, 0, Long.MAX_VALUE, 0, 0),
        RequestSource.of(List.of(req(0, 0, 16, 2)))).build().run())
        .hasMessageContaining("latency model: scheduling processing time of 9223372036854775807 us");
  }

  @Test
  void anOverflowOnTheClockFailsFastInsteadOfRunningItBackwards() {
    assertThat(SimulatedTime.later(Simulation.MAX_SIMULATED_TIME_US, Simulation.MAX_DELAY_US))
        .isEqualTo(Simulation.MAX_SIMULATED_TIME_US + Simulation.MAX_DELAY_US);
    assertThatThrownBy(() -> SimulatedTime.later(Long.MAX_VALUE - 5, 6))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("simulated time overflow: 9223372036854775802 us + 6 us");
    assertThatThrownBy(() -> SimulatedTime.later(Long.MIN_VALUE, -1)).isInstanceOf(IllegalStateException.class);
  }
}
