package io.blis.cli;

import static io.blis.cli.BadInputCliTest.refused;
import static io.blis.cli.BlisCliTest.blis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.blis.engine.InstanceFootprint;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Memory and time bounds decided before the work: the default --max-backlog derived from the
 * heap, deployments whose instances cannot fit in the heap refused in one line before they are
 * built, and a note of the size of work that takes long.
 */
class EdgesBoundsCliTest {

  /** A KV pool so large (100,000,000 blocks, about 6 GB of tables each) that no test heap holds two. */
  private static final String HUGE_KV = "100000000";

  private static void assumeSmallerHeapThan(long bytes) {
    assumeThat(Runtime.getRuntime().maxMemory()).as("this test's heap").isLessThan((long) (bytes * HeapBudget.INSTANCES_SHARE));
  }

  /** {@code java -XX:+UseG1GC -XmxHEAP BlisCli ARGS} in a process of its own: exit status, stderr, stdout. */
  private static String[] blisWithHeap(String heap, Path dir, String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-XX:+UseG1GC", "-Xmx" + heap, "-cp", System.getProperty("java.class.path"), BlisCli.class.getName()));
    command.addAll(List.of(args));
    Path out = dir.resolve("out.txt");
    Path err = dir.resolve("err.txt");
    Process p = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
    try {
      assertThat(p.waitFor(100, TimeUnit.SECONDS)).as("finished").isTrue();
    } finally {
      p.destroyForcibly();
    }
    return new String[] {String.valueOf(p.exitValue()), Files.readString(err), Files.readString(out)};
  }

  /**
   * With no --max-backlog, the limit is what the heap holds: with -Xmx64m, (75% of 64 MiB less one
   * instance) / 2,500 bytes = 19,921 requests, where a workload arriving faster than it is served
   * stops, in one line, instead of running out of memory (the fixed 1,000,000 of before did, with a
   * 2 GiB heap and 512-token prompts).
   */
  @Test
  @Timeout(120)
  void theDefaultBacklogLimitIsDerivedFromTheHeap(@TempDir Path dir) throws Exception {
    long expected = HeapBudget.defaultMaxBacklog(64L << 20, InstanceFootprint.of(7462, 0));
    assertThat(expected).isEqualTo(19_921);
    String[] r = blisWithHeap("64m", dir, "run", "--num-requests", "2147483647", "--rate", "1e6");
    assertThat(r[0]).as(r[1]).isEqualTo("1");
    assertThat(r[1].strip().lines()).singleElement().asString()
        .startsWith("blis run: more than 19,921 requests arrived and not yet finished")
        .endsWith("raise --max-backlog (19921) if the memory allows");
    assertThat(r[2]).isEmpty();
  }

  /** An explicit --max-backlog is kept as given, not the one the heap gives (19,921 in 64 MiB). */
  @Test
  @Timeout(120)
  void anExplicitBacklogLimitIsKept(@TempDir Path dir) throws Exception {
    String[] r = blisWithHeap("64m", dir, "run", "--num-requests", "2147483647", "--rate", "1e6", "--max-backlog", "15000");
    assertThat(r[0]).as(r[1]).isEqualTo("1");
    assertThat(r[1].strip().lines()).singleElement().asString().contains("more than 15,000 requests arrived")
        .endsWith("raise --max-backlog (15000) if the memory allows");
  }

  /**
   * The tester's commands with a small heap: serve's 4,096 instances and capacity's --max-instances
   * 4096 (each instance's KV tables for 7,462 blocks, 516 KiB) ran out of memory; now refused in one
   * line naming the flag and the figures, before anything is built.
   */
  @Test
  @Timeout(120)
  void instancesTheHeapCannotHoldAreRefusedBeforeTheyAreBuilt(@TempDir Path dir) throws Exception {
    String[] serve = blisWithHeap("1g", dir, "serve", "--num-instances", "4096", "--port", "0");
    assertThat(serve[0]).as(serve[1]).isEqualTo("2");
    assertThat(serve[1].strip().lines()).singleElement().asString().isEqualTo("blis serve: --num-instances 4096: 4,096"
        + " instances of 7,462 KV blocks need about 2.0 GiB of heap before any request (about 516 KiB each: the blocks'"
        + " tables and index, the instance's state), more than the 922 MiB (90%) they may take of the Java heap's 1.0"
        + " GiB; give at most 1,829 instances of these, or more heap (e.g. BLIS_JAVA_OPTS=-Xmx4g)");
    assertThat(serve[2]).isEmpty();
    String[] capacity = blisWithHeap("1g", dir, "capacity", "--slo", "ttft_p99=1s", "--target-rate", "1e6",
        "--max-instances", "4096");
    assertThat(capacity[0]).as(capacity[1]).isEqualTo("2");
    assertThat(capacity[1].strip().lines()).singleElement().asString()
        .startsWith("blis capacity: --max-instances 4096: 4,096 instances of 7,462 KV blocks need about 2.0 GiB")
        .contains("give at most 1,829 instances of these");
    assertThat(capacity[2]).isEmpty();
  }

  /** In-process, with pools too large for any test heap: run, serve and capacity refuse alike. */
  @Test
  void everyCommandRefusesInstancesTooLargeForTheHeap() {
    long each = InstanceFootprint.of(100_000_000L, 0);
    assumeSmallerHeapThan(2 * each);
    refused(blis("run", "--num-requests", "10", "--num-instances", "2", "--total-kv-blocks", HUGE_KV),
        "blis run: --num-instances 2 with --total-kv-blocks 100000000: 2 instances of 100,000,000 KV blocks need about",
        "of heap before any request");
    refused(blis("serve", "--port", "0", "--num-instances", "2", "--total-kv-blocks", HUGE_KV),
        "blis serve: --num-instances 2 with --total-kv-blocks 100000000: 2 instances");
    // the flags' deployment fits (one instance of 100,000 blocks); the most the search may try does not
    String blocks = String.valueOf(Math.max(100_000, Runtime.getRuntime().maxMemory() / 60 / 4096 * 2));
    refused(blis("capacity", "--slo", "ttft_p99=1s", "--target-rate", "1000", "--max-instances", "4096",
        "--total-kv-blocks", blocks), "blis capacity: --max-instances 4096: 4,096 instances of");
  }

  /**
   * A decision trace of many requests is noted, with its size, before the simulation starts (it is
   * linear in the requests, 1.2 GB of JSON a million on 8 instances: 71 s with -Xmx2g, not stuck);
   * a small one is not.
   */
  @Test
  void aLargeDecisionTraceIsNotedBeforeTheRun() {
    // stopped at once by its backlog limit: the note is what the run prints first
    BlisCliTest.Outcome o = blis("run", "--num-requests", "600000", "--rate", "1e6", "--max-backlog", "10",
        "--num-instances", "8", "--trace-level", "decisions");
    assertThat(o.code()).as(o.err()).isEqualTo(1);
    List<String> lines = o.err().strip().lines().toList();
    assertThat(lines).hasSize(2);
    assertThat(lines.get(0)).isEqualTo("note: --trace-level decisions on 600,000 requests and 8 instances records"
        + " about 1,200,000 decisions (an admission and a routing decision a request, each routing one listing every"
        + " instance), about 672 MiB of the result's JSON; they are spilled to a temporary file, not held in memory,"
        + " but the run takes longer to write them");
    assertThat(lines.get(1)).startsWith("blis run: more than 10 requests arrived");
    BlisCliTest.Outcome small = blis("run", "--num-requests", "200", "--num-instances", "8", "--trace-level", "decisions");
    assertThat(small.code()).as(small.err()).isZero();
    assertThat(small.err()).doesNotContain("note:");
    // a refusal stays the only line
    refused(blis("run", "--num-requests", "600000", "--trace-level", "decisions", "--num-instances", "2",
        "--total-kv-blocks", HUGE_KV), "--num-instances 2 with --total-kv-blocks 100000000");
  }

  @Test
  void theSizeOfADecisionTraceIsEstimatedFromTheRequestsAndInstances() {
    assertThat(WorkSize.decisionTrace(499_999, 8)).isNull();
    // measured: 1,000,000 requests on 8 instances wrote 1,171,576,724 bytes
    assertThat(WorkSize.decisionTrace(1_000_000, 8)).contains("about 2,000,000 decisions", "about 1.1 GiB");
    assertThat(WorkSize.decisionTrace(1_000_000, 1)).contains("1 instance records", "about 365 MiB");
  }

  /**
   * A capacity search whose load points simulate millions of requests each is noted before it starts
   * (10,000,000 a point gave no answer in 300 s: about 25 points of a run that long each).
   */
  @Test
  @Timeout(120)
  void aCapacitySearchOfMillionsOfRequestsAPointIsNotedBeforeItStarts() throws Exception {
    assertThat(WorkSize.capacityPoints(999_999)).isNull();
    assertThat(WorkSize.capacityPoints(10_000_000)).startsWith("each load point simulates at least 10,000,000 requests"
        + " (--min-point-requests), and a search simulates one point after another, about 25");
    // the note comes first, then the search: read it, then stop the search
    List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", System.getProperty("java.class.path"), BlisCli.class.getName(), "capacity", "--slo", "ttft_p99=1s",
        "--min-point-requests", "10000000", "--max-point-requests", "10000000"));
    Process p = new ProcessBuilder(command).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    try (BufferedReader err = new BufferedReader(new InputStreamReader(p.getErrorStream(), StandardCharsets.UTF_8))) {
      String first = err.readLine();
      assertThat(first).isEqualTo("note: " + WorkSize.capacityPoints(10_000_000));
      assertThat(p.isAlive()).as("the search goes on").isTrue();
    } finally {
      p.destroyForcibly();
      p.waitFor(60, TimeUnit.SECONDS);
    }
  }
}
