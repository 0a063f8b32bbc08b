package io.blis.cli;

import static io.blis.cli.BlisCliTest.blis;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code blis run --otel-out}: the simulated run as vLLM's OpenTelemetry traces. */
class OtelCliTest {

  @Test
  void runWritesGzippedTracesOfEveryInstanceAndKeepsItsResult(@TempDir Path dir) throws Exception {
    Path out = dir.resolve("sub/run.otlp.jsonl.gz");
    String[] base = {"run", "--num-requests", "60", "--rate", "20", "--num-instances", "2"};
    BlisCliTest.Outcome plain = blis(base);
    String[] traced = java.util.Arrays.copyOf(base, base.length + 5);
    System.arraycopy(new String[] {"--otel-out", out.toString(), "--otel-step-sample-rate", "0.5",
        "--otel-request-snapshots"}, 0, traced, base.length, 5);
    BlisCliTest.Outcome o = blis(traced);
    assertThat(o.code()).as(o.err()).isZero();
    assertThat(o.out()).isEqualTo(plain.out());
    long lines = 0;
    boolean instance1 = false;
    boolean snapshot = false;
    try (BufferedReader r = new BufferedReader(new InputStreamReader(
        new GZIPInputStream(Files.newInputStream(out)), StandardCharsets.UTF_8))) {
      String line;
      while ((line = r.readLine()) != null) {
        lines++;
        instance1 |= line.contains("\"service.instance.id\",\"value\":{\"stringValue\":\"1\"}");
        snapshot |= line.contains("step.REQUEST_SNAPSHOT");
      }
    }
    assertThat(lines).isGreaterThan(120); // two request spans per request, plus steps
    assertThat(instance1).isTrue();
    assertThat(snapshot).isTrue();
  }

  @Test
  void badTraceFlagsAreOneLineAndExitTwo() {
    BlisCliTest.Outcome rate = blis("run", "--otel-out", "x.jsonl", "--otel-step-sample-rate", "0");
    assertThat(rate.code()).isEqualTo(2);
    assertThat(rate.err()).contains("--otel-step-sample-rate must be in (0, 1]");
    BlisCliTest.Outcome alone = blis("run", "--otel-request-snapshots");
    assertThat(alone.code()).isEqualTo(2);
    assertThat(alone.err()).contains("need --otel-out");
    BlisCliTest.Outcome journeys = blis("run", "--otel-out", "x.jsonl", "--otel-journey-sample-rate", "1.5");
    assertThat(journeys.code()).isEqualTo(2);
    assertThat(journeys.err()).contains("--otel-journey-sample-rate must be in [0, 1], got 1.5");
    BlisCliTest.Outcome journeysAlone = blis("run", "--otel-journey-sample-rate", "0.5");
    assertThat(journeysAlone.code()).isEqualTo(2);
    assertThat(journeysAlone.err()).contains("need --otel-out");
  }
}
