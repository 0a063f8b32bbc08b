package io.blis.cli;

import static io.blis.cli.BadInputCliTest.refused;
import static io.blis.cli.BlisCliTest.blis;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongUnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code blis fit} on traces that are broken: each gets its own one-line message with the file and
 * line (or the step), exit 2, no coefficient file; steps with non-positive durations are left out
 * with a counted warning; a fit whose result is nonsense is refused.
 */
class FitBadTracesCliTest {

  private static final Pattern DURATION =
      Pattern.compile("\"step.duration_us\",\"value\":\\{\"intValue\":\"(-?\\d+)\"\\}");

  @TempDir static Path dir;
  private static String good;

  @BeforeAll
  static void traceARun() throws Exception {
    Path trace = dir.resolve("good.jsonl");
    BlisCliTest.Outcome o = blis("run", "--num-requests", "200", "--rate", "8", "--otel-out",
        trace.toString(), "--otel-request-snapshots");
    assertThat(o.code()).as(o.err()).isZero();
    good = Files.readString(trace);
  }

  /** The good trace with every step.duration_us value replaced (argument: the value, the step's count). */
  private static Path durations(String name, java.util.function.BiFunction<Long, Long, String> value)
      throws Exception {
    Matcher m = DURATION.matcher(good);
    StringBuilder out = new StringBuilder();
    AtomicLong k = new AtomicLong();
    while (m.find()) {
      m.appendReplacement(out, Matcher.quoteReplacement("\"step.duration_us\",\"value\":"
          + value.apply(Long.parseLong(m.group(1)), k.incrementAndGet())));
    }
    m.appendTail(out);
    return write(name, out.toString());
  }

  private static Path intDurations(String name, LongUnaryOperator f) throws Exception {
    return durations(name, (d, k) -> "{\"intValue\":\"" + f.applyAsLong(d) + "\"}");
  }

  private static Path write(String name, String text) throws Exception {
    Path p = dir.resolve(name);
    Files.writeString(p, text);
    return p;
  }

  private static BlisCliTest.Outcome fit(Path trace) {
    return blis("fit", "--traces", trace.toString(), "--out", dir.resolve(trace.getFileName() + ".yaml").toString());
  }

  private static void noCoefficients(Path trace) {
    assertThat(dir.resolve(trace.getFileName() + ".yaml")).doesNotExist();
  }

  /** The folder of an observed run is not traces: the message says what fit reads and what reads the run. */
  @Test
  void anObservedRunFolderIsNamedForWhatItIs() throws Exception {
    Path run = dir.resolve("observed");
    Files.createDirectories(run);
    Files.writeString(run.resolve("experiments.json"), "{\n  \"experiments\" : [ ]\n}\n");
    Files.writeString(run.resolve("run.json"), "{ }\n");
    refused(fit(run), "is the folder of an observed run (blis observe)", "vLLM's OpenTelemetry traces",
        "read by calibrate and validate (--experiments " + run.resolve("experiments.json") + ")");
    noCoefficients(run);
  }

  @Test
  void zeroOrNegativeDurationsEverywhereAreABrokenClockNotASolverError() throws Exception {
    Path zero = intDurations("zero.jsonl", d -> 0);
    refused(fit(zero), "0 of 2764 traced steps have their batch and a positive duration",
        "left out: 2764 non_positive_duration (its step.duration_us is 0 or negative)",
        "The trace's step durations are broken (step 1 of instance '0' lasts 0 us)");
    noCoefficients(zero);
    Path negative = intDurations("negative.jsonl", d -> -d);
    refused(fit(negative), "2764 non_positive_duration", "(step 1 of instance '0' lasts -");
    noCoefficients(negative);
  }

  @Test
  void nonFiniteDurationsAreNamedWithTheFirstPlace() throws Exception {
    Path nan = durations("nan.jsonl", (d, k) -> "{\"doubleValue\":\"NaN\"}");
    refused(fit(nan), "none of the 2764 step.BATCH_SUMMARY events can be used: 2764 step summary with a"
        + " non-finite step.duration_us (first at " + nan + " line 1)", "a finite step.duration_us");
    noCoefficients(nan);
  }

  @Test
  void someNonPositiveDurationsAreLeftOutWithACountedWarning() throws Exception {
    Path some = durations("some.jsonl", (d, k) -> "{\"intValue\":\"" + (k % 10 == 0 ? -d : d) + "\"}");
    BlisCliTest.Outcome o = fit(some);
    assertThat(o.code()).as(o.err()).isZero();
    assertThat(o.err()).startsWith("warning: 276 of 2764 traced steps left out:")
        .contains("276 non_positive_duration: its step.duration_us is 0 or negative");
    assertThat(o.out()).contains("fitted 2488 traced steps").contains("test MAPE 0.00%");
  }

  @Test
  void someNonFiniteDurationsAreSkippedWithACountedWarningAndWhere() throws Exception {
    Path some = durations("some-nan.jsonl", (d, k) -> k % 10 == 0 ? "{\"doubleValue\":\"NaN\"}"
        : "{\"intValue\":\"" + d + "\"}");
    BlisCliTest.Outcome o = fit(some);
    assertThat(o.code()).as(o.err()).isZero();
    assertThat(o.err()).startsWith("warning: 276 step summary with a non-finite step.duration_us, skipped (first at "
        + some + " line ");
    assertThat(o.out()).contains("test MAPE 0.00%");
  }

  @Test
  void aFitThatRunsOppositeToTheMeasurementsIsRefused() throws Exception {
    Path inverse = intDurations("inverse.jsonl", d -> 1_000_000_000L / d);
    refused(fit(inverse), "fit refused: on its 553 test steps the fitted step times run opposite to the"
        + " measured ones", "Pearson r -0.99", "check step.duration_us, and the model, GPU and TP");
    noCoefficients(inverse);
  }

  /** Every step 9e18 us: the predictions are nothing next to them (MAPE 100%, r undefined). */
  @Test
  void stepsOfAbsurdDurationAreRefusedNotFitted() throws Exception {
    Path absurd = intDurations("absurd.jsonl", d -> 9_000_000_000_000_000_000L);
    refused(fit(absurd), "fit refused: on its 553 test steps the fitted step times", "test MAPE 100.00%");
    noCoefficients(absurd);
  }

  @Test
  void tracesBrokenInOtherWaysEachGetTheirOwnMessageWithFileAndLine() throws Exception {
    Path notList = write("not-list.jsonl", "{\"resourceSpans\":5}\n");
    refused(fit(notList), "traces: " + notList + " line 1: resourceSpans must be a list, got a number");
    Path spans = write("spans.jsonl", good.lines().findFirst().orElseThrow() + "\n"
        + "{\"resourceSpans\":[{\"scopeSpans\":[{\"scope\":{\"name\":\"vllm.api\"},\"spans\":{}}]}]}\n");
    refused(fit(spans), spans + " line 2: spans must be a list, got an object");
    Path empty = write("empty.jsonl", "\n\n");
    refused(fit(empty), "traces: " + empty + " is empty (expected OTLP JSON");
    Path noStepId = write("no-step-id.jsonl",
        good.replaceAll("\\{\"key\":\"step.id\",\"value\":\\{\"intValue\":\"\\d+\"\\}\\},?", ""));
    refused(fit(noStepId), "none of the 2764 step.BATCH_SUMMARY events can be used: 2764 step summary without"
        + " step.id (first at " + noStepId + " line 1)");
    Path word = write("word.jsonl", good.replaceFirst(
        "\"step.duration_us\",\"value\":\\{\"intValue\":\"\\d+\"\\}",
        "\"step.duration_us\",\"value\":{\"intValue\":\"abc\"}"));
    refused(fit(word), "traces: " + word + " line 1: attribute step.duration_us: intValue must be a whole number,"
        + " got \"abc\"");
    Path text = write("text.jsonl", "not json\n");
    refused(fit(text), "traces: " + text + " line 1, column 4: not OTLP JSON (Unrecognized token 'not'");
    for (Path p : new Path[] {notList, spans, empty, noStepId, word, text}) {
      noCoefficients(p);
    }
  }
}
