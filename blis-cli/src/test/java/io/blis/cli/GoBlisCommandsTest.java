package io.blis.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every command of Go BLIS's README and CLI reference runs here as written there and means what Go
 * BLIS documents; the lists and their checks are in {@code goblis/readme-commands.txt} (the README
 * this project started from) and {@code goblis/docs-commands.txt} (its current README and docs).
 */
class GoBlisCommandsTest {

  private static final String LIST = "goblis/readme-commands.txt";
  private static final String DOCS_LIST = "goblis/docs-commands.txt";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final List<String> OUTPUT_FLAGS = List.of("--results-path", "--trace-out", "--metrics-path",
      "--otel-out", "--saturation-report", "--trace-output");

  @TempDir Path tmp;

  static Stream<Arguments> commands() throws IOException {
    return lines(LIST);
  }

  static Stream<Arguments> docsCommands() throws IOException {
    return lines(DOCS_LIST);
  }

  private static Stream<Arguments> lines(String list) throws IOException {
    List<Arguments> out = new ArrayList<>();
    try (InputStream in = GoBlisCommandsTest.class.getResourceAsStream(list)) {
      int lineNo = 0;
      for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
        lineNo++;
        if (line.isBlank() || line.startsWith("#")) {
          continue;
        }
        out.add(Arguments.of(lineNo, line));
      }
    }
    return out.stream();
  }

  @ParameterizedTest(name = "docs line {0}: {1}")
  @MethodSource("docsCommands")
  void runsAsGoBlisCurrentDocsHaveIt(int lineNo, String line) throws Exception {
    runsAsGoBlisDocumentsIt(lineNo, line);
  }

  @ParameterizedTest(name = "line {0}: {1}")
  @MethodSource("commands")
  void runsAsGoBlisDocumentsIt(int lineNo, String line) throws Exception {
    String[] parts = line.split(" \\| ");
    List<String> args = words(parts[0]);
    assertThat(args.remove(0)).as("line %d starts with blis", lineNo).isEqualTo("blis");
    localize(args);
    // the logging level is set once per JVM, before the first logger: --log runs in a JVM of its own
    BlisCliTest.Outcome o = args.contains("--log") ? inOwnJvm(args) : BlisCliTest.blis(args.toArray(String[]::new));
    int exit = 0;
    for (int i = 1; i < parts.length; i++) {
      if (parts[i].strip().startsWith("exit=")) {
        exit = Integer.parseInt(parts[i].strip().substring(5));
      }
    }
    assertThat(o.code()).as("exit status; stderr: %s", o.err()).isEqualTo(exit);
    if (exit != 0) {
      assertThat(o.err().strip().lines()).as("one line").hasSize(1);
    }
    boolean text = line.contains(" | text");
    JsonNode result = exit == 0 && !text ? resultJson(o.out()) : null;
    for (int i = 1; i < parts.length; i++) {
      check(parts[i].strip(), args, result, o);
    }
  }

  private void check(String c, List<String> args, JsonNode result, BlisCliTest.Outcome o) throws IOException {
    if (c.startsWith("exit=") || c.equals("text")) {
      return;
    }
    if (c.startsWith("stdout~")) {
      assertThat(o.out()).contains(c.substring("stdout~".length()));
      return;
    }
    if (c.startsWith("file:")) { // file:FLAG~TEXT: the file the flag names (in the temporary directory) holds TEXT
      int tilde = c.indexOf('~');
      Path file = Path.of(args.get(args.indexOf(c.substring("file:".length(), tilde)) + 1));
      assertThat(file).as(c).exists();
      assertThat(Files.readString(file)).as(c).contains(c.substring(tilde + 1));
      return;
    }
    if (c.startsWith("stderr~")) {
      assertThat(o.err()).contains(c.substring("stderr~".length()));
      return;
    }
    if (c.equals("results-path=stdout")) {
      Path file = Path.of(args.get(args.indexOf("--results-path") + 1));
      assertThat(file).as("--results-path").exists();
      assertThat(Files.readString(file)).as("%s holds what stdout printed", file).isEqualTo(o.out());
      return;
    }
    if (c.startsWith("shows=")) {
      GoBlisShows.check(c.substring("shows=".length()), args, result, this::run);
      return;
    }
    int at = c.length();
    for (char op : new char[] {'=', '>', '<'}) {
      int i = c.indexOf(op);
      if (i >= 0 && i < at) {
        at = i;
      }
    }
    assertThat(at).as("check '%s'", c).isPositive().isLessThan(c.length());
    JsonNode v = result.at(c.substring(0, at));
    assertThat(v.isMissingNode()).as("%s in %s", c.substring(0, at), result).isFalse();
    String want = c.substring(at + 1);
    if (c.charAt(at) == '>') {
      assertThat(v.asDouble()).as(c).isGreaterThan(Double.parseDouble(want));
    } else if (c.charAt(at) == '<') {
      assertThat(v.asDouble()).as(c).isLessThan(Double.parseDouble(want));
    } else if (v.isNumber()) {
      assertThat(v.asDouble()).as(c).isEqualTo(Double.parseDouble(want));
    } else {
      assertThat(v.asText()).as(c).isEqualTo(want);
    }
  }

  /**
   * The result JSON of a command's stdout: all of it, or in Go BLIS's layout (--output-format go-blis)
   * the cluster's object, the last after a {@code === Simulation Metrics ===} line.
   */
  static JsonNode resultJson(String out) throws IOException {
    String header = "=== Simulation Metrics ===\n";
    int at = out.lastIndexOf(header);
    return JSON.readTree(at < 0 ? out : out.substring(at + header.length()));
  }

  /** Runs {@code args} as a line's command is run (files beside the list) and returns its JSON. */
  private JsonNode run(List<String> args) {
    List<String> a = new ArrayList<>(args);
    try {
      localize(a);
      BlisCliTest.Outcome o = BlisCliTest.blis(a.toArray(String[]::new));
      assertThat(o.code()).as("exit status of %s; stderr: %s", a, o.err()).isZero();
      return resultJson(o.out());
    } catch (IOException | URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  private static BlisCliTest.Outcome inOwnJvm(List<String> args) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
        System.getProperty("java.class.path"), BlisCli.class.getName()));
    cmd.addAll(args);
    Process p = new ProcessBuilder(cmd).start();
    // both streams are small; read them on two threads so that neither blocks the process
    java.util.concurrent.CompletableFuture<String> err = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
      try {
        return new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    });
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)).as("finished within a minute").isTrue();
    return new BlisCliTest.Outcome(p.exitValue(), out, err.join());
  }

  /** Splits a command line as a shell would for these commands (double quotes group). */
  private static List<String> words(String s) {
    List<String> out = new ArrayList<>();
    StringBuilder w = new StringBuilder();
    boolean quoted = false;
    boolean any = false;
    for (char ch : s.strip().toCharArray()) {
      if (ch == '"') {
        quoted = !quoted;
        any = true;
      } else if (ch == ' ' && !quoted) {
        if (any) {
          out.add(w.toString());
        }
        w.setLength(0);
        any = false;
      } else {
        w.append(ch);
        any = true;
      }
    }
    if (any) {
      out.add(w.toString());
    }
    return out;
  }

  /** Output files go to a temporary directory; input files are found beside the list. */
  private void localize(List<String> args) throws URISyntaxException {
    Path beside = Path.of(GoBlisCommandsTest.class.getResource(LIST).toURI()).getParent();
    for (int i = 1; i < args.size(); i++) {
      String prev = args.get(i - 1);
      if (OUTPUT_FLAGS.contains(prev)) {
        args.set(i, tmp.resolve(Path.of(args.get(i)).getFileName()).toString());
      } else if (!args.get(i).startsWith("-") && Files.exists(beside.resolve(args.get(i)))) {
        args.set(i, beside.resolve(args.get(i)).toString());
      }
    }
  }
}
