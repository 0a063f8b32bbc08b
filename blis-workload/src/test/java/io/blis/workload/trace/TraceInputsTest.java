package io.blis.workload.trace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import io.blis.workload.TestSupport;
import io.blis.workload.inferenceperf.InferencePerfProfile;
import io.blis.workload.inferenceperf.InferencePerfWorkload;
import io.blis.workload.inferenceperf.LoadStage;
import io.blis.workload.inferenceperf.SharedPrefixData;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.zip.GZIPOutputStream;
import org.assertj.core.api.AbstractThrowableAssert;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Malformed traces and ground-truth CSVs: every one fails with one line naming the file (and line
 * and field where there is one), before anything is simulated; valid variants (a byte-order mark,
 * gzip whatever the name) read as the plain file does.
 */
class TraceInputsTest {

  static final String HEADER =
      "# blis-trace {\"version\":1,\"time_unit\":\"us\",\"token_seed\":1,\"token_ids\":false}\n"
          + String.join(",", TraceFormat.COLUMNS) + "\n";

  static final String ROW0 = "0,100,20,5,,0,123,-1,0,standard,,0,0\n";
  static final String ROW1 = "1,200,30,6,,0,124,-1,0,standard,,0,0\n";

  static final String GT_HEADER = String.join(",", GroundTruthTrace.COLUMNS) + "\n";

  static Path write(Path dir, String name, String text) throws IOException {
    return Files.writeString(dir.resolve(name), text, StandardCharsets.UTF_8);
  }

  static Path writeBytes(Path dir, String name, byte[] bytes) throws IOException {
    return Files.write(dir.resolve(name), bytes);
  }

  static byte[] gzip(String text) throws IOException {
    java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
    try (OutputStream out = new GZIPOutputStream(bytes)) {
      out.write(text.getBytes(StandardCharsets.UTF_8));
    }
    return bytes.toByteArray();
  }

  /** One line, no exception class or Jackson wording, starting with the file. */
  static AbstractThrowableAssert<?, ? extends Throwable> failsCleanly(Path file, Runnable read) {
    var a = assertThatThrownBy(read::run);
    a.isInstanceOfAny(IllegalArgumentException.class, java.io.UncheckedIOException.class)
        .hasMessageStartingWith(file.toString())
        .hasMessageNotContaining("\n")
        .hasMessageNotContaining("Exception")
        .hasMessageNotContaining("Source:")
        .hasMessageNotContaining("`");
    return a;
  }

  static List<RequestSpec> readAll(Path file) {
    try (RequestSource s = TraceReader.open(file)) {
      return TestSupport.drain(s);
    }
  }

  @Test
  void aTokenCountBeyondTheBoundFailsWhenTheFileIsReadNamingTheField(@TempDir Path dir)
      throws IOException {
    Path f = write(dir, "t.csv", HEADER + ROW0 + "1,200,2000000000,6,,0,124,-1,0,standard,,0,0\n");
    failsCleanly(f, () -> TraceReader.open(f))
        .hasMessage(f + ":4: field 'input_tokens' = '2000000000': expected an integer in [1, "
            + RequestSpec.MAX_TOKENS + "] (the most tokens a request may have)");
    Path out = write(dir, "o.csv", HEADER + "0,100,20,10000001,,0,123,-1,0,standard,,0,0\n");
    failsCleanly(out, () -> TraceReader.open(out)).hasMessageStartingWith(out + ":3:")
        .hasMessageContaining("field 'output_tokens'");
    Path at = write(dir, "a.csv", HEADER + "0,99999999999999999,20,5,,0,123,-1,0,standard,,0,0\n");
    failsCleanly(at, () -> TraceReader.open(at)).hasMessageContaining("field 'arrival_us'")
        .hasMessageContaining(RequestSpec.MAX_TIME_US + "]");
    Path to = write(dir, "to.csv", HEADER + "0,1,20,5,,0,123,-1,0,standard,,0,9223372036854775807\n");
    failsCleanly(to, () -> TraceReader.open(to)).hasMessageContaining("field 'timeout_us'");
    Path ids = write(dir, "ids.csv", "# blis-trace {\"version\":1,\"token_seed\":1,\"token_ids\":true}\n"
        + String.join(",", TraceFormat.columns(true)) + "\n"
        + "0,1,20000000,5,,0,123,-1,0,standard,,0,0,1 2 3\n");
    failsCleanly(ids, () -> TraceReader.open(ids)).hasMessageContaining("field 'input_tokens'");
  }

  @Test
  void aControlCharacterInATokenIdIsEscapedSoTheMessageStaysOneLine(@TempDir Path dir) throws IOException {
    Path f = write(dir, "ids.csv", "# blis-trace {\"version\":1,\"token_seed\":1,\"token_ids\":true}\n"
        + String.join(",", TraceFormat.columns(true)) + "\n"
        + "0,1,3,5,,0,123,-1,0,standard,,0,0,1 x\fy 3\n");
    failsCleanly(f, () -> TraceReader.open(f))
        .hasMessage(f + ":3: field 'token_ids' = '1 x\\u000Cy 3': token 1 'x\\u000Cy' is not an integer");
  }

  @Test
  void theLargestAllowedPromptIsReadAndBuilt(@TempDir Path dir) throws IOException {
    Path f = write(dir, "t.csv", HEADER
        + "0,100," + RequestSpec.MAX_TOKENS + "," + RequestSpec.MAX_TOKENS + ",,0,123,-1,0,standard,,0,0\n");
    List<RequestSpec> rs = readAll(f);
    assertThat(rs).hasSize(1);
    assertThat(rs.get(0).inputTokens()).isEqualTo(RequestSpec.MAX_TOKENS);
  }

  @Test
  void aFollowUpRoundWithoutItsPreviousRoundIsAnError(@TempDir Path dir) throws IOException {
    Path orphan = write(dir, "o.csv", HEADER + ROW0 + "5,300,20,5,,0,9,5,1,standard,,0,0\n");
    failsCleanly(orphan, () -> TraceReader.open(orphan))
        .hasMessage(orphan + ":4: session 5 round 1 has no round 0 in the trace: a follow-up round"
            + " is sent only when the previous round of its session completes (to send this row at"
            + " its own time, give it session_id -1 and round 0)");
    // A gap: rounds 0 and 2 of session 7, no round 1; the round-0 row comes after round 2.
    Path gap = write(dir, "g.csv", HEADER + "9,900,20,5,,0,9,7,2,standard,,0,0\n"
        + "7,100,20,5,,0,9,7,0,standard,,0,0\n");
    failsCleanly(gap, () -> TraceReader.open(gap)).hasMessageStartingWith(gap + ":3: session 7 round 2 has no round 1");
    // Complete sessions in any row order are fine.
    Path ok = write(dir, "ok.csv", HEADER + "9,900,20,5,,0,9,7,1,standard,,0,0\n"
        + "7,100,20,5,,0,9,7,0,standard,,0,0\n");
    assertThat(readAll(ok)).extracting(RequestSpec::id).containsExactly(7L);
    Path noSession = write(dir, "n.csv", HEADER + "0,100,20,5,,0,9,-1,3,standard,,0,0\n");
    failsCleanly(noSession, () -> TraceReader.open(noSession)).hasMessageContaining("field 'round'")
        .hasMessageContaining("session_id -1");
  }

  @Test
  void duplicateIdsAndRoundsNameBothLines(@TempDir Path dir) throws IOException {
    Path f = write(dir, "d.csv", HEADER + ROW0 + ROW1 + "0,300,20,5,,0,123,-1,0,standard,,0,0\n");
    failsCleanly(f, () -> TraceReader.open(f))
        .hasMessage(f + ":5: request id 0 appears twice, on lines 3 and 5");
    long big = 1L << 40;
    Path sparse = write(dir, "s.csv", HEADER + ROW0.replaceFirst("^0,", big + ",")
        + ROW1.replaceFirst("^1,", big + ","));
    failsCleanly(sparse, () -> TraceReader.open(sparse))
        .hasMessage(sparse + ":4: request id " + big + " appears twice, on lines 3 and 4");
    Path rounds = write(dir, "r.csv", HEADER + "0,100,20,5,,0,9,4,0,standard,,0,0\n"
        + "1,200,20,5,,0,9,4,0,standard,,0,0\n");
    failsCleanly(rounds, () -> TraceReader.open(rounds))
        .hasMessage(rounds + ":4: session 4 round 0 appears twice, on lines 3 and 4");
    Path followUps = write(dir, "f.csv", HEADER + "0,100,20,5,,0,9,4,0,standard,,0,0\n"
        + "1,200,20,5,,0,9,4,1,standard,,0,0\n" + "2,200,20,5,,0,9,4,1,standard,,0,0\n");
    failsCleanly(followUps, () -> TraceReader.open(followUps))
        .hasMessage(followUps + ":5: session 4 round 1 appears twice, on lines 4 and 5");
  }

  @Test
  void aTraceWithoutRowsIsAnError(@TempDir Path dir) throws IOException {
    Path f = write(dir, "h.csv", HEADER + "\n\n");
    failsCleanly(f, () -> TraceReader.open(f))
        .hasMessage(f + ": no requests: the trace has its two header lines and no rows");
    Path gt = write(dir, "gt.csv", GT_HEADER);
    InferencePerfProfile p = new InferencePerfProfile(
        new SharedPrefixData(2, 2, 10, 10, 5), List.of(new LoadStage(1, 10)), 1, 300);
    failsCleanly(gt, () -> InferencePerfWorkload.replay(p, gt, 1))
        .hasMessage(gt + ": no requests: the ground-truth trace has its header line and no rows");
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"bom.csv", "bom.csv.gz", "gzip-named-plain.csv", "plain-named-gzip.csv.gz"})
  void aByteOrderMarkAndGzipWhateverTheNameReadAsThePlainFile(String name, @TempDir Path dir)
      throws IOException {
    Path plain = write(dir, "plain.csv", HEADER + ROW0 + ROW1);
    String bom = "\uFEFF" + HEADER + ROW0 + ROW1;
    Path f = switch (name) {
      case "bom.csv" -> write(dir, name, bom);
      case "bom.csv.gz" -> writeBytes(dir, name, gzip(bom));
      case "gzip-named-plain.csv" -> writeBytes(dir, name, gzip(HEADER + ROW0 + ROW1));
      default -> write(dir, name, HEADER + ROW0 + ROW1);
    };
    assertThat(TraceReader.isBlisTrace(f)).isTrue();
    assertThat(TraceReader.header(f)).isEqualTo(TraceReader.header(plain));
    assertThat(readAll(f)).isEqualTo(readAll(plain));
    Path gt = write(dir, "gt-" + name, "\uFEFF" + GT_HEADER + "0,0,0.000,1,591,140,1943.702,130.224\n");
    assertThat(GroundTruthTrace.read(gt)).hasSize(1);
    assertThat(TraceReader.isBlisTrace(gt)).isFalse();
  }

  @Test
  void filesThatCannotBeTracesSayWhatTheyAre(@TempDir Path dir) throws IOException {
    Path d = Files.createDirectory(dir.resolve("folder.csv"));
    failsCleanly(d, () -> TraceReader.open(d)).hasMessage(d + ": is a directory, expected a file");
    failsCleanly(d, () -> TraceReader.isBlisTrace(d)).hasMessage(d + ": is a directory, expected a file");
    failsCleanly(d, () -> GroundTruthTrace.read(d)).hasMessage(d + ": is a directory, expected a file");
    Path missing = dir.resolve("nope.csv");
    failsCleanly(missing, () -> TraceReader.open(missing)).hasMessage(missing + ": no such file");
    Path empty = write(dir, "empty.csv", "");
    failsCleanly(empty, () -> TraceReader.isBlisTrace(empty))
        .hasMessage(empty + ": the file is empty, expected a trace");
    failsCleanly(empty, () -> TraceReader.open(empty)).hasMessageStartingWith(empty + ": the file is empty");
    failsCleanly(empty, () -> GroundTruthTrace.read(empty)).hasMessageStartingWith(empty + ": the file is empty");
    byte[] garbage = new byte[512];
    new SplittableRandom(7).nextBytes(garbage);
    garbage[0] = (byte) 0xC3;
    garbage[1] = (byte) 0x28; // an invalid UTF-8 sequence
    Path bin = writeBytes(dir, "bin.csv", garbage);
    failsCleanly(bin, () -> TraceReader.isBlisTrace(bin))
        .hasMessage(bin + ":1: not UTF-8 text (a binary file, or text in another encoding?)");
    failsCleanly(bin, () -> GroundTruthTrace.read(bin)).hasMessageContaining("not UTF-8 text");
    Path binGz = writeBytes(dir, "bin.csv.gz", garbage);
    failsCleanly(binGz, () -> TraceReader.open(binGz)).hasMessage(binGz
        + ":1: neither gzip data (its name ends in .gz but it lacks the gzip signature) nor UTF-8 text");
    Path utf16 = writeBytes(dir, "u16.csv", ("\uFEFF" + HEADER).getBytes(StandardCharsets.UTF_16));
    failsCleanly(utf16, () -> TraceReader.isBlisTrace(utf16)).hasMessageContaining("UTF-16 text")
        .hasMessageContaining("expected UTF-8");
    Path nul = write(dir, "nul.csv", "\0\0\0\0" + HEADER);
    failsCleanly(nul, () -> TraceReader.isBlisTrace(nul))
        .hasMessageStartingWith(nul + ":1:1: contains the control character U+0000");
    byte[] gz = gzip(HEADER + ROW0 + ROW1);
    Path truncated = writeBytes(dir, "cut.csv.gz", Arrays.copyOf(gz, gz.length - 12));
    failsCleanly(truncated, () -> readAll(truncated)).hasMessageContaining("gzip data is truncated");
    Path badLater = writeBytes(dir, "late.csv", concat(
        (HEADER + ROW0).getBytes(StandardCharsets.UTF_8), new byte[] {(byte) 0xFF, '\n'}));
    failsCleanly(badLater, () -> TraceReader.open(badLater))
        .hasMessageStartingWith(badLater + ":4: not UTF-8 text");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
      "{\"version\":1,|:1:27: header: invalid JSON: unexpected end-of-input within/between Object entries",
      "{version:1}|:1:15: header: invalid JSON: unexpected character ('v'): was expecting double-quote to start field name",
      "{\"version\":1,\"version\":1,\"token_seed\":1,\"token_ids\":false}|header: key 'version' appears twice",
      "{\"version\":1,\"token_seed\":1,\"token_ids\":false} x|header: invalid JSON: unrecognized token 'x'",
      "[1]|must be a JSON object",
      "|must be a JSON object",
      "{\"version\":1.5,\"token_seed\":1,\"token_ids\":false}|header needs an integer version",
      "{\"version\":2,\"token_seed\":1,\"token_ids\":false}|unsupported blis-trace version 2"})
  void aBadHeaderIsOneCleanLine(String json, String expected, @TempDir Path dir) throws IOException {
    Path f = write(dir, "t.csv", "# blis-trace " + (json == null ? "" : json) + "\n"
        + String.join(",", TraceFormat.COLUMNS) + "\n" + ROW0);
    failsCleanly(f, () -> TraceReader.header(f)).hasMessageStartingWith(f + ":1")
        .hasMessageContaining(expected);
  }

  @Test
  void echoedValuesAreShortAndPrintable(@TempDir Path dir) throws IOException {
    String junk = "x\u0007".repeat(200);
    Path f = write(dir, "t.csv", HEADER + "0,100," + junk + ",5,,0,123,-1,0,standard,,0,0\n");
    failsCleanly(f, () -> TraceReader.open(f)).hasMessageContaining("x\\u0007x\\u0007")
        .hasMessageContaining("...'").hasMessageNotContaining("\u0007");
    Path cols = write(dir, "c.csv", HEADER.substring(0, HEADER.indexOf('\n') + 1) + junk + "\n");
    failsCleanly(cols, () -> TraceReader.open(cols)).hasMessageStartingWith(cols + ":2: column header is 'x\\u0007");
    Path one = write(dir, "one.csv", HEADER.substring(0, HEADER.indexOf('\n') + 1));
    failsCleanly(one, () -> TraceReader.open(one)).hasMessageStartingWith(one + ":2: missing the column header line");
  }

  @Test
  void groundTruthRowsAreBounded(@TempDir Path dir) throws IOException {
    Path f = write(dir, "gt.csv", GT_HEADER + "0,0,0.000,1,2000000000,140,1943.702,130.224\n");
    failsCleanly(f, () -> GroundTruthTrace.read(f)).hasMessage(f + ":2: field 'input_tokens' ="
        + " '2000000000': expected an integer in [1, 10000000] (the most tokens a request may have)");
    Path late = write(dir, "late.csv", GT_HEADER + "0,0,1e300,1,5,140,1943.702,130.224\n");
    failsCleanly(late, () -> GroundTruthTrace.read(late)).hasMessageContaining("field 'arrival_ms'")
        .hasMessageContaining("the latest simulated time");
  }

  /** The set behind the duplicate-id check agrees with a HashSet on seeded random ids. */
  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {1, 2, 3})
  void longSetAgreesWithAHashSet(long seed) {
    SplittableRandom rnd = new SplittableRandom(seed);
    LongSet set = new LongSet();
    Set<Long> reference = new HashSet<>();
    for (int i = 0; i < 50_000; i++) {
      long v = switch (rnd.nextInt(4)) {
        case 0 -> rnd.nextLong(1000);
        case 1 -> rnd.nextLong();
        case 2 -> LongSet.DENSE_LIMIT - 50 + rnd.nextLong(100);
        default -> rnd.nextBoolean() ? Long.MIN_VALUE : Long.MAX_VALUE - rnd.nextLong(3);
      };
      assertThat(set.add(v)).as("seed %d, add %d", seed, v).isEqualTo(reference.add(v));
      long probe = rnd.nextLong(2000) - 1000;
      assertThat(set.contains(probe)).as("seed %d, contains %d", seed, probe)
          .isEqualTo(reference.contains(probe));
    }
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] r = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, r, a.length, b.length);
    return r;
  }
}
