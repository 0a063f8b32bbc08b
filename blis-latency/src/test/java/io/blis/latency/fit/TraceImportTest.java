package io.blis.latency.fit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TraceImportTest {

  private static final Path HAND_WRITTEN = Path.of("src/test/resources/traces/hand-written.otlp.jsonl");

  @Test
  void aHandWrittenTraceImportsToTheExpectedStepsAndJourneys() {
    TraceImport.Result r = TraceImport.read(HAND_WRITTEN);
    assertThat(r.steps()).hasSize(2);
    TracedStep s7 = r.steps().get(0);
    assertThat(s7).isEqualTo(new TracedStep("pod-a", 7, 1_000_000, 13_000_000, 12_000, 1, 1, 512, 1,
        2, 5, 1000, 750, 0, 0, java.util.List.of(
            new TracedStep.Request("cmpl-1", true, 1024, 256, 0, 0, 512, 48, 16),
            new TracedStep.Request("cmpl-0", false, 300, 340, 40, 1, 1, -1, -1))));
    TracedStep s9 = r.steps().get(1);
    assertThat(s9.stepId()).isEqualTo(9);
    assertThat(s9.durationUs()).isEqualTo(6500);
    assertThat(s9.requests()).isEmpty();
    assertThat(s9.runningDepth()).isEqualTo(-1);
    assertThat(r.journeys()).hasSize(1);
    TracedJourney j = r.journeys().get(0);
    assertThat(j.requestId()).isEqualTo("cmpl-1");
    assertThat(j.instance()).isEqualTo("pod-a");
    assertThat(j.api()).extracting(TracedJourney.Event::name).containsExactly("ARRIVED", "HANDOFF_TO_CORE");
    assertThat(j.core()).extracting(TracedJourney.Event::name).containsExactly("QUEUED", "SCHEDULED");
    assertThat(j.core().get(1)).isEqualTo(new TracedJourney.Event("SCHEDULED", 1_000_000, 7, 256,
        1024, 0, 0, "FIRST"));
    assertThat(r.warnings()).containsEntry("request snapshots of a step without summary", 1L)
        .containsEntry("step summary without step.id", 1L)
        .containsEntry("span of scope 'vllm.other' ignored", 1L).hasSize(3);
  }

  @Test
  void gzipAndDirectoriesAreRead(@TempDir Path dir) throws Exception {
    try (OutputStream out = new GZIPOutputStream(Files.newOutputStream(dir.resolve("b.jsonl.gz")))) {
      out.write(Files.readAllBytes(HAND_WRITTEN));
    }
    Files.copy(HAND_WRITTEN, dir.resolve("a.jsonl"));
    TraceImport.Result r = TraceImport.read(dir);
    assertThat(r.steps()).hasSize(2); // the same steps twice: duplicates are counted, not doubled
    assertThat(r.warnings()).containsEntry("duplicate step summary", 2L)
        .containsEntry("duplicate request snapshot", 3L); // steps 7 (two) and 8 (one)
    assertThat(r.steps().get(0).requests()).hasSize(2);
  }

  @Test
  void malformedOrTruncatedFilesAreClearErrors(@TempDir Path dir) throws Exception {
    Path bad = dir.resolve("bad.jsonl");
    Files.writeString(bad, Files.readAllLines(HAND_WRITTEN).get(0) + "\n{\"resourceSpans\": [\n",
        StandardCharsets.UTF_8);
    assertThatThrownBy(() -> TraceImport.read(bad)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("bad.jsonl line 2").hasMessageContaining("not OTLP JSON");
    Path other = dir.resolve("other.json");
    Files.writeString(other, "{\"hello\": 1}\n");
    assertThatThrownBy(() -> TraceImport.read(other)).hasMessageContaining("other.json line 1")
        .hasMessageContaining("resourceSpans");
    byte[] gz;
    var bytes = new java.io.ByteArrayOutputStream();
    try (OutputStream out = new GZIPOutputStream(bytes)) {
      out.write(Files.readAllBytes(HAND_WRITTEN));
    }
    gz = bytes.toByteArray();
    Path cut = dir.resolve("cut.jsonl.gz");
    Files.write(cut, java.util.Arrays.copyOf(gz, gz.length / 2));
    assertThatThrownBy(() -> TraceImport.read(cut)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("cut.jsonl.gz is truncated or corrupt");
    assertThatThrownBy(() -> TraceImport.read(dir.resolve("missing")))
        .hasMessageContaining("no such file or directory");
  }

  @Test
  void brokenStructureAndValuesAreErrorsWithTheFileAndLine(@TempDir Path dir) throws Exception {
    String first = Files.readAllLines(HAND_WRITTEN).get(0);
    Path notList = dir.resolve("not-list.jsonl");
    Files.writeString(notList, first + "\n{\"resourceSpans\": {\"a\": 1}}\n");
    assertThatThrownBy(() -> TraceImport.read(notList)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("traces: " + notList + " line 2: resourceSpans must be a list, got an object (not OTLP JSON)");
    Path attrs = dir.resolve("attrs.jsonl");
    Files.writeString(attrs, "{\"resourceSpans\": [{\"resource\": {\"attributes\": \"x\"}}]}\n");
    assertThatThrownBy(() -> TraceImport.read(attrs))
        .hasMessage("traces: " + attrs + " line 1: attributes must be a list, got a string (not OTLP JSON)");
    Path word = dir.resolve("word.jsonl");
    Files.writeString(word, first.replaceFirst("\"intValue\": ?\"7\"", "\"intValue\": \"seven\""));
    assertThatThrownBy(() -> TraceImport.read(word))
        .hasMessageStartingWith("traces: " + word + " line 1: attribute ")
        .hasMessageContaining("intValue must be a whole number, got \"seven\"");
    Path blank = dir.resolve("blank.jsonl");
    Files.writeString(blank, "\n  \n");
    assertThatThrownBy(() -> TraceImport.read(blank))
        .hasMessageStartingWith("traces: " + blank + " is empty (expected OTLP JSON");
    Path emptyDir = Files.createDirectories(dir.resolve("empties"));
    Files.writeString(emptyDir.resolve("a.jsonl"), "");
    Files.writeString(emptyDir.resolve("b.jsonl"), "\n");
    assertThatThrownBy(() -> TraceImport.read(emptyDir))
        .hasMessageStartingWith("traces: every file in " + emptyDir + " is empty");
  }

  @Test
  void aNonFiniteStepDurationSkipsTheStepWithAWarningAndWhereItWasFirstSeen(@TempDir Path dir)
      throws Exception {
    String text = Files.readString(HAND_WRITTEN);
    Path nan = dir.resolve("nan.jsonl");
    Files.writeString(nan, text.replaceAll("\\{\"key\": ?\"step.duration_us\", ?\"value\": ?\\{\"intValue\": ?\"12000\"\\}\\}",
        "{\"key\": \"step.duration_us\", \"value\": {\"doubleValue\": \"NaN\"}}"));
    assertThat(Files.readString(nan)).isNotEqualTo(text);
    TraceImport.Result r = TraceImport.read(nan);
    assertThat(r.steps()).extracting(TracedStep::stepId).containsExactly(9L);
    assertThat(r.warnings()).containsEntry("step summary with a non-finite step.duration_us", 1L);
    assertThat(r.firstSeen().get("step summary with a non-finite step.duration_us")).startsWith(nan + " line ");
    assertThat(r.firstSeen().get("step summary without step.id")).startsWith(nan + " line ");
    assertThat(r.summaries()).isEqualTo(3);
  }
}
