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
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every Java example of README.md compiles as written, with its own imports, against the
 * project's modules; an example made of statements also runs (from the repository root, where its
 * relative paths point) and ends normally.
 */
class ReadmeJavaExamplesTest {

  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  private static final Pattern BLOCK = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL);
  private static final Pattern CLASS = Pattern.compile("public (?:final )?class (\\w+)");

  @TempDir Path tmp;

  static Stream<String> examples() throws IOException {
    String readme = Files.readString(ROOT.resolve("README.md"), StandardCharsets.UTF_8);
    List<String> out = new ArrayList<>();
    Matcher m = BLOCK.matcher(readme);
    while (m.find()) {
      out.add(m.group(1));
    }
    return out.stream();
  }

  @ParameterizedTest(name = "example {index}")
  @MethodSource("examples")
  void compilesAsWrittenAndRuns(String code) throws Exception {
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
}
