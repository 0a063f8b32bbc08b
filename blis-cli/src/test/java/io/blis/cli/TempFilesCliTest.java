package io.blis.cli;

import static io.blis.cli.BlisCliTest.blis;
import static org.assertj.core.api.Assertions.assertThat;

import io.blis.engine.result.OutputFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Temporary files of outputs after a SIGKILL and with two writers of one file: a killed run's
 * temporary is hidden ({@code .FILE.PID-N-HOST.blis-tmp}) and the next BLIS command that writes into
 * that directory deletes it, whatever it writes; two runs writing one {@code --results-path} at
 * once both complete, each printing its own result.
 */
class TempFilesCliTest {

  private static List<String> names(Path dir) throws Exception {
    try (Stream<Path> s = Files.list(dir)) {
      return s.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  /**
   * {@code kill -9} of a run streaming its {@code --trace-out} leaves its temporary (nothing can
   * run then), hidden; the next run, writing another output ({@code --results-path}) into the same
   * directory, deletes it; a temporary of a process still running stays.
   */
  @Test
  @Timeout(120)
  void aTemporaryLeftByAKilledRunIsDeletedByTheNextWriterIntoItsDirectory(@TempDir Path dir, @TempDir Path logs)
      throws Exception {
    long live = ProcessHandle.current().parent().map(ProcessHandle::pid).orElseThrow();
    String running = OutputFiles.temporaryName("r.json", live, 1);
    Files.writeString(dir.resolve(running), "another process's result, being written");
    String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process p = new ProcessBuilder(javaBin, "-cp", System.getProperty("java.class.path"), BlisCli.class.getName(),
        "run", "--num-requests", "5000000", "--rate", "100", "--num-instances", "8",
        "--trace-out", dir.resolve("t.csv").toString())
        .redirectErrorStream(true).redirectOutput(logs.resolve("log.txt").toFile()).start();
    String left = null;
    try {
      String pattern = "\\.t\\.csv\\." + p.pid() + "-\\d+-[0-9a-f]+\\.blis-tmp";
      for (int i = 0; i < 1200 && p.isAlive() && left == null; i++) {
        Thread.sleep(50);
        left = names(dir).stream().filter(n -> n.matches(pattern) && dir.resolve(n).toFile().length() > 0)
            .findFirst().orElse(null);
      }
      assertThat(p.isAlive()).as(Files.readString(logs.resolve("log.txt"))).isTrue();
      assertThat(left).as("the trace streams into its temporary").isNotNull();
      p.destroyForcibly(); // SIGKILL: no shutdown hook runs
      assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    } finally {
      p.destroyForcibly();
    }
    assertThat(names(dir)).containsExactlyInAnyOrder(left, running);
    assertThat(left).startsWith("."); // hidden from a plain ls

    BlisCliTest.Outcome next = blis("run", "--num-requests", "5", "--results-path", dir.resolve("r.json").toString());
    assertThat(next.code()).as(next.err()).isZero();
    assertThat(names(dir)).containsExactlyInAnyOrder("r.json", running);
  }

  /** {@code convert -o} is such a writer too: it deletes a killed run's {@code --results-path} temporary. */
  @Test
  @Timeout(120)
  void convertDeletesAStaleTemporaryOfAnotherCommand(@TempDir Path dir) throws Exception {
    Process gone = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-version")
        .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    assertThat(gone.waitFor(60, TimeUnit.SECONDS)).isTrue();
    org.assertj.core.api.Assumptions.assumeThat(ProcessHandle.of(gone.pid())).isEmpty();
    String stale = OutputFiles.temporaryName("r.json", gone.pid(), 4);
    Files.writeString(dir.resolve(stale), "{ \"simulated_duration_s\" : 1");
    Path input = ConvertCommandTest.goblis("tracev2/observed.yaml");
    BlisCliTest.Outcome c = blis("convert", input.toString(), "-o", dir.resolve("t.csv").toString());
    assertThat(c.code()).as(c.err()).isZero();
    assertThat(names(dir)).containsExactly("t.csv");
  }

  /**
   * Two runs writing one {@code --results-path} at once (threads here; processes alike) both
   * complete; the file is one of their results whole; each prints its own result, read back from
   * what it wrote, not from the path the other may have replaced since. (The loser failed with "no
   * such file" when both wrote FILE.tmp.)
   */
  @Test
  void twoRunsWritingOneResultsPathAtOnceBothCompleteEachPrintingItsOwn(@TempDir Path dir) throws Exception {
    Path r = dir.resolve("r.json");
    String[] a = {"run", "--num-requests", "300", "--rate", "20", "--seed", "1", "--results-path", r.toString()};
    String[] b = {"run", "--num-requests", "300", "--rate", "20", "--seed", "2", "--results-path", r.toString()};
    String soloA = blis(java.util.Arrays.copyOf(a, 7)).out();
    String soloB = blis(java.util.Arrays.copyOf(b, 7)).out();
    assertThat(soloA).isNotEqualTo(soloB);
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      for (int round = 0; round < 5; round++) {
        Future<BlisCliTest.Outcome> fa = pool.submit(() -> blis(a));
        Future<BlisCliTest.Outcome> fb = pool.submit(() -> blis(b));
        BlisCliTest.Outcome oa = fa.get(60, TimeUnit.SECONDS);
        BlisCliTest.Outcome ob = fb.get(60, TimeUnit.SECONDS);
        assertThat(oa.code()).as(oa.err()).isZero();
        assertThat(ob.code()).as(ob.err()).isZero();
        assertThat(oa.out()).isEqualTo(soloA);
        assertThat(ob.out()).isEqualTo(soloB);
        assertThat(Files.readString(r)).isIn(soloA, soloB);
        assertThat(names(dir)).containsExactly("r.json");
      }
    } finally {
      pool.shutdownNow();
    }
  }
}
