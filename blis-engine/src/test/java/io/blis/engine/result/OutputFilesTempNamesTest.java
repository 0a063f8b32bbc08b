package io.blis.engine.result;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The temporaries outputs are written to: one per write, hidden, named after the writer's process
 * ({@code .FILE.PID-N-HOST.blis-tmp}), so that two writers of one file never share one and a
 * temporary a killed process left is deleted by the next writer into its directory.
 */
class OutputFilesTempNamesTest {

  private static final long ME = ProcessHandle.current().pid();

  private static List<String> names(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  /** The id of a process that has ended (started and waited for), not reused yet. */
  private static long deadPid() throws Exception {
    Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-version")
        .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    long pid = p.pid();
    assumeThat(ProcessHandle.of(pid)).as("pid %d not reused yet", pid).isEmpty();
    return pid;
  }

  @Test
  void eachWriteHasAHiddenTemporaryOfItsOwnNamedAfterItsProcess(@TempDir Path dir) {
    Path f = dir.resolve("r.json");
    Path a = OutputFiles.temporary(f);
    Path b = OutputFiles.temporary(f);
    assertThat(a).isNotEqualTo(b);
    for (Path t : List.of(a, b)) {
      assertThat(t.getParent()).isEqualTo(dir);
      assertThat(t.getFileName().toString()).matches("\\.r\\.json\\." + ME + "-\\d+-[0-9a-f]+\\.blis-tmp");
      assertThat(OutputFiles.writerOf(t.getFileName().toString())).isEqualTo(ME);
    }
    assertThat(OutputFiles.writerOf("r.json.tmp")).isEqualTo(-1);
    assertThat(OutputFiles.writerOf(".r.json.12-3.blis-tmp")).isEqualTo(-1); // no machine tag
    // a very long name is cut, so that the temporary's name stays within the file system's limit
    String longName = "é".repeat(120) + ".json"; // 245 bytes
    String tmp = OutputFiles.temporary(dir.resolve(longName)).getFileName().toString();
    assertThat(tmp.getBytes(StandardCharsets.UTF_8).length).isLessThan(220);
    assertThat(OutputFiles.writerOf(tmp)).isEqualTo(ME);
  }

  /**
   * Two writers of one file at once (two threads here: one process id) both complete, the file is
   * one of theirs whole, and each reads back its own. With one temporary name per file, the second
   * truncated the first's temporary and its rename failed with "no such file".
   */
  @Test
  void twoWritersOfOneFileAtOnceBothCompleteAndTheFileIsOneOfThemWhole(@TempDir Path dir) throws Exception {
    Path f = dir.resolve("r.json");
    String textA = "A".repeat(100_000) + "\n";
    String textB = "B".repeat(50_000) + "\n";
    // both have opened their temporaries and written half before either finishes
    CyclicBarrier halfway = new CyclicBarrier(2);
    CountDownLatch bDone = new CountDownLatch(1);
    String[] readBackA = new String[1];
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      Future<?> a = pool.submit(() -> {
        OutputFiles.write(f, w -> {
          w.write(textA, 0, textA.length() / 2);
          w.flush();
          await(halfway);
          w.write(textA, textA.length() / 2, textA.length() - textA.length() / 2);
        }, in -> {
          try {
            bDone.await(60, TimeUnit.SECONDS); // B's rename has replaced the file meanwhile
          } catch (InterruptedException e) {
            throw new IOException(e);
          }
          readBackA[0] = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        });
        return null;
      });
      Future<?> b = pool.submit(() -> {
        try {
          OutputFiles.write(f, w -> {
            w.write(textB, 0, textB.length() / 2);
            w.flush();
            await(halfway);
            w.write(textB, textB.length() / 2, textB.length() - textB.length() / 2);
          });
        } finally {
          bDone.countDown();
        }
        return null;
      });
      b.get(60, TimeUnit.SECONDS);
      a.get(60, TimeUnit.SECONDS);
    } finally {
      pool.shutdownNow();
    }
    assertThat(Files.readString(f)).isIn(textA, textB);
    assertThat(readBackA[0]).as("A reads back what A wrote, whoever renamed last").isEqualTo(textA);
    assertThat(names(dir)).containsExactly("r.json");
  }

  private static void await(CyclicBarrier b) {
    try {
      b.await(60, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * A temporary a killed process left (its process is gone) is deleted by the next write into the
   * directory, of any file; one of a running process, a link, a file of another machine or namespace
   * and other hidden files are left alone.
   */
  @Test
  void theFirstWriteIntoADirectoryDeletesOnlyTheTemporariesOfDeadProcesses(@TempDir Path dir) throws Exception {
    long dead = deadPid();
    long live = ProcessHandle.current().parent().map(ProcessHandle::pid).orElseThrow();
    String stale = OutputFiles.temporaryName("r.json", dead, 7);
    String running = OutputFiles.temporaryName("r.json", live, 7);
    String otherHost = stale.replace("-" + OutputFiles.HOST + ".", "-" + (OutputFiles.HOST.equals("abc") ? "abd" : "abc") + ".");
    String notOurs = ".notes.blis-tmp";
    String link = OutputFiles.temporaryName("t.csv", dead, 8);
    Files.writeString(dir.resolve(stale), "half a result");
    Files.writeString(dir.resolve(running), "being written");
    Files.writeString(dir.resolve(otherHost), "another machine's");
    Files.writeString(dir.resolve(notOurs), "x");
    Files.writeString(dir.resolve("kept.json"), "x");
    Files.createSymbolicLink(dir.resolve(link), dir.resolve("kept.json"));

    OutputFiles.write(dir.resolve("other.csv"), "a,b\n"); // another writer, another file

    assertThat(names(dir)).containsExactlyInAnyOrder(running, otherHost, notOurs, link, "kept.json", "other.csv");
    assertThat(dir.resolve("kept.json")).hasContent("x");
  }

  @Test
  void sweepingCountsWhatItDeletes(@TempDir Path dir) throws Exception {
    long dead = deadPid();
    Files.writeString(dir.resolve(OutputFiles.temporaryName("a.json", dead, 1)), "x");
    Files.writeString(dir.resolve(OutputFiles.temporaryName("b.json", dead, 2)), "x");
    Files.writeString(dir.resolve(OutputFiles.temporaryName("c.json", ME, 3)), "mine, alive");
    assertThat(OutputFiles.sweepStale(dir)).isEqualTo(2);
    assertThat(names(dir)).containsExactly(OutputFiles.temporaryName("c.json", ME, 3));
    assertThat(OutputFiles.sweepStale(dir.resolve("missing"))).isZero();
  }

  /** A spill file is a scratch file named so; the first one in a directory sweeps the dead ones. */
  @Test
  void scratchFilesAreOwnerOnlyAndSweepStaleOnes(@TempDir Path dir) throws Exception {
    long dead = deadPid();
    String stale = OutputFiles.temporaryName("blis-decision-trace.bin", dead, 123456789);
    Files.writeString(dir.resolve(stale), "a run's spilled decisions");
    Path scratch = OutputFiles.createScratch(dir, "blis-decision-trace.bin");
    Path again = OutputFiles.createScratch(dir, "blis-decision-trace.bin");
    assertThat(scratch).isNotEqualTo(again);
    assertThat(OutputFiles.writerOf(scratch.getFileName().toString())).isEqualTo(ME);
    assertThat(names(dir)).containsExactlyInAnyOrder(scratch.getFileName().toString(), again.getFileName().toString());
    if (dir.getFileSystem().supportedFileAttributeViews().contains("posix")) {
      assertThat(java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(scratch)))
          .isEqualTo("rw-------");
    }
  }
}
