package io.blis.engine.corpus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.blis.api.Coefficients;
import io.blis.engine.cluster.VllmVersion;
import io.blis.engine.host.HostTimes;
import io.blis.latency.coeff.CoefficientFiles;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Corpus points replayed with a linear step model, worked by hand. */
class CorpusReplayTest {

  /** step = 1000 us + 10 us per prefill token + 100 us per decode request; no front-end time. */
  private static final Coefficients LINEAR = CoefficientFiles.parseInline("alpha=5000,0,0;beta=1000,10,100");

  private static CorpusPoint latency(String version, int batch, int in, int out) {
    VllmVersion v = VllmVersion.parse(version);
    return new CorpusPoint("s", "p", CorpusHalf.CHOOSING, "meta-llama/Llama-2-7b-hf", null, "H100", 1, 1, 1, false, v,
        v.v1ByDefault(), Benchmark.LATENCY, new CorpusPoint.Workload(batch, in, out, 0, Double.POSITIVE_INFINITY, 1,
            0, "", Double.NaN, false, 0, Double.NaN, Double.NaN), CorpusPoint.Server.NONE,
        Map.of(Measured.BATCH_LATENCY_MS, 3.0), Measured.BATCH_LATENCY_MS, false, List.of());
  }

  @Test
  void theLatencyBenchmarkTimesTheBatchAfterItsWarmUp() {
    CorpusReplay replay = new CorpusReplay("blackbox", 42, null);
    // V1 (0.8.4, synchronous): the warm-up's 40-token prompts leave 2 full blocks cached, so the measured
    // batch prefills 8 tokens each: 1000 + 10 x 16 = 1160 us, then 2 decode steps of 1000 + 2 x 100 us;
    // the offline engine has no API server, so the 5 ms front-end time is not charged
    CorpusReplay.Predicted v1 = replay.simulate(latency("0.8.4", 2, 40, 3), LINEAR);
    assertThat(v1.values().get(Measured.BATCH_LATENCY_MS)).isCloseTo(3.56, within(1e-9));
    // V0 (0.6.3): no prefix cache, the whole prompts again: 1000 + 10 x 80 + 2 x 1200 us
    CorpusReplay.Predicted v0 = replay.simulate(latency("0.6.3", 2, 40, 3), LINEAR);
    assertThat(v0.values().get(Measured.BATCH_LATENCY_MS)).isCloseTo(4.2, within(1e-9));
  }

  @Test
  void aSynchronousEngineWaitsForItsHostTime() {
    HostTimes host = HostTimes.parse("""
        version: 1
        generations:
          - {name: old, engine: v0, per_step_us: 500, per_extra_rank_us: 0, per_request_us: 50}
          - {name: new, engine: v1, per_step_us: 300, per_extra_rank_us: 0, per_request_us: 0}
        """, "test");
    CorpusReplay replay = new CorpusReplay("blackbox", 42, host);
    // V0: each of the 3 steps of the measured batch of 2 waits 500 + 2 x 50 us more
    assertThat(replay.simulate(latency("0.6.3", 2, 40, 3), LINEAR).values().get(Measured.BATCH_LATENCY_MS))
        .isCloseTo(4.2 + 3 * 0.6, within(1e-9));
    // V1 0.15 schedules asynchronously: 300 us of host time hides behind every step
    assertThat(replay.simulate(latency("0.15.1", 2, 40, 3), LINEAR).values().get(Measured.BATCH_LATENCY_MS))
        .isCloseTo(3.56, within(1e-9));
    // V1 0.8.4 synchronously: 3 x 300 us more
    assertThat(replay.simulate(latency("0.8.4", 2, 40, 3), LINEAR).values().get(Measured.BATCH_LATENCY_MS))
        .isCloseTo(3.56 + 0.9, within(1e-9));
  }

  @Test
  void servingStatisticsAreTheBenchmarksOwn() {
    VllmVersion v = VllmVersion.parse("0.15.1");
    // two requests at once, 20 prompt tokens and 5 output tokens each, through the API server (5 ms)
    CorpusPoint p = new CorpusPoint("s", "q", CorpusHalf.CHOOSING, "meta-llama/Llama-2-7b-hf", null, "H100", 1, 1, 1,
        false, v, true, Benchmark.SERVING, new CorpusPoint.Workload(0, 20, 5, 2, Double.POSITIVE_INFINITY, 1, 0,
            "random", Double.NaN, true, 0, Double.NaN, Double.NaN), CorpusPoint.Server.NONE,
        Map.of(Measured.MEAN_TTFT_MS, 1.0, Measured.MEAN_TPOT_MS, 1.0, Measured.DURATION_S, 1.0,
            Measured.OUTPUT_THROUGHPUT, 1.0), Measured.MEAN_TPOT_MS, false, List.of());
    CorpusReplay.Predicted r = new CorpusReplay("blackbox", 42, null).simulate(p, LINEAR);
    // both arrive at 5 ms; one prefill step of 40 tokens (1.4 ms), then 4 decode steps of 1.2 ms
    assertThat(r.values().get(Measured.MEAN_TTFT_MS)).isCloseTo(5 + 1.4, within(1e-9));
    assertThat(r.values().get(Measured.MEAN_TPOT_MS)).isCloseTo(1.2, within(1e-9));
    assertThat(r.values().get(Measured.DURATION_S)).isCloseTo((5 + 1.4 + 4 * 1.2) / 1000, within(1e-12));
    assertThat(r.values().get(Measured.OUTPUT_THROUGHPUT)).isCloseTo(10 / ((5 + 1.4 + 4 * 1.2) / 1000), within(1e-6));
    assertThat(r.meanBatch()).isCloseTo(10 / 5.0, within(1e-9)); // 10 tokens in 5 steps
  }

  @Test
  void percentilesInterpolateAsNumpyDoes() {
    assertThat(CorpusReplay.percentile(new double[] {4, 1, 3, 2}, 50)).isEqualTo(2.5);
    assertThat(CorpusReplay.percentile(new double[] {1, 2, 3, 4, 5}, 99)).isCloseTo(4.96, within(1e-12));
  }
}
