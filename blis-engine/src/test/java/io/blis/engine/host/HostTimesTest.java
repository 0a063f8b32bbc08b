package io.blis.engine.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.blis.api.BatchView;
import io.blis.api.LatencyModel;
import io.blis.api.RequestView;
import io.blis.engine.cluster.VllmVersion;
import org.junit.jupiter.api.Test;

class HostTimesTest {

  private static final LatencyModel GPU = new LatencyModel() {
    public long stepTime(BatchView batch) {
      return 10_000;
    }

    public long queueingTime(RequestView r) {
      return 7;
    }

    public long outputTokenProcessingTime() {
      return 3;
    }

    public long schedulingProcessingTime() {
      return 2;
    }

    public long preemptionProcessingTime() {
      return 1;
    }
  };

  private static BatchView batch(int n) {
    return new BatchView() {
      public int size() {
        return n;
      }

      public RequestView get(int index) {
        throw new UnsupportedOperationException();
      }
    };
  }

  @Test
  void aSynchronousEngineAddsItsHostTimeAnAsynchronousOneHidesIt() {
    HostTime h = new HostTime(1_000, 200, 50);
    assertThat(h.of(4, 2)).isEqualTo(1_000 + 200 + 200);
    assertThat(new HostBoundModel(GPU, h, 2, 1, false).stepTime(batch(4))).isEqualTo(11_400);
    assertThat(new HostBoundModel(GPU, h, 2, 1, true).stepTime(batch(4))).isEqualTo(10_000);
    // more host time than GPU time shows through even when scheduled ahead
    assertThat(new HostBoundModel(GPU, h, 2, 1, true).stepTime(batch(400))).isEqualTo(21_200);
    // multi-step scheduling spreads one step's host time over its steps
    assertThat(new HostBoundModel(GPU, h, 2, 8, false).stepTime(batch(4))).isEqualTo(10_175);
    HostBoundModel m = new HostBoundModel(GPU, h, 1, 1, false);
    assertThat(m.queueingTime(null)).isEqualTo(7);
    assertThat(m.outputTokenProcessingTime()).isEqualTo(3);
    assertThat(m.schedulingProcessingTime()).isEqualTo(2);
    assertThat(m.preemptionProcessingTime()).isEqualTo(1);
    assertThatThrownBy(() -> new HostTime(-1, 0, 0)).hasMessageContaining(">= 0");
  }

  @Test
  void aReleaseTakesTheFirstGenerationOfItsEngineThatHoldsIt() {
    HostTimes t = HostTimes.bundled();
    assertThat(t.of(VllmVersion.parse("0.2.7"), false).name()).isEqualTo("v0-before-0.3");
    assertThat(t.of(VllmVersion.parse("0.4.0"), false).name()).isEqualTo("v0-before-0.6");
    assertThat(t.of(VllmVersion.parse("0.6.0"), false).name()).isEqualTo("v0");
    assertThat(t.of(VllmVersion.parse("0.10.1"), false).name()).isEqualTo("v0");
    assertThat(t.of(VllmVersion.parse("0.9.2"), true).name()).isEqualTo("v1");
  }

  @Test
  void badTablesAreRefusedNamingTheKey() {
    assertThatThrownBy(() -> HostTimes.parse("version: 1\ngenerations:\n  - {name: a, engine: v2, per_step_us: 1,"
        + " per_extra_rank_us: 0, per_request_us: 0}\n", "f.yaml")).hasMessageContaining("f.yaml: generations[0]:"
        + " needs a name and engine v0 or v1");
    assertThatThrownBy(() -> HostTimes.parse("version: 1\ngenerations:\n  - {name: a, engine: v1, per_step_us: x,"
        + " per_extra_rank_us: 0, per_request_us: 0}\n", "f.yaml")).hasMessageContaining("per_step_us must be a"
        + " number");
    assertThatThrownBy(() -> HostTimes.parse("version: 1\ngenerations:\n  - {name: a, engine: v1, per_step_us: 1,"
        + " per_extra_rank_us: 0, per_request_us: 0, speed: 3}\n", "f.yaml")).hasMessageContaining("unknown key"
        + " 'speed'");
    assertThatThrownBy(() -> HostTimes.parse("version: 1\ngenerations:\n  - {name: a, engine: v1, per_step_us: 1,"
        + " per_extra_rank_us: 0, per_request_us: 0}\n", "f.yaml").of(VllmVersion.parse("0.4.0"), false))
        .hasMessageContaining("no generation of the V0 engine holds vLLM 0.4.0");
  }
}
