package io.blis.cli;

import static io.blis.cli.BlisCliTest.blis;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class CapacityCommandTest {

  private static final String[] FAST = {"--workload", "chatbot", "--point-duration-s", "60", "--min-point-requests", "200",
      "--tolerance", "0.05"};

  private static String[] with(String[] base, String... more) {
    return java.util.stream.Stream.concat(java.util.Arrays.stream(base), java.util.Arrays.stream(more)).toArray(String[]::new);
  }

  @Test
  void findsTheHighestRateAndWritesEveryPoint(@TempDir Path dir) throws Exception {
    Path out = dir.resolve("cap.json");
    BlisCliTest.Outcome o = blis(with(with(new String[] {"capacity", "--slo", "ttft_p99=500ms,e2e_p99=20s"}, FAST),
        "--target-rate", "40", "--out", out.toString()));
    assertThat(o.code()).as(o.err()).isZero();
    assertThat(o.out()).startsWith("deployment: 1 x meta-llama/Llama-2-7b-hf on H100 TP1, scheduler fcfs, latency model ")
        .contains("highest rate meeting every target: ").contains("saturation rate (highest steady): ")
        .contains("fewest replicas meeting every target at 40.0 req/s: ");
    JsonNode j = BlisCliTest.JSON.readTree(Files.readString(out));
    double max = j.path("max_rate").path("rate_rps").asDouble();
    double sat = j.path("saturation_rate").path("rate_rps").asDouble();
    assertThat(max).isPositive().isLessThanOrEqualTo(sat * 1.06);
    assertThat(j.path("max_rate").path("at").path("meets_targets").asBoolean()).isTrue();
    assertThat(j.path("max_rate").path("at").path("ttft_p99_ms").asDouble()).isLessThanOrEqualTo(500);
    // every point above the answer that the search tried failed a target
    for (JsonNode p : j.path("max_rate").path("points")) {
      if (p.path("rate_rps").asDouble() > max) {
        assertThat(p.path("meets_targets").asBoolean()).as(p.toString()).isFalse();
      }
    }
    int replicas = j.path("replicas").path("instances").asInt();
    // round-robin over n instances gives each 40/n req/s: the count one instance's capacity implies,
    // or one more where splitting the load unevenly costs a little
    assertThat(replicas).isBetween((int) Math.ceil(40 / max), (int) Math.ceil(40 / max) + 1);
    // the same command gives the same report, byte for byte
    Path again = dir.resolve("again.json");
    assertThat(blis(with(with(new String[] {"capacity", "--slo", "ttft_p99=500ms,e2e_p99=20s"}, FAST),
        "--target-rate", "40", "--out", again.toString())).code()).isZero();
    assertThat(Files.readString(again)).isEqualTo(Files.readString(out));
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "--slo,ttft_p98=1s|--slo: 'ttft_p98=1s': unknown statistic 'p98'",
      "--slo,latency=1s|--slo: 'latency=1s': unknown metric 'latency'",
      "--slo,ttft_p99=1s,--rate,5|--rate does not apply to capacity",
      "--slo,ttft_p99=1s,--tolerance,0|tolerance must be in [0.001, 0.5]",
      "--slo,ttft_p99=1s,--target-rate,-3|--target-rate must be in (0, 1000000]",
      "--slo,ttft_p99=1s,--min-rate,5,--start-rate,1|rates must satisfy 0 < min <= start <= max",
      "--slo,goodput=99%|the deployment sets none: give them in a policy bundle's slo: section",
      "--workload,chatbot|Missing required option: '--slo=TARGETS'"})
  void badFlagsAreOneLine(String flags, String message) {
    String[] args = with(new String[] {"capacity"}, flags.split(","));
    BlisCliTest.Outcome o = blis(args);
    assertThat(o.code()).as(o.err()).isEqualTo(2);
    assertThat(o.err().strip().lines()).hasSize(1);
    assertThat(o.err()).contains(message);
  }
}
