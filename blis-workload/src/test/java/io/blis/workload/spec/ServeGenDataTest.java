package io.blis.workload.spec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import io.blis.workload.StrictYaml;
import io.blis.workload.synthetic.ArrivalProcess;
import io.blis.workload.synthetic.ClientSpec;
import io.blis.workload.synthetic.LengthDistribution;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** ServeGen data folders turned into Go BLIS cohorts, as Go BLIS's convert servegen does. */
class ServeGenDataTest {

  @TempDir Path tmp;
  /** The data folder: a name the working directory does not have, so that specs find it beside them. */
  private Path dir;

  @org.junit.jupiter.api.BeforeEach
  void folder() throws IOException {
    dir = Files.createDirectories(tmp.resolve("servegen-fixture-data"));
  }

  private static final String TWO_DAY_INPUT = "{100: 0.5, 400: 0.5}";

  /** A trace row: start seconds, rate, cv, pattern, shape, scale seconds. */
  private static String row(long start, double rate, double cv, String pattern, double shape, double scale) {
    return rate == 0 ? start + ",0.0,0.0,,," : start + "," + rate + "," + cv + "," + pattern + "," + shape + "," + scale;
  }

  private void chunk(String id, List<String> rows, Map<Long, String[]> windows) throws IOException {
    Files.writeString(dir.resolve("chunk-" + id + "-trace.csv"), String.join("\n", rows) + "\n");
    StringBuilder json = new StringBuilder("{");
    String sep = "";
    for (Map.Entry<Long, String[]> w : windows.entrySet()) {
      json.append(sep).append('"').append(w.getKey()).append("\": {");
      String[] v = w.getValue();
      json.append("\"input_tokens\": \"").append(v[0]).append("\", \"output_tokens\": \"").append(v[1]).append('"');
      if (v.length > 2) {
        json.append(", \"reason_ratio\": \"").append(v[2].replace("\"", "\\\"")).append('"');
      }
      json.append('}');
      sep = ", ";
    }
    Files.writeString(dir.resolve("chunk-" + id + "-dataset.json"), json.append('}').toString());
  }

  /**
   * Chunks 1-6 active the whole first half hour (00:00-00:30) of two days at 2^c req/s on day one
   * and twice that on day two (a mean of 1.5 x 2^c), gamma with shape 1 and scale 1/rate; chunk 7
   * active only at 08:00-08:30, at 4 then 8 req/s, Weibull. Lengths: day one's input is
   * {100, 400} (a lognormal fit of mu ln 200, sigma ln 2), day two's {200} (mu ln 200, sigma 0).
   */
  private void languageData() throws IOException {
    Map<Long, String[]> lengths = new TreeMap<>(Map.of(
        0L, new String[] {TWO_DAY_INPUT, "{50: 1.0}"},
        21_600L, new String[] {"{}", "{}"},
        86_400L, new String[] {"{200: 1.0}", "{50: 1.0}"}));
    for (int c = 1; c <= 6; c++) {
      List<String> rows = new ArrayList<>();
      for (int day = 0; day < 2; day++) {
        double rate = Math.pow(2, c) * (day + 1);
        for (long t = 0; t < 1800; t += 600) {
          rows.add(row(day * 86_400L + t, rate, 1.0, "Gamma", 1.0, 1 / rate));
        }
        rows.add(row(day * 86_400L + 28_800, 0, 0, "", 0, 0));
      }
      chunk(String.valueOf(c), rows, lengths);
    }
    List<String> rows = new ArrayList<>();
    for (int day = 0; day < 2; day++) {
      rows.add(row(day * 86_400L, 0, 0, "", 0, 0));
      for (long t = 28_800; t < 30_600; t += 600) {
        rows.add(row(day * 86_400L + t, 4.0 * (day + 1), 0.8, "Weibull", 1.3, 0.2));
      }
    }
    chunk("7", rows, lengths);
  }

  private static JsonNode cohorts(String yaml) {
    return StrictYaml.parse(yaml, "converted", JsonNode.class).get("cohorts");
  }

  private static List<JsonNode> of(JsonNode cohorts, String period) {
    List<JsonNode> out = new ArrayList<>();
    cohorts.forEach(c -> {
      if (c.get("id").asText().startsWith(period + "-")) {
        out.add(c);
      }
    });
    return out;
  }

  @Test
  void eachPeriodDealsItsActiveChunksToTheFiveClassesWithTheirSummedRates() throws IOException {
    languageData();
    String yaml = ServeGenData.toYaml(dir, 600, 180, 42, null, List.of(), null, null);
    JsonNode cohorts = cohorts(yaml);
    List<JsonNode> midnight = of(cohorts, "midnight");
    assertThat(midnight).extracting(c -> c.get("slo_class").asText())
        .containsExactly("background", "batch", "critical", "sheddable", "standard");
    // six chunks dealt round-robin: critical (dealt first) gets two
    assertThat(midnight).extracting(c -> c.get("population").asInt()).containsExactly(1, 1, 2, 1, 1);
    long members = 0;
    for (JsonNode c : midnight) {
      // each rate is 1.5 x the sum of its members' 2^c: a sum of distinct powers of two
      double rate = c.at("/spike/trace_rate").asDouble() / 1.5;
      long bits = Math.round(rate);
      assertThat(rate).isCloseTo(bits, within(1e-9));
      assertThat(Long.bitCount(bits)).isEqualTo(c.get("population").asInt());
      assertThat(members & bits).isZero();
      members |= bits;
      assertThat(c.at("/spike/start_time_us").asLong()).isZero();
      assertThat(c.at("/spike/duration_us").asLong()).isEqualTo(600_000_000L);
      assertThat(c.at("/arrival/process").asText()).isEqualTo("gamma");
      assertThat(c.at("/arrival/shape").asDouble()).isEqualTo(1.0);
      // lengths: the mean of day one's fit (ln 200, ln 2) and day two's (ln 200, 0)
      assertThat(c.at("/input_distribution/params/mu").asDouble()).isCloseTo(Math.log(200), within(1e-12));
      assertThat(c.at("/input_distribution/params/sigma").asDouble()).isCloseTo(Math.log(2) / 2, within(1e-12));
      assertThat(c.at("/output_distribution/params/mu").asDouble()).isCloseTo(Math.log(50), within(1e-12));
      assertThat(c.at("/output_distribution/params/sigma").asDouble()).isZero();
    }
    assertThat(members).isEqualTo(0b1111110);
    List<JsonNode> morning = of(cohorts, "morning");
    assertThat(morning).hasSize(1);
    JsonNode m = morning.get(0);
    assertThat(m.get("population").asInt()).isEqualTo(1);
    assertThat(m.at("/spike/trace_rate").asDouble()).isEqualTo(6.0);
    // the second period starts after the first one and its drain: (600 + 180) s
    assertThat(m.at("/spike/start_time_us").asLong()).isEqualTo(780_000_000L);
    assertThat(m.at("/arrival/process").asText()).isEqualTo("weibull");
    assertThat(m.at("/arrival/cv").asDouble()).isEqualTo(0.8);
    assertThat(m.at("/arrival/scale").asDouble()).isCloseTo(200_000, within(1e-6));
    assertThat(of(cohorts, "afternoon")).isEmpty();
    assertThat(yaml).contains("# midnight: ServeGen's window from 00:", "6 active chunk(s), played from 0 s for 600 s")
        .contains("# morning: ServeGen's window from 08:", "1 active chunk(s), played from 780 s for 600 s");
  }

  @Test
  void theSameSeedGivesTheSameSpecAndAnotherSeedTheSameTotals() throws IOException {
    languageData();
    String a = ServeGenData.toYaml(dir, 300, 0, 42, null, List.of(), null, null);
    assertThat(ServeGenData.toYaml(dir, 300, 0, 42, null, List.of(), null, null)).isEqualTo(a);
    for (long seed : new long[] {1, 7, 1234}) {
      JsonNode c = cohorts(ServeGenData.toYaml(dir, 300, 0, seed, null, List.of(), null, null));
      double rate = 0;
      for (JsonNode x : of(c, "midnight")) {
        rate += x.at("/spike/trace_rate").asDouble();
      }
      assertThat(rate).isCloseTo(1.5 * 126, within(1e-9));
      assertThat(of(c, "morning").get(0).at("/spike/start_time_us").asLong()).isEqualTo(300_000_000L);
    }
  }

  @Test
  void onePeriodIsKeptOnRequestAndAPeriodWithoutActiveChunksIsRefused() throws IOException {
    languageData();
    JsonNode morning = cohorts(ServeGenData.toYaml(dir, 600, 180, 42, "morning", List.of("a header"), 500L, null));
    assertThat(morning).hasSize(1);
    assertThat(morning.get(0).get("id").asText()).isEqualTo("morning-critical");
    assertThat(ServeGenData.toYaml(dir, 600, 180, 42, "morning", List.of("a header"), 500L, 9L))
        .startsWith("# a header\n").contains("\nnum_requests: 500\n", "\nhorizon: 9\n");
    assertThatThrownBy(() -> ServeGenData.toYaml(dir, 600, 180, 42, "afternoon", List.of(), null, null))
        .hasMessage("no cohort could be made from " + dir + ": no chunk is active in the afternoon period at the"
            + " windows drawn with seed 42");
    assertThatThrownBy(() -> ServeGenData.toYaml(dir, 600, 180, 42, "noon", List.of(), null, null))
        .hasMessage("the period must be one of [midnight, morning, afternoon], got 'noon'");
  }

  @Test
  void reasoningDataBecomesFiveCohortsOfItsBusiestWindowWithTheMeanReasoningRatio() throws IOException {
    // chunk c is active from window c (c x 600 s) to window 5: windows 3-5 have all three, the first is taken
    String[] ratios = {"{\"0.5\": 1.0}", "{\"0.5\": 0.5, \"0.9\": 0.5}", "{\"0.1\": 1.0}"};
    for (int c = 1; c <= 3; c++) {
      List<String> rows = new ArrayList<>();
      for (int w = 0; w < 8; w++) {
        rows.add(row(w * 600L, w >= c && w <= 5 ? c * 0.25 + w : 0, 1.2, "Gamma", 0.7, 1.0));
      }
      chunk(String.valueOf(c), rows, Map.of(0L, new String[] {TWO_DAY_INPUT, "{50: 1.0}", ratios[c - 1]}));
    }
    String yaml = ServeGenData.toYaml(dir, 900, 180, 42, null, List.of(), 100L, null);
    assertThat(yaml).contains("category: reasoning\n")
        .contains("# reasoning: ServeGen's window from 00:30 of day one (the most active chunks: 3)");
    JsonNode cohorts = cohorts(yaml);
    assertThat(cohorts).hasSize(3);
    double rate = 0;
    for (JsonNode c : cohorts) {
      assertThat(c.get("id").asText()).startsWith("reasoning-");
      assertThat(c.at("/arrival/process").asText()).isEqualTo("poisson");
      assertThat(c.at("/spike/start_time_us").asLong()).isZero();
      assertThat(c.at("/spike/duration_us").asLong()).isEqualTo(900_000_000L);
      assertThat(c.get("closed_loop").asBoolean()).isFalse();
      assertThat(c.at("/reasoning/multi_turn/max_rounds").asInt()).isEqualTo(1);
      JsonNode p = c.at("/reasoning/reason_ratio_distribution/params");
      assertThat(p.get("10").asDouble()).isCloseTo(1.0 / 3, within(1e-12));
      assertThat(p.get("50").asDouble()).isCloseTo(0.5, within(1e-12));
      assertThat(p.get("90").asDouble()).isCloseTo(1.0 / 6, within(1e-12));
      rate += c.at("/spike/trace_rate").asDouble();
    }
    assertThat(rate).isCloseTo(0.25 + 0.5 + 0.75 + 3 * 3, within(1e-9));
    assertThatThrownBy(() -> ServeGenData.toYaml(dir, 900, 180, 42, "morning", List.of(), null, null))
        .hasMessageContaining("holds reasoning data, which has one window and no periods");
    // a spec of servegen_data reads it with its own seed and bounds; reasoning ratios are noted
    Path spec = dir.resolve("spec.yaml");
    Files.writeString(spec, "version: \"2\"\nseed: 42\nnum_requests: 100\nservegen_data: {path: "
        + dir + ", window_duration_secs: 900}\n");
    WorkloadFile f = WorkloadFile.load(spec);
    assertThat(f.spec().clients()).hasSize(3);
    assertThat(f.spec().clients()).allSatisfy(c -> assertThat(c.arrival()).isInstanceOf(ArrivalProcess.Poisson.class));
    assertThat(f.notes()).anyMatch(n -> n.contains("reason_ratio_distribution has no meaning here"));
  }

  @Test
  void aSpecOfServeGenDataLoadsAsItsConversionDoes() throws IOException {
    languageData();
    Files.createDirectories(tmp.resolve("specs"));
    Path spec = tmp.resolve("specs/sd.yaml");
    Files.writeString(spec, "version: \"2\"\nseed: 5\nnum_requests: 300\nservegen_data:\n  path: ../servegen-fixture-data\n"
        + "  drain_timeout_secs: 60\n  time_window: morning\n");
    WorkloadFile direct = WorkloadFile.load(spec);
    Path converted = tmp.resolve("specs/converted.yaml");
    Files.writeString(converted, ServeGenData.toYaml(dir, 600, 60, 5, null, List.of(), 300L, null));
    WorkloadFile written = WorkloadFile.load(converted);
    assertThat(direct.spec()).isEqualTo(written.spec());
    assertThat(direct.notes()).containsExactly(spec + ":7:3: time_window has no meaning here: every window of the"
        + " data is read and three periods are made of it, as Go BLIS's servegen_data does (blis convert servegen"
        + " --time keeps one period)");
    assertThat(written.notes()).isEmpty();
    // fitted shape and scale set the gaps whole, as in Go BLIS: chunk 7's Weibull k 1.3, 0.2 s
    ClientSpec morning = direct.spec().clients().stream().filter(c -> c.id().startsWith("morning")).findFirst()
        .orElseThrow();
    ArrivalProcess.Weibull w = (ArrivalProcess.Weibull) morning.arrival();
    assertThat(w.shape()).isCloseTo(1.3, within(1e-9));
    // mean gap scale x Gamma(1 + 1/k); Gamma(1 + 1/1.3) = 0.923576721555978 (Python's math.gamma)
    assertThat(1 / w.rateRps()).isCloseTo(0.2 * 0.923576721555978, within(1e-9));
    assertThat(morning.input()).isInstanceOf(LengthDistribution.LogNormal.class);
    // midnight's chunks: gamma of shape 1 (cv 1) at 1 / (1 x the mean of their days' scales 1/r and 1/2r)
    assertThat(direct.spec().clients().stream().filter(c -> c.id().startsWith("midnight")))
        .allSatisfy(c -> assertThat(c.arrival()).isInstanceOfSatisfying(ArrivalProcess.Gamma.class,
            g -> assertThat(g.cv()).isEqualTo(1.0)));
  }

  @Test
  void malformedDataIsRefusedNamingTheFileAndLine() throws IOException {
    assertThatThrownBy(() -> ServeGenData.toYaml(dir, 600, 180, 42, null, List.of(), null, null))
        .hasMessage("no chunk-*-trace.csv files in " + dir);
    Files.writeString(dir.resolve("chunk-1-trace.csv"), "start,rate,cv,pattern\n0,1.5,0.9,Gamma\n600,2.0,x,Gamma\n");
    assertThatThrownBy(() -> ServeGenData.toYaml(dir, 600, 180, 42, null, List.of(), null, null))
        .hasMessage(dir.resolve("chunk-1-trace.csv") + " has no dataset beside it: expected "
            + dir.resolve("chunk-1-dataset.json"));
    Files.writeString(dir.resolve("chunk-1-dataset.json"), "{\"0\": {\"input_tokens\": \"{100: 1}\","
        + " \"output_tokens\": \"{10: 1}\"}}");
    assertThatThrownBy(() -> ServeGenData.toYaml(dir, 600, 180, 42, null, List.of(), null, null))
        .hasMessage(dir.resolve("chunk-1-trace.csv") + ":3: the cv must be a number in [0, 100] (the burstiest arrivals"
            + " simulated), got 'x'");
    Files.writeString(dir.resolve("chunk-1-trace.csv"), "0,1.5,0.9,Gamma\n600,2.0\n");
    assertThatThrownBy(() -> ServeGenData.toYaml(dir, 600, 180, 42, null, List.of(), null, null))
        .hasMessage(dir.resolve("chunk-1-trace.csv") + ":2: an active window needs start_s, rate, cv, pattern[,"
            + " shape, scale_s], got 2 fields");
    Files.writeString(dir.resolve("chunk-1-trace.csv"), "0,1.5,0.9,Gamma\n600,1.5,0.9,Gamma\n1200,1.5,0.9,Gamma\n");
    Files.writeString(dir.resolve("chunk-1-dataset.json"), "{\"0\": {\"input_tokens\": ");
    assertThatThrownBy(() -> ServeGenData.toYaml(dir, 600, 180, 42, null, List.of(), null, null))
        .hasMessageStartingWith(dir.resolve("chunk-1-dataset.json") + ":1:").hasMessageContaining(": not valid JSON: ");
    Files.writeString(dir.resolve("chunk-1-dataset.json"), "{\"0\": {\"input_tokens\": \"{100 0.5}\","
        + " \"output_tokens\": \"{10: 1}\"}}");
    assertThatThrownBy(() -> ServeGenData.toYaml(dir, 600, 180, 42, null, List.of(), null, null))
        .hasMessage(dir.resolve("chunk-1-dataset.json") + ": window 0: input_tokens: expected VALUE: PROBABILITY"
            + " (a probability >= 0), got '100 0.5'");
    Files.writeString(dir.resolve("chunk-1-dataset.json"), "{\"0\": {\"input_tokens\": \"{100: 1}\","
        + " \"output_tokens\": \"{10: 1}\"}}");
    assertThat(ServeGenData.toYaml(dir, 600, 180, 42, null, List.of(), null, null)).contains("population: 1");
    // in a spec: the error names the spec's key
    Path spec = dir.resolve("s.yaml");
    Files.writeString(spec, "version: \"2\"\nnum_requests: 10\nservegen_data: {path: " + dir.resolve("none") + "}\n");
    assertThatThrownBy(() -> WorkloadFile.load(spec))
        .hasMessage(spec + ":3:17: ServeGen data folder " + dir.resolve("none") + " does not exist or is not a folder");
  }
}
