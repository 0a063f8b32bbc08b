package io.blis.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.DisabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code ./blis} launcher at the repository root, run as a user would: from another directory,
 * directly and through a symbolic link. Needs the packaged jar ({@code blis-cli/target/blis.jar});
 * skipped when it is absent (tests run before {@code package} on a fresh clone). The launcher is a
 * POSIX shell script: not on Windows.
 */
@DisabledOnOs(OS.WINDOWS)
class LauncherTest {

  static Path root;
  static Path launcher;
  static Path jar;

  @BeforeAll
  static void locate() {
    root = Path.of("").toAbsolutePath().getParent(); // surefire runs in blis-engine/
    launcher = root.resolve("blis");
    jar = root.resolve("blis-cli/target/blis.jar");
  }

  record Result(int code, String out, String err) {}

  static Result exec(Path dir, Map<String, String> env, String... command) throws IOException, InterruptedException {
    ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile());
    pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
    pb.environment().remove("BLIS_JAVA_OPTS");
    pb.environment().putAll(env);
    Path out = Files.createTempFile(dir, "out", ".txt");
    Path err = Files.createTempFile(dir, "err", ".txt");
    pb.redirectOutput(out.toFile()).redirectError(err.toFile());
    Process p = pb.start();
    assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("finished: " + String.join(" ", command)).isTrue();
    return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
        Files.readString(err, StandardCharsets.UTF_8));
  }

  static String[] javaJar(String... args) {
    List<String> c = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-jar", jar.toString()));
    c.addAll(List.of(args));
    return c.toArray(String[]::new);
  }

  static String[] blis(Path script, String... args) {
    List<String> c = new ArrayList<>(List.of(script.toString()));
    c.addAll(List.of(args));
    return c.toArray(String[]::new);
  }

  @Test
  void printsWhatJavaJarPrintsFromAnotherDirectoryAndThroughASymlink(@TempDir Path dir) throws Exception {
    assumeThat(Files.isRegularFile(jar)).as("packaged jar " + jar).isTrue();
    Result expected = exec(dir, Map.of(), javaJar("run", "--num-requests", "5"));
    assertThat(expected.code()).isZero();
    assertThat(expected.out()).contains("\"injected_requests\" : 5");

    Result direct = exec(dir, Map.of(), blis(launcher, "run", "--num-requests", "5"));
    assertThat(direct).isEqualTo(expected);

    Path link = dir.resolve("bin/blis");
    Files.createDirectories(link.getParent());
    Files.createSymbolicLink(link, launcher);
    try {
      assertThat(exec(dir, Map.of(), blis(link, "run", "--num-requests", "5"))).isEqualTo(expected);
    } finally {
      Files.delete(link); // JUnit warns when it has to delete a link out of its directory
    }
  }

  @Test
  void badInputExitsAsJavaJarDoes(@TempDir Path dir) throws Exception {
    assumeThat(Files.isRegularFile(jar)).as("packaged jar " + jar).isTrue();
    Result expected = exec(dir, Map.of(), javaJar("run", "--rate", "-3"));
    assertThat(expected.code()).isEqualTo(2);
    assertThat(exec(dir, Map.of(), blis(launcher, "run", "--rate", "-3"))).isEqualTo(expected);
  }

  /**
   * The archive the build made is mapped: the CLI's classes come from it ("shared objects file"),
   * when it was made by this very JVM build (the JVM refuses any other, silently, and the launcher
   * still works: the tests above).
   */
  @Test
  void mapsTheArchiveTheBuildMade(@TempDir Path dir) throws Exception {
    Path jsa = root.resolve("blis-cli/target/blis.jsa");
    Path vm = root.resolve("blis-engine/target/cds/java.vm.version");
    assumeThat(Files.isRegularFile(jar) && Files.isRegularFile(jsa) && Files.isRegularFile(vm)
        && Files.getLastModifiedTime(jsa).compareTo(Files.getLastModifiedTime(jar)) > 0)
        .as("an archive newer than the jar").isTrue();
    assumeThat(Files.readString(vm).strip()).isEqualTo(System.getProperty("java.vm.version"));
    Path log = dir.resolve("classes.log");
    Result r = exec(dir, Map.of("BLIS_JAVA_OPTS", "-Xlog:class+load=info:file=" + log),
        blis(launcher, "run", "--num-requests", "5"));
    assertThat(r.code()).isZero();
    assertThat(Files.readAllLines(log)).anySatisfy(line ->
        assertThat(line).contains("io.blis.cli.BlisCli source: shared objects file"));
  }
}
