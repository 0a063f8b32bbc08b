package io.blis.cli;

import static io.blis.cli.BlisCliTest.blis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.blis.engine.result.OutputFiles;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Outputs never destroy what a path points at: a symbolic link is followed and its target
 * replaced (the link stays), a FIFO or a device node is written in place and stays what it was,
 * a full device gives one clear line naming the flag, and {@code -} is standard output. Every
 * special file here is made in a temporary directory; no real device node is touched.
 */
class OutputTargetsCliTest {

  /** Runs a command (mkfifo, mknod) and says whether it succeeded. */
  private static boolean make(String... command) throws Exception {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    p.getInputStream().readAllBytes();
    return p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0;
  }

  /** Everything written into {@code fifo}, read on another thread (a FIFO's writer waits for a reader). */
  private static CompletableFuture<String> readAll(Path fifo) {
    return CompletableFuture.supplyAsync(() -> {
      try (InputStream in = Files.newInputStream(fifo)) {
        return new String(in.readAllBytes(), StandardCharsets.UTF_8);
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
  }

  private static boolean isSpecial(Path p) {
    return Files.exists(p, LinkOption.NOFOLLOW_LINKS) && !Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)
        && !Files.isSymbolicLink(p) && !Files.isDirectory(p);
  }

  @Test
  void aLinkIsFollowedAndItsTargetReplacedTheLinkStays(@TempDir Path dir) throws Exception {
    Path target = dir.resolve("data/real.json");
    Files.createDirectories(target.getParent());
    Files.writeString(target, "old");
    Path link = dir.resolve("link.json");
    Files.createSymbolicLink(link, Path.of("data/real.json"));
    Path linkToLink = dir.resolve("again.json");
    Files.createSymbolicLink(linkToLink, link);

    BlisCliTest.Outcome o = blis("run", "--num-requests", "15", "--results-path", linkToLink.toString());
    assertThat(o.code()).as(o.err()).isZero();
    assertThat(Files.isSymbolicLink(link)).isTrue();
    assertThat(Files.isSymbolicLink(linkToLink)).isTrue();
    assertThat(Files.readString(target)).isEqualTo(o.out());
    try (var s = Files.list(target.getParent())) {
      assertThat(s.map(p -> p.getFileName().toString())).containsExactly("real.json");
    }
    // a dangling link: its target is created, the link kept
    Path dangling = dir.resolve("dangling.csv");
    Files.createSymbolicLink(dangling, Path.of("made.csv"));
    assertThat(blis("run", "--num-requests", "5", "--trace-out", dangling.toString()).code()).isZero();
    assertThat(Files.isSymbolicLink(dangling)).isTrue();
    assertThat(Files.readString(dir.resolve("made.csv"))).startsWith("# blis-trace");
  }

  @Test
  void aFifoIsWrittenInPlaceAndStaysAFifo(@TempDir Path dir) throws Exception {
    Path fifo = dir.resolve("results.fifo");
    assumeThat(make("mkfifo", fifo.toString())).as("mkfifo available").isTrue();
    CompletableFuture<String> read = readAll(fifo);
    BlisCliTest.Outcome o = blis("run", "--num-requests", "15", "--results-path", fifo.toString());
    assertThat(o.code()).as(o.err()).isZero();
    assertThat(read.get(30, TimeUnit.SECONDS)).isEqualTo(o.out());
    assertThat(isSpecial(fifo)).as("still a FIFO").isTrue();
    try (var s = Files.list(dir)) {
      assertThat(s.map(p -> p.getFileName().toString())).containsExactly("results.fifo");
    }
  }

  /** Device nodes of our own (as root; skipped otherwise): /dev/null's and /dev/full's numbers. */
  @Test
  void aDeviceIsWrittenInPlaceAndAFullOneIsOneClearLine(@TempDir Path dir) throws Exception {
    Path nul = dir.resolve("null");
    Path full = dir.resolve("full");
    assumeThat(make("mknod", nul.toString(), "c", "1", "3") && make("mknod", full.toString(), "c", "1", "7"))
        .as("mknod allowed (root)").isTrue();
    BlisCliTest.Outcome o = blis("run", "--num-requests", "15", "--results-path", nul.toString(),
        "--trace-out", nul.toString(), "--otel-out", nul.toString());
    assertThat(o.code()).as(o.err()).isZero();
    assertThat(o.out()).startsWith("{");
    assertThat(isSpecial(nul)).as("still a device").isTrue();

    for (String flag : new String[] {"--results-path", "--trace-out", "--otel-out"}) {
      BlisCliTest.Outcome f = blis("run", "--num-requests", "15", flag, full.toString());
      assertThat(f.code()).as(flag).isNotZero();
      assertThat(f.err().strip()).as(flag).doesNotContain("\n").contains(flag).contains(full.toString())
          .contains("No space left on device").doesNotContain("Exception");
      assertThat(isSpecial(full)).as("still a device after %s", flag).isTrue();
    }
    try (var s = Files.list(dir)) {
      assertThat(s.map(p -> p.getFileName().toString())).containsExactlyInAnyOrder("null", "full");
    }
  }

  /**
   * validate's HTML report goes to a device in place, and into a FIFO as a reader takes it; a
   * sweep's --out, a directory of files, refuses a device with one line and leaves it alone.
   */
  @Test
  void theHtmlReportAndTheSweepDirectoryOnSpecialFiles(@TempDir Path dir) throws Exception {
    Path nul = dir.resolve("null");
    assumeThat(make("mknod", nul.toString(), "c", "1", "3")).as("mknod allowed (root)").isTrue();
    String experiments = "src/test/resources/validate/experiments-small.json";
    BlisCliTest.Outcome o = blis("validate", "--experiments", experiments, "--html", nul.toString(),
        "--out", dir.resolve("v.json").toString());
    assertThat(o.code()).as(o.err()).isZero();
    assertThat(isSpecial(nul)).as("still a device").isTrue();

    Path fifo = dir.resolve("report.fifo");
    assumeThat(make("mkfifo", fifo.toString())).as("mkfifo available").isTrue();
    CompletableFuture<String> read = readAll(fifo);
    BlisCliTest.Outcome f = blis("validate", "--experiments", experiments, "--html", fifo.toString());
    assertThat(f.code()).as(f.err()).isZero();
    assertThat(read.get(30, TimeUnit.SECONDS)).startsWith("<!DOCTYPE html>").contains("</html>");
    assertThat(isSpecial(fifo)).as("still a FIFO").isTrue();

    BlisCliTest.Outcome sweep = blis("sweep", "--grid", "../docs/examples/sweep-grid-small.yaml", "--out", nul.toString());
    assertThat(sweep.code()).isEqualTo(2);
    assertThat(sweep.err().strip()).doesNotContain("\n").contains("--out " + nul + ": exists and is not a directory");
    assertThat(isSpecial(nul)).as("still a device after the sweep").isTrue();
    try (var s = Files.list(dir)) {
      assertThat(s.map(p -> p.getFileName().toString())).containsExactlyInAnyOrder("null", "report.fifo", "v.json");
    }
  }

  @Test
  void aDashIsStandardOutputOnce(@TempDir Path dir) throws Exception {
    BlisCliTest.Outcome o = blis("run", "--num-requests", "15", "--results-path", "-");
    BlisCliTest.Outcome plain = blis("run", "--num-requests", "15");
    assertThat(o.code()).as(o.err()).isZero();
    assertThat(o.out()).isEqualTo(plain.out());
    assertThat(Path.of("-")).doesNotExist();
    // every streamed writer opens "-" as the process's standard output, in place
    assertThat(OutputFiles.inPlace(Path.of("-"))).isTrue();
    assertThat(OutputFiles.temporary(Path.of("-"))).isEqualTo(OutputFiles.target(Path.of("-")));
  }

  @Test
  void discardNeverDeletesWhatIsNotItsOwnTemporary(@TempDir Path dir) throws Exception {
    // named as temporaries are (.NAME.PID-N-HOST.blis-tmp), yet not regular files
    Path fifo = dir.resolve(OutputFiles.temporaryName("x", ProcessHandle.current().pid(), 1));
    assumeThat(make("mkfifo", fifo.toString())).isTrue();
    OutputFiles.discard(fifo);
    assertThat(isSpecial(fifo)).isTrue();
    Path real = dir.resolve("kept.json");
    Files.writeString(real, "x");
    Path link = dir.resolve(OutputFiles.temporaryName("link", ProcessHandle.current().pid(), 2));
    Files.createSymbolicLink(link, real);
    OutputFiles.discard(link);
    assertThat(Files.isSymbolicLink(link)).isTrue();
    assertThat(real).hasContent("x");
  }

  /**
   * A run stopped by SIGTERM (or Ctrl-C) while its trace streams into its temporary file ({@code
   * .t.csv.PID-N-HOST.blis-tmp}) leaves no temporary file: the unfinished ones are discarded as the
   * JVM exits. (They stayed before.)
   */
  @Test
  @org.junit.jupiter.api.Timeout(120)
  void aRunStoppedBySigtermLeavesNoTemporaryFile(@TempDir Path dir) throws Exception {
    Path trace = dir.resolve("t.csv");
    String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process p = new ProcessBuilder(javaBin, "-cp", System.getProperty("java.class.path"), BlisCli.class.getName(),
        "run", "--num-requests", "5000000", "--rate", "100", "--num-instances", "8", "--trace-out", trace.toString(),
        "--results-path", dir.resolve("r.json").toString())
        .redirectErrorStream(true).redirectOutput(dir.resolve("log.txt").toFile()).start();
    try {
      Path tmp = null;
      for (int i = 0; i < 1200 && p.isAlive() && tmp == null; i++) {
        Thread.sleep(50);
        try (var files = Files.list(dir)) {
          tmp = files.filter(f -> f.getFileName().toString().matches("\\.t\\.csv\\." + p.pid() + "-\\d+-[0-9a-f]+\\.blis-tmp"))
              .filter(f -> f.toFile().length() > 0).findFirst().orElse(null);
        }
      }
      assertThat(p.isAlive()).as(Files.readString(dir.resolve("log.txt"))).isTrue();
      assertThat(tmp).as("the trace streams into its temporary").isNotNull();
      p.destroy(); // SIGTERM
      assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(p.exitValue()).isEqualTo(143);
      try (var files = Files.list(dir)) {
        assertThat(files.map(f -> f.getFileName().toString())).containsExactly("log.txt");
      }
    } finally {
      p.destroyForcibly();
    }
  }
}
