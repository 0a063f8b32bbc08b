package io.blis.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Go BLIS's streaming saturation detectors over hand-made requests. */
class SaturationTraceTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  private static JsonNode report(SaturationTrace t, SaturationTrace.Events e) throws Exception {
    StringWriter w = new StringWriter();
    t.write(e, t.finals(e), w);
    return JSON.readTree(w.toString());
  }

  @Test
  void eventsAreArrivalsAndCompletionsInTimeOrderArrivalsFirst() {
    // request 7 arrives at 0 and takes 2 s; request 3 arrives at 1 s and takes 1 s: both end at 2 s
    SaturationTrace.Events e = new SaturationTrace.Events(new long[] {7, 3}, new long[] {0, 1_000_000},
        new long[] {2_000_000, 1_000_000});
    assertThat(e.timeUs).containsExactly(0, 1_000_000, 2_000_000, 2_000_000);
    assertThat(e.completion).containsExactly(false, false, true, true);
    assertThat(e.latencyMs).containsExactly(0, 0, 1000, 2000); // equal times: request 3 before 7
  }

  @Test
  void compositeAndThresholdVerdictsFollowTheirFormulas() throws Exception {
    // 40 requests one a second, each taking (i + 1) x 100 ms: latencies rise steadily
    int n = 40;
    long[] ids = new long[n];
    long[] arrival = new long[n];
    long[] e2e = new long[n];
    for (int i = 0; i < n; i++) {
      ids[i] = i;
      arrival[i] = i * 1_000_000L;
      e2e[i] = (i + 1) * 100_000L;
    }
    SaturationTrace.Events events = new SaturationTrace.Events(ids, arrival, e2e);
    JsonNode r = report(SaturationTrace.of("threshold,composite", null, null), events);
    JsonNode trace = r.get("trace");
    assertThat(trace.size()).isEqualTo(2 * 2 * n);
    // the first event (an arrival): composite sees one arrival and no completion
    assertThat(trace.get(0).get("detector").asText()).isEqualTo("composite");
    JsonNode first = trace.get(0).get("result");
    assertThat(first.get("level").asText()).isEqualTo("BACKLOGGED");
    assertThat(first.get("score").asDouble()).isEqualTo(1);
    assertThat(first.get("confidence").asDouble()).isEqualTo(0.05);
    assertThat(trace.get(1).get("result").get("signals").size()).isZero(); // threshold: nothing completed
    // the last event: 40 arrivals, 40 completions; latency means of the halves 1,050 and 3,050 ms
    JsonNode last = trace.get(trace.size() - 2).get("result");
    assertThat(last.get("signals").get("rate_deficit").asDouble()).isZero();
    assertThat(last.get("signals").get("quartile_monotone").asDouble()).isEqualTo(1);
    assertThat(last.get("signals").get("latency_trend").asDouble()).isEqualTo(1); // (3050 - 1050) / 1050, capped
    assertThat(last.get("signals").get("noise_floor").asDouble()).isCloseTo(1 / Math.sqrt(40), within(1e-15));
    assertThat(last.get("level").asText()).isEqualTo("OVERLOADED");
    JsonNode threshold = trace.get(trace.size() - 1).get("result");
    assertThat(threshold.get("signals").get("mean_e2e").asDouble()).isCloseTo(2050, within(1e-9));
    assertThat(threshold.get("score").asDouble()).isCloseTo(0.5 * 2050 / 5000, within(1e-12));
    assertThat(threshold.get("confidence").asDouble()).isCloseTo(1 - 1 / Math.sqrt(41), within(1e-12));
    assertThat(threshold.get("level").asText()).isEqualTo("STABLE");
    assertThat(r.get("final").toString()).isEqualTo("{\"composite\":\"OVERLOADED\",\"threshold\":\"STABLE\"}");
  }

  @Test
  void backlogDriftFitsTheSlopeOfRequestsInFlightPerWindow(@TempDir Path dir) throws Exception {
    // windows of 1 s; 3 arrivals in each of the first 3 s, nothing completes until 10 s
    long[] ids = new long[9];
    long[] arrival = new long[9];
    long[] e2e = new long[9];
    for (int i = 0; i < 9; i++) {
      ids[i] = i;
      arrival[i] = (i / 3) * 1_000_000L + i;
      e2e[i] = 10_000_000L - arrival[i] + i;
    }
    Path config = Files.writeString(dir.resolve("sat.yaml"), "backlog_drift:\n  window_size_sec: 1\n");
    SaturationTrace t = SaturationTrace.of("backlog-drift", config, null);
    JsonNode trace = report(t, new SaturationTrace.Events(ids, arrival, e2e)).get("trace");
    // after the 9th arrival: in flight 3, 6, 9 at the ends of windows 0, 1, 2: slope 3
    JsonNode ninth = trace.get(8).get("result");
    assertThat(ninth.get("signals").get("running_slope").asDouble()).isEqualTo(3);
    assertThat(ninth.get("signals").get("in_flight").asDouble()).isEqualTo(9);
    assertThat(ninth.get("level").asText()).isEqualTo("OVERLOADED"); // 3 > 3 x 1/sqrt(9)
    assertThat(ninth.get("score").asDouble()).isEqualTo(1);
    // the first completion at 10 s: windows 3..9 carry 9, window 10 holds 8
    JsonNode tenth = trace.get(9).get("result");
    assertThat(tenth.get("signals").get("in_flight").asDouble()).isEqualTo(8);
    double[] y = {3, 6, 9, 9, 9, 9, 9, 9, 9, 9, 8};
    assertThat(tenth.get("signals").get("running_slope").asDouble()).isCloseTo(olsSlope(y), within(1e-12));
  }

  private static double olsSlope(double[] y) {
    double mx = (y.length - 1) / 2.0;
    double my = java.util.Arrays.stream(y).average().orElseThrow();
    double num = 0;
    double den = 0;
    for (int i = 0; i < y.length; i++) {
      num += (i - mx) * (y[i] - my);
      den += (i - mx) * (i - mx);
    }
    return num / den;
  }

  @Test
  void theFinalLabelIsThePluralityOfTheTrailingWindowTheMoreSevereOnATie() throws Exception {
    // one request: arrival at 0 (composite BACKLOGGED: nothing completed), completion at 1 s
    // (STABLE): within a 2 s window one each, a tie: BACKLOGGED; within 0.5 s only the STABLE one
    SaturationTrace.Events e = new SaturationTrace.Events(new long[] {1}, new long[] {0}, new long[] {1_000_000});
    assertThat(SaturationTrace.of("composite", null, "2s").finals(e)).isEqualTo(Map.of("composite", "BACKLOGGED"));
    assertThat(SaturationTrace.of("composite", null, "500ms").finals(e)).isEqualTo(Map.of("composite", "STABLE"));
    assertThat(SaturationTrace.of("all", null, null).finals(new SaturationTrace.Events(new long[0], new long[0],
        new long[0]))).isEqualTo(Map.of("composite", "STABLE", "threshold", "STABLE", "backlog-drift", "STABLE"));
  }

  @Test
  void selectionsConfigurationsAndDurationsAreCheckedInOneLine(@TempDir Path dir) throws Exception {
    assertThat(SaturationTrace.goDurationUs("1m30s")).isEqualTo(90_000_000);
    assertThat(SaturationTrace.goDurationUs("1.5h")).isEqualTo(5_400_000_000L);
    assertThat(SaturationTrace.goDurationUs("250ms")).isEqualTo(250_000);
    assertThatThrownBy(() -> SaturationTrace.goDurationUs("30")).hasMessageContaining("expected a duration above 0");
    assertThatThrownBy(() -> SaturationTrace.goDurationUs("0s")).hasMessageContaining("expected a duration above 0");
    assertThatThrownBy(() -> SaturationTrace.of("composite,fancy", null, null))
        .hasMessage("--detectors: unknown detector 'fancy'; known: composite, threshold, backlog-drift (or all, or a"
            + " comma list)");
    assertThatThrownBy(() -> SaturationTrace.of("all,composite", null, null)).hasMessageContaining("all cannot be combined");
    assertThatThrownBy(() -> SaturationTrace.of(" , ", null, null)).hasMessageContaining("names no detector");
    Path threshold = Files.writeString(dir.resolve("t.yaml"), "threshold:\n  threshold_ms: 8000\n");
    assertThatThrownBy(() -> SaturationTrace.of("composite", threshold, null))
        .hasMessageContaining("a threshold block needs the threshold detector among --detectors");
    Path bad = Files.writeString(dir.resolve("b.yaml"), "threshold:\n  threshold_ms: -1\n");
    assertThatThrownBy(() -> SaturationTrace.of("threshold", bad, null))
        .hasMessageContaining("threshold.threshold_ms must be a finite number > 0, got -1.0");
    Path unknown = Files.writeString(dir.resolve("u.yaml"), "composite:\n  x: 1\n");
    assertThatThrownBy(() -> SaturationTrace.of("composite", unknown, null)).hasMessageContaining(unknown.toString())
        .hasMessageContaining("composite");
    Path ratios = Files.writeString(dir.resolve("r.yaml"), "backlog_drift:\n  saturated_drain_ratio: 0.99\n");
    assertThatThrownBy(() -> SaturationTrace.of("backlog-drift", ratios, null))
        .hasMessageContaining("saturated_drain_ratio (0.99) must be at most transient_drain_ratio (0.98)");
  }
}
