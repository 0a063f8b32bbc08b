package io.blis.engine.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.blis.api.BatchView;
import io.blis.api.RequestView;
import io.blis.engine.cluster.VllmVersion;
import io.blis.engine.host.HostBoundModel;
import io.blis.engine.host.HostTimes;
import io.blis.latency.LatencyModels;

/**
 * {@code blis corpus --host-times FILE}: a table of the engine's host time by vLLM generation; an
 * accepted table gives each release a generation (or refuses it in one line), and its host time
 * times a step.
 */
class HostTimesFuzzTest extends ParserFuzzing {

  @FuzzTest
  void fuzz(byte[] in) throws Exception {
    parseThenUse(getClass(), in, "host-times.yaml", HostTimes::load, (table, file) -> {
      for (String v : new String[] {"0.2.7", "0.5.4", "0.6.3", "0.11.0"}) {
        for (boolean v1 : new boolean[] {false, true}) {
          OneLineErrors.accepted(v, null, () -> {
            var time = table.of(VllmVersion.parse(v), v1).time();
            new HostBoundModel(LatencyModels.constantStep(1000), time, 2, 1, !v1).stepTime(THREE_REQUESTS);
          });
        }
      }
    });
  }

  /** A batch of three requests; the host time reads only its size. */
  private static final BatchView THREE_REQUESTS = new BatchView() {
    @Override
    public int size() {
      return 3;
    }

    @Override
    public RequestView get(int index) {
      throw new IndexOutOfBoundsException(index);
    }
  };
}
