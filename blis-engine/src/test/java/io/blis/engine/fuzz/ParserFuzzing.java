package io.blis.engine.fuzz;

import static org.assertj.core.api.Assertions.assertThat;

import io.blis.engine.cluster.Cluster;
import io.blis.workload.RequestOutcome;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Comparator;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;

/**
 * What the fuzz targets share: the input written to a file as a user would give it, the bounded
 * steps after parsing, and the count of inputs run.
 *
 * <p>One class per parser, each with one {@code @FuzzTest} method {@code fuzz}, since Jazzer fuzzes
 * one target per JVM. In a plain test run each target runs on the empty input and on every file
 * of its seed corpus, {@code src/test/resources/<package>/<Class>Inputs/fuzz/} of its module. When
 * fuzzing (the {@code fuzz} profile of this module's pom, or {@code JAZZER_FUZZ=1}), it runs on
 * generated inputs too, and {@link #report()} prints how many and enforces the minimum the build
 * asks for. See "Fuzzing" in docs/testing.md.
 */
public abstract class ParserFuzzing {

  /** Inputs longer than this are skipped: they say nothing a shorter one cannot, slower. */
  static final int MAX_INPUT_BYTES = 64 * 1024;
  /** Requests pulled from an accepted workload, trace or profile. */
  static final int REQUESTS_PULLED = 32;
  /** Instances up to which an accepted cluster is simulated. */
  static final int MAX_SIMULATED_INSTANCES = 8;
  /** KV blocks per instance up to which an accepted cluster is simulated. */
  static final long MAX_SIMULATED_KV_BLOCKS = 100_000;
  /** System property: generated inputs (seeds not counted) a fuzzing run must reach, else it fails. */
  static final String MIN_INPUTS = "blis.fuzz.min-inputs";

  /** A parser of a file. */
  @FunctionalInterface
  interface Parse<T> {
    T from(Path file) throws Exception;
  }

  /** What uses a parser's result. */
  @FunctionalInterface
  interface Use<T> {
    void use(T parsed, Path file) throws Exception;
  }

  private static final Path WORK = workDirectory();
  private static final AtomicLong INPUTS = new AtomicLong();
  /** The fuzz target being run, or null before its first input. */
  private static volatile Class<?> target;

  /**
   * The property on one input: written to the file {@code name}, it is parsed by {@code parse}
   * into a result or the one-line error naming the file; a result then goes through {@code use},
   * which also ends normally or with the one-line error.
   */
  static <T> void parseThenUse(Class<?> fuzzTarget, byte[] in, String name, Parse<T> parse,
      Use<T> use) throws Exception {
    Path file = input(fuzzTarget, in, name);
    if (file == null) {
      return;
    }
    String text = text(in);
    AtomicReference<T> parsed = new AtomicReference<>();
    if (OneLineErrors.accepted(text, file.toString(), () -> parsed.set(parse.from(file)))) {
      OneLineErrors.accepted(text, null, () -> use.use(parsed.get(), file));
    }
  }

  /**
   * Writes {@code in} to {@code name} in a scratch directory and counts it as an input of {@code
   * fuzzTarget}; null (and not counted) when it is longer than {@link #MAX_INPUT_BYTES}.
   */
  static Path input(Class<?> fuzzTarget, byte[] in, String name) throws IOException {
    if (!counted(fuzzTarget, in)) {
      return null;
    }
    return Files.write(WORK.resolve(name), in);
  }

  /** Counts {@code in} as an input of {@code fuzzTarget}; false when it is too long to run. */
  protected static boolean counted(Class<?> fuzzTarget, byte[] in) {
    if (in.length > MAX_INPUT_BYTES) {
      return false;
    }
    target = fuzzTarget;
    INPUTS.incrementAndGet();
    return true;
  }

  /** A path in the scratch directory. */
  static Path scratch(String name) {
    return WORK.resolve(name);
  }

  protected static String text(byte[] in) {
    return new String(in, StandardCharsets.UTF_8);
  }

  /**
   * Pulls up to {@link #REQUESTS_PULLED} requests as the engine would, each completing at its
   * arrival, so that closed-loop rounds and later load stages come too; closes the source.
   */
  static void pull(RequestSource source) {
    try (source) {
      Deque<RequestSpec> followUps = new ArrayDeque<>();
      int pulled = 0;
      long now = 0;
      while (pulled < REQUESTS_PULLED) {
        RequestSpec r = followUps.isEmpty() ? source.next() : followUps.poll();
        if (r == null) {
          break;
        }
        pulled++;
        now = Math.max(now, r.arrivalTimeUs());
        followUps.addAll(source.onFinished(r, RequestOutcome.COMPLETED, now));
      }
    }
  }

  /** Simulates two short requests on the cluster {@code b} describes. */
  static void simulate(Cluster.Builder b) {
    List<RequestSpec> requests = List.of(
        RequestSpec.simple(0, 0, new int[] {1, 2, 3, 4}, 3),
        RequestSpec.simple(1, 1_000, new int[] {1, 2, 5}, 2));
    b.seed(1).toSimulation().source(RequestSource.of(requests)).build().run();
  }

  private static Path workDirectory() {
    try {
      Path dir = Files.createTempDirectory("blis-fuzz-");
      dir.toFile().deleteOnExit();
      return dir;
    } catch (IOException e) {
      throw new IllegalStateException("cannot create a directory for fuzz inputs", e);
    }
  }

  /**
   * Removes the scratch files; when fuzzing, prints how many inputs the target ran and fails when
   * fewer than {@link #MIN_INPUTS} says were generated beyond the seed corpus.
   */
  @AfterAll
  static void report() throws IOException {
    try (Stream<Path> files = Files.walk(WORK)) {
      for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
        if (!p.equals(WORK)) {
          Files.deleteIfExists(p);
        }
      }
    }
    Class<?> t = target;
    if (!fuzzing() || t == null) {
      return;
    }
    long replays = seedReplays(t);
    long generated = INPUTS.get() - replays;
    System.out.printf("fuzz target %s: %,d inputs (%,d seed runs, %,d generated)%n", t.getSimpleName(),
        INPUTS.get(), replays, generated);
    long required = Long.getLong(MIN_INPUTS, 0);
    assertThat(generated).as("generated inputs of %s", t.getSimpleName()).isGreaterThanOrEqualTo(required);
  }

  private static boolean fuzzing() {
    String v = System.getenv("JAZZER_FUZZ") != null ? System.getenv("JAZZER_FUZZ")
        : System.getProperty("JAZZER_FUZZ");
    return v != null && (v.equals("1") || v.equalsIgnoreCase("true") || v.equalsIgnoreCase("yes"));
  }

  /**
   * Runs of seed inputs when fuzzing: JUnit runs the empty input and each seed file once, then
   * libFuzzer reads each file twice (from the seed directory and from Jazzer's copy of JUnit's
   * arguments).
   */
  private static long seedReplays(Class<?> fuzzTarget) throws IOException {
    Path dir = Path.of("src/test/resources", fuzzTarget.getPackageName().replace('.', '/'),
        fuzzTarget.getSimpleName() + "Inputs", "fuzz");
    if (!Files.isDirectory(dir)) {
      return 1;
    }
    try (Stream<Path> s = Files.list(dir)) {
      return 3 * s.filter(Files::isRegularFile).count() + 1;
    }
  }
}
