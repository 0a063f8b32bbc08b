package io.blis.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every Java example of README.md compiles as written, with its own imports, against the
 * project's modules; an example made of statements also runs (from the repository root, where its
 * relative paths point) and ends normally. An example marked {@code <!-- consumer: DIR -->} on the
 * line before it is code of the consumer build in DIR (blis-it), which compiles and runs it
 * against the installed artifacts with its own plugins: its lines must be that project's, in the
 * same order (imports in any order), so that README shows what the consumer build runs.
 */
class ReadmeJavaExamplesTest {

  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  private static final Pattern BLOCK =
      Pattern.compile("(?:<!-- consumer: (\\S+) -->\\n)?```java\\n(.*?)```", Pattern.DOTALL);
  private static final Pattern CLASS = Pattern.compile("public (?:final )?class (\\w+)");

  @TempDir Path tmp;

  static Stream<Arguments> examples() throws IOException {
    String readme = Files.readString(ROOT.resolve("README.md"), StandardCharsets.UTF_8);
    List<Arguments> out = new ArrayList<>();
    Matcher m = BLOCK.matcher(readme);
    while (m.find()) {
      out.add(Arguments.of(m.group(1), m.group(2)));
    }
    return out.stream();
  }

  @ParameterizedTest(name = "example {index}")
  @MethodSource("examples")
  void compilesAsWrittenAndRuns(String consumer, String code) throws Exception {
    if (consumer != null) {
      isCodeOfTheConsumerBuild(ROOT.resolve(consumer), code);
      return;
    }
    boolean isClass = code.contains("package ") || CLASS.matcher(code).find();
    Path src;
    String main;
    if (isClass) {
      Matcher c = CLASS.matcher(code);
      assertThat(c.find()).as("a class example names its class").isTrue();
      Path dir = tmp.resolve("src");
      Files.createDirectories(dir);
      src = dir.resolve(c.group(1) + ".java");
      Files.writeString(src, code);
      main = null;
    } else {
      StringBuilder imports = new StringBuilder();
      StringBuilder body = new StringBuilder();
      for (String line : code.split("\n")) {
        (line.startsWith("import ") ? imports : body).append(line).append('\n');
      }
      src = tmp.resolve("ReadmeExample.java");
      Files.writeString(src, imports + "\npublic class ReadmeExample {\n  public static void main(String[] args) throws"
          + " Exception {\n" + body + "  }\n}\n");
      main = "ReadmeExample";
    }
    Path classes = tmp.resolve("classes");
    Files.createDirectories(classes);
    String cp = System.getProperty("java.class.path");
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    StringWriter diagnostics = new StringWriter();
    boolean ok = javac.getTask(diagnostics, null, null,
        List.of("-classpath", cp, "-d", classes.toString(), "-proc:none"), null,
        javac.getStandardFileManager(null, null, StandardCharsets.UTF_8).getJavaFileObjects(src.toFile())).call();
    assertThat(ok).as("compiles as written:%n%s", diagnostics).isTrue();
    if (main == null) {
      return;
    }
    Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
        classes + File.pathSeparator + cp, main).directory(ROOT.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("finishes").isTrue();
    assertThat(p.exitValue()).as("runs; output:%n%s", out).isZero();
    assertThat(out).isNotBlank();
  }

  /** Each import of {@code code} is in one of the project's files, and its other lines follow one another there. */
  private static void isCodeOfTheConsumerBuild(Path project, String code) throws IOException {
    assertThat(project).as("consumer build").isDirectory();
    List<List<String>> files = new ArrayList<>();
    try (Stream<Path> s = Files.walk(project.resolve("src"))) {
      for (Path f : s.filter(f -> f.toString().endsWith(".java")).sorted().toList()) {
        files.add(Files.readAllLines(f, StandardCharsets.UTF_8).stream().map(String::strip)
            .filter(l -> !l.isEmpty()).toList());
      }
    }
    List<String> imports = new ArrayList<>();
    List<String> lines = new ArrayList<>();
    for (String line : code.split("\n")) {
      String l = line.strip();
      if (!l.isEmpty()) {
        (l.startsWith("import ") ? imports : lines).add(l);
      }
    }
    for (List<String> file : files) {
      if (file.containsAll(imports) && inOrder(lines, file)) {
        return;
      }
    }
    throw new AssertionError("README's example is not code of " + project + " (each line in that order in one"
        + " of its files, the imports anywhere there):\n" + code);
  }

  private static boolean inOrder(List<String> lines, List<String> file) {
    int at = 0;
    for (String l : lines) {
      while (at < file.size() && !file.get(at).equals(l)) {
        at++;
      }
      if (at == file.size()) {
        return false;
      }
      at++;
    }
    return true;
  }
}
