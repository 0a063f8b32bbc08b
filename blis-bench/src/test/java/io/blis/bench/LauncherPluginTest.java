package io.blis.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.DisabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code ./blis} launcher loads a user's plugin jar named by {@code BLIS_CLASSPATH}: a latency
 * model provider compiled here, packed in a jar with its {@code META-INF/services} entry, is found
 * by name and times the run. This module is built after blis-cli (a test dependency), so its
 * packaged jar, which the launcher runs, is there.
 */
@DisabledOnOs(OS.WINDOWS)
class LauncherPluginTest {

  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

  private static final String PROVIDER = """
      package com.example.plugin;

      import io.blis.api.BatchView;
      import io.blis.api.LatencyModel;
      import io.blis.api.LatencyModelProvider;
      import io.blis.api.ProviderContext;
      import io.blis.api.RequestView;

      public final class FixedStepProvider implements LatencyModelProvider {
        @Override public String name() { return "launcher-test-fixed-step"; }
        @Override public String description() { return "every step takes 7000 us"; }
        @Override public LatencyModel create(ProviderContext context) {
          return new LatencyModel() {
            @Override public long stepTime(BatchView batch) { return 7000; }
            @Override public long queueingTime(RequestView request) { return 0; }
            @Override public long outputTokenProcessingTime() { return 0; }
            @Override public long schedulingProcessingTime() { return 0; }
            @Override public long preemptionProcessingTime() { return 0; }
          };
        }
      }
      """;

  @TempDir Path tmp;

  private record Result(int code, String out, String err) {}

  private Result launch(String classpath, String... args) throws IOException, InterruptedException {
    List<String> command = new java.util.ArrayList<>(List.of(ROOT.resolve("blis").toString()));
    command.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(command).directory(tmp.toFile());
    pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
    pb.environment().remove("BLIS_JAVA_OPTS");
    if (classpath == null) {
      pb.environment().remove("BLIS_CLASSPATH");
    } else {
      pb.environment().put("BLIS_CLASSPATH", classpath);
    }
    Path out = tmp.resolve("out.txt");
    Path err = tmp.resolve("err.txt");
    Process p = pb.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
    assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
    return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
        Files.readString(err, StandardCharsets.UTF_8));
  }

  /** Compiles the provider against blis-api and packs it, with its service entry, into a jar. */
  private Path pluginJar() throws IOException {
    Path src = tmp.resolve("src/com/example/plugin/FixedStepProvider.java");
    Files.createDirectories(src.getParent());
    Files.writeString(src, PROVIDER);
    Path classes = tmp.resolve("classes");
    Files.createDirectories(classes);
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    int code = javac.run(null, null, null, "-d", classes.toString(), "-cp",
        ROOT.resolve("blis-api/target/classes").toString(), src.toString());
    assertThat(code).as("the provider compiles").isZero();
    Path jar = tmp.resolve("plugins/my-plugins.jar");
    Files.createDirectories(jar.getParent());
    try (JarOutputStream j = new JarOutputStream(Files.newOutputStream(jar))) {
      j.putNextEntry(new JarEntry("META-INF/services/io.blis.api.LatencyModelProvider"));
      j.write("com.example.plugin.FixedStepProvider\n".getBytes(StandardCharsets.UTF_8));
      j.closeEntry();
      try (var files = Files.walk(classes)) {
        for (Path f : files.filter(Files::isRegularFile).toList()) {
          j.putNextEntry(new JarEntry(classes.relativize(f).toString().replace('\\', '/')));
          j.write(Files.readAllBytes(f));
          j.closeEntry();
        }
      }
    }
    return jar;
  }

  @Test
  void theLauncherFindsAPluginOnBlisClasspath() throws Exception {
    Path jar = pluginJar();
    String[] run = {"run", "--latency-model", "launcher-test-fixed-step", "--num-requests", "3", "--rate", "1",
        "--output-tokens", "4", "--output-tokens-stdev", "0"};
    Result without = launch(null, run);
    assertThat(without.code()).isEqualTo(2);
    assertThat(without.err()).contains("launcher-test-fixed-step");

    for (String classpath : List.of(jar.toString(), jar.getParent() + "/*")) {
      Result with = launch(classpath, run);
      assertThat(with.code()).as(classpath + ": " + with.err()).isZero();
      // every step 7 ms: each inter-token time is exactly one step
      com.fasterxml.jackson.databind.JsonNode itl = new com.fasterxml.jackson.databind.ObjectMapper()
          .readTree(with.out()).at("/overall/itl_ms");
      assertThat(itl.get("count").asInt()).as(classpath).isEqualTo(9);
      assertThat(itl.get("mean").asDouble()).as(classpath).isEqualTo(7.0);
      assertThat(itl.get("p99").asDouble()).as(classpath).isEqualTo(7.0);
    }
  }
}
