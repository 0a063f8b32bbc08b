package io.blis.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * docs/vllm-parity.md stays true: every test a row names exists in a parity test class, a row
 * marked "differs" names a test kept {@code @Disabled("differs: ...")}, a row marked "passes" names
 * no disabled test, and the figures table counts the rows as they are.
 */
class ParityTableTest {

  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  private static final Pattern ROW = Pattern.compile("^\\| `(tests/[^`]+::\\w+)` \\| (.*) \\| (.*) \\|$");
  private static final Pattern GO_ROW = Pattern.compile("^\\| (INV-[^|]+|`[^`]+_test\\.go::\\w+`) \\| (.*) \\| (.*) \\|$");
  private static final Pattern NAME = Pattern.compile("`(?:[A-Z]\\w*#)?([a-z][A-Za-z0-9]+)`");
  private static final Pattern GO_ALL = Pattern.compile(
      "^\\| go all \\| (\\d+) \\| (\\d+) \\| (\\d+) \\| (\\d+) \\| (\\d+) \\|$");
  private static final Pattern ALL = Pattern.compile(
      "^\\| all \\| \\| (\\d+) \\| (\\d+) \\| (\\d+) \\| (\\d+) \\| (\\d+) \\|$");

  /** Test method name -> whether it is disabled as a difference, over every parity test class. */
  private static Map<String, Boolean> parityTests() throws IOException {
    Map<String, Boolean> tests = new HashMap<>();
    List<Path> files;
    try (Stream<Path> s = Files.walk(ROOT, 12)) {
      files = s.filter(p -> p.toString().contains("/src/test/java/") && p.toString().endsWith("Test.java")
          && !p.toString().contains("/target/")).toList();
    }
    assertThat(files.stream().filter(p -> p.getFileName().toString().contains("Parity")).count())
        .as("parity test classes").isGreaterThanOrEqualTo(10);
    Pattern method = Pattern.compile("^\\s+(?:public |protected |private )?void (\\w+)\\(");
    for (Path f : files) {
      List<String> lines = Files.readAllLines(f);
      for (int i = 0; i < lines.size(); i++) {
        Matcher m = method.matcher(lines.get(i));
        if (m.find()) {
          boolean disabled = false;
          for (int j = Math.max(0, i - 4); j < i; j++) {
            disabled |= lines.get(j).contains("@Disabled(\"differs");
          }
          tests.merge(m.group(1), disabled, Boolean::logicalOr);
        }
      }
    }
    return tests;
  }

  @Test
  void everyRowNamesRealTestsAndTheFiguresCountTheRows() throws IOException {
    List<String> lines = Files.readAllLines(ROOT.resolve("docs/vllm-parity.md"));
    Map<String, Boolean> tests = parityTests();
    int rows = 0;
    int passes = 0;
    int fixed = 0;
    int differs = 0;
    int notExpressible = 0;
    int[] all = null;
    int[] goAll = null;
    int[] go = new int[5];
    List<String> problems = new ArrayList<>();
    for (String line : lines) {
      Matcher all0 = ALL.matcher(line);
      if (all0.find()) {
        all = new int[5];
        for (int k = 0; k < 5; k++) {
          all[k] = Integer.parseInt(all0.group(k + 1));
        }
        continue;
      }
      Matcher g0 = GO_ALL.matcher(line);
      if (g0.find()) {
        goAll = new int[5];
        for (int k = 0; k < 5; k++) {
          goAll[k] = Integer.parseInt(g0.group(k + 1));
        }
        continue;
      }
      Matcher m = ROW.matcher(line);
      boolean vllm = m.find();
      if (!vllm) {
        m = GO_ROW.matcher(line);
        if (!m.find()) {
          continue;
        }
      }
      String status = m.group(3);
      List<String> named = new ArrayList<>();
      Matcher n = NAME.matcher(m.group(2));
      while (n.find()) {
        named.add(n.group(1));
      }
      for (String t : named) {
        if (!tests.containsKey(t)) {
          problems.add(m.group(1) + ": no parity test named " + t);
        }
      }
      boolean anyDisabled = named.stream().anyMatch(t -> tests.getOrDefault(t, false));
      if (status.startsWith("passes")) {
        if (named.isEmpty()) {
          problems.add(m.group(1) + ": passes but names no test");
        }
        if (anyDisabled) {
          problems.add(m.group(1) + ": passes but names a disabled test");
        }
      } else if (status.startsWith("differs")) {
        // a vLLM difference keeps a test asserting vLLM's expectation, disabled; a Go row's is a
        // documented design difference whose property part passes
        if (vllm && !named.isEmpty() && !anyDisabled) {
          problems.add(m.group(1) + ": differs but none of its tests is @Disabled(\"differs: ...\")");
        }
      } else if (!status.startsWith("not expressible") && !(!vllm && status.startsWith("not covered"))) {
        problems.add(m.group(1) + ": status is neither passes, differs nor not expressible: " + status);
      }
      if (!vllm) {
        go[0]++;
        go[status.startsWith("passes") ? 1 : status.startsWith("differs") ? 2
            : status.startsWith("not expressible") ? 3 : 4]++;
      } else {
        rows++;
        if (status.startsWith("passes")) {
          passes++;
          fixed += status.startsWith("passes (fixed") ? 1 : 0;
        } else if (status.startsWith("differs")) {
          differs++;
        } else {
          notExpressible++;
        }
      }
    }
    assertThat(problems).isEmpty();
    assertThat(rows).as("vLLM rows").isGreaterThanOrEqualTo(150);
    assertThat(all).as("the figures table's 'all' row").isNotNull();
    assertThat(all).containsExactly(rows, passes, fixed, differs, notExpressible);
    assertThat(goAll).as("the Go figures table's 'go all' row").isNotNull();
    assertThat(goAll).containsExactly(go);
    // at least 80% of the expressible cases pass
    assertThat(passes * 5).isGreaterThanOrEqualTo((passes + differs) * 4);
  }
}
