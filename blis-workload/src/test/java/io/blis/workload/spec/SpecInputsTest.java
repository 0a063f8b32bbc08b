package io.blis.workload.spec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import io.blis.workload.TestSupport;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Malformed workload specs: one line in this project's words naming the source, line, column and
 * key, never the binding library's wording; valid variants (a byte-order mark, JSON, a YAML flow
 * mapping) read as the plain YAML does.
 */
class SpecInputsTest {

  static final String BASE = """
      aggregate_rate: 5
      num_requests: 10
      clients:
        - id: a
          input: {type: gaussian, mean: 100, std: 10, min: 1, max: 200}
          output: {type: constant, value: 5}
      """;

  /** Words of Jackson and Java that must never reach a user. */
  static final List<String> LEAKS = List.of("`", "java.", "io.blis", "Jackson", "CoercionConfig",
      "StreamReadFeature", "Source:", "REDACTED", "JsonToken", "No content to map", "Cannot ",
      "through reference chain", "$", "Exception", "\n");

  static IllegalArgumentException parseFails(String text) {
    try {
      WorkloadSpec.parse(text, "s.yaml");
    } catch (IllegalArgumentException e) {
      for (String leak : LEAKS) {
        assertThat(e.getMessage()).as("leaks '%s'", leak).doesNotContain(leak);
      }
      assertThat(e.getMessage()).startsWith("s.yaml");
      return e;
    }
    throw new AssertionError("accepted: " + text);
  }

  static String edit(String from, String to) {
    assertThat(BASE).contains(from);
    return BASE.replace(from, to);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', quoteCharacter = '~', value = {
      "empty|EMPTY|s.yaml: the file is empty",
      "blank|BLANK|s.yaml: the file is empty",
      "comments only|COMMENT|s.yaml:2:1: the document is empty (nothing but comments)",
      "empty document|DASHES|s.yaml: the document is empty",
      "quoted number|aggregate_rate: 5=>aggregate_rate: \"5\"|s.yaml:1:1: at 'aggregate_rate': expected a number, got the text '5'",
      "list for a number|aggregate_rate: 5=>aggregate_rate: [1]|s.yaml:1:1: at 'aggregate_rate': expected a number, got a list",
      "fraction for an integer|num_requests: 10=>num_requests: 1.5|s.yaml:2:1: at 'num_requests': expected an integer, got 1.5",
      "integer overflow|max: 200=>max: 99999999999|s.yaml:5:57: at 'clients[0].input.max': expected an integer in [-2147483648, 2147483647], got 99999999999",
      "text for an integer|max: 200=>max: x|s.yaml:5:57: at 'clients[0].input.max': expected an integer, got the text 'x'",
      "boolean for an integer|num_requests: 10=>num_requests: true|s.yaml:2:1: at 'num_requests': expected an integer, got true",
      "number for a list|clients:=>clients: 5\\nx:|s.yaml:3:1: at 'clients': expected a list, got 5",
      "text for a mapping|input: {type: gaussian, mean: 100, std: 10, min: 1, max: 200}=>input: gauss|s.yaml:5:5: at 'clients[0].input': expected a mapping of keys to values (key: value), got the text 'gauss'",
      "list for a text|id: a=>id: [a]|s.yaml:4:5: at 'clients[0].id': expected a text value, got a list",
      "map key not an integer|output: {type: constant, value: 5}=>output: {type: empirical, probabilities: {abc: 1}}|at 'clients[0].output.probabilities': key 'abc' is not an integer",
      "list for a map|output: {type: constant, value: 5}=>output: {type: empirical, probabilities: [1, 2]}|at 'clients[0].output.probabilities': expected a mapping of keys to values, got a list",
      "duplicate key|num_requests: 10=>num_requests: 10\\nnum_requests: 11|s.yaml:3:1: key 'num_requests' appears twice",
      "two documents|clients:=>seed: 1\\n---\\nclients:|s.yaml",
      "unclosed flow sequence|ALL=>a: [1}|s.yaml:1:6: invalid YAML: expected ',' or ']', but got } (while parsing a flow sequence started at line 1, column 4)",
      "invalid JSON or flow YAML|ALL=>{a: [1}|s.yaml:1:2: invalid JSON: unexpected character ('a'): was expecting double-quote to start field name",
      "tab indentation|  - id: a=>\\t- id: a|s.yaml:4:3: invalid YAML: a tab where a token should start (indent YAML with spaces, not tabs) (while scanning for the next token)",
      "mapping in a scalar|aggregate_rate: 5=>aggregate_rate: 5: 6|s.yaml:1:18: invalid YAML: mapping values are not allowed here",
      "unterminated quote|aggregate_rate: 5=>aggregate_rate: '5|invalid YAML: found unexpected end of stream (while scanning a quoted scalar started at line 1, column 17)",
      "infinity|aggregate_rate: 5=>aggregate_rate: .inf|s.yaml:1:1: at 'aggregate_rate': malformed number '.inf'",
      "scalar document|ALL=>just text|s.yaml:1:1: expected a mapping of keys to values (key: value), got the text 'just text'",
      "list document|ALL=>- 1|s.yaml:1:1: expected a mapping of keys to values (key: value), got a list",
      "alias|num_requests: 10=>num_requests: *n|s.yaml:2:15: at 'num_requests': YAML aliases are not supported (*n): write the value out in full",
      "alias of a mapping|output: {type: constant, value: 5}=>output: *len|s.yaml:6:13: at 'clients[0].output': YAML aliases are not supported (*len)",
      "merge key|output: {type: constant, value: 5}=>output: {<<: {x: 1}, type: constant, value: 5}|unknown key '<<' in clients[0].output; expected one of",
      "control character|aggregate_rate: 5=>aggregate_rate: 5 # \u0001 x|s.yaml:1:21: contains the control character U+0001, expected text (is it a binary file?)",
      "aggregate rate too low|aggregate_rate: 5=>aggregate_rate: 1e-300|s.yaml:1:1: aggregate_rate must be at least 3.17e-08 requests per second (one per 365 days, the latest simulated time), got 1.0E-300",
      "timeout too long|id: a=>id: a\\n    timeout_s: 1e300|s.yaml:5:5: at 'clients[0]': timeout_s must be in [0, 31536000] seconds (365 days), got 1.0E300",
      "think time too long|id: a=>id: a\\n    session: {rounds: 2, think_time_s: 1e12}|s.yaml:5:26: at 'clients[0].session': think_time_s must be in [0, 31536000] seconds (365 days), got 1.0E12",
      "invalid JSON|ALL=>{\"aggregate_rate\": 5,|s.yaml:1:22: invalid JSON: unexpected end-of-input within/between Object entries"})
  void eachMalformedSpecIsOneCleanLine(String name, String change, String expected) {
    String text = switch (change) {
      case "EMPTY" -> "";
      case "BLANK" -> "  \n\n";
      case "COMMENT" -> "# nothing here\n";
      case "DASHES" -> "---\n";
      default -> {
        String[] parts = change.split("=>", 2);
        String to = parts[1].replace("\\n", "\n").replace("\\t", "\t");
        yield parts[0].equals("ALL") ? to : edit(parts[0], to);
      }
    };
    assertThat(parseFails(text).getMessage()).as(name).contains(expected);
  }

  @Test
  void anEmptyListElementIsNamed() {
    assertThat(parseFails(BASE.replace("  - id: a", "  - null\n  - id: a")).getMessage())
        .contains("clients[0] is empty, expected a client");
  }

  @Test
  void lengthsBeyondTheTokenBoundFailWhereTheyAreWritten() {
    assertThat(parseFails(edit("max: 200", "max: 2000000000")).getMessage())
        .isEqualTo("s.yaml:5:57: at 'clients[0].input': gaussian max must be at most 10000000 tokens"
            + " (the most tokens a request may have), got 2000000000");
    assertThat(parseFails(edit("value: 5", "value: 2000000000")).getMessage())
        .isEqualTo("s.yaml:6:5: at 'clients[0].output': constant length must be at least 1 token"
            + " and at most 10000000 (the most tokens a request may have), got 2000000000");
    assertThat(parseFails(edit("output: {type: constant, value: 5}",
        "output: {type: empirical, probabilities: {5: 0.5, 20000000: 0.5}}")).getMessage())
        .contains("empirical length must be in [1, 10000000] tokens");
    assertThat(parseFails(edit("id: a", "id: a\n    prefix_group: g\n    prefix_length: 10000000"))
        .getMessage()).startsWith("s.yaml:6:5: at 'clients[0]': prefix_length must be in [0, 9999999] tokens");
    assertThat(parseFails(edit("min: 1", "min: 20000000")).getMessage())
        .contains("gaussian min must be in [1, 10000000] tokens");
  }

  @Test
  void withoutAMaxALengthIsClampedToTheTokenBound() {
    WorkloadSpec spec = WorkloadSpec.parse(edit("output: {type: constant, value: 5}",
        "output: {type: exponential, mean: 1e12}"), "s.yaml");
    try (RequestSource s = spec.source()) {
      for (RequestSpec r : TestSupport.drain(s)) {
        assertThat(r.outputTokens()).isEqualTo(RequestSpec.MAX_TOKENS);
      }
    }
  }

  @Test
  void aWorkloadThatSendsNothingIsAnError() {
    WorkloadSpec beforeHorizon = WorkloadSpec.parse(edit("num_requests: 10", "horizon_s: 0.000001"), "h.yaml");
    assertThatThrownBy(beforeHorizon::source).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("the workload sends no request: every client's first arrival falls after the"
            + " horizon (1.0E-6 s) or after its last lifecycle window");
    WorkloadSpec window = WorkloadSpec.parse(edit("id: a", "id: a\n    lifecycle: [{start_s: 0, end_s: 0.000001}]"), "w.yaml");
    assertThatThrownBy(window::source).hasMessageStartingWith("the workload sends no request");
  }

  @Test
  void aRateTooLowForTheRequestsFailsWhenTheFirstUnreachableRequestIsPulled() {
    // 1e-6 requests/s: the mean gap is 11.6 days, so about the 32nd request is beyond 365 days.
    String slow = edit("aggregate_rate: 5", "aggregate_rate: 1e-6");
    WorkloadSpec spec = WorkloadSpec.parse(slow.replace("num_requests: 10", "num_requests: 100"), "r.yaml");
    try (RequestSource s = spec.source()) {
      int[] pulled = {0};
      assertThatThrownBy(() -> {
        while (s.next() != null) {
          pulled[0]++;
        }
      }).isInstanceOf(IllegalArgumentException.class)
          .hasMessage("client a: a request would arrive after the latest simulated time, 365 days:"
              + " its rate (1.0E-6 requests/s) is too low for the number of requests; raise the"
              + " rate, or lower the number of requests or the horizon");
      assertThat(pulled[0]).isBetween(15, 60);
    }
    // The same rate for fewer requests than fit is fine: nothing is generated past the last one.
    WorkloadSpec two = WorkloadSpec.parse(slow.replace("num_requests: 10", "num_requests: 1"), "r.yaml");
    try (RequestSource s = two.source()) {
      assertThat(TestSupport.drain(s)).hasSize(1);
    }
  }

  @Test
  void aClientRateBelowTheBoundNamesTheClient() {
    String spec = BASE + """
          - id: tiny
            rate_fraction: 1e-12
            input: {type: constant, value: 10}
            output: {type: constant, value: 5}
        """;
    assertThat(parseFails(spec).getMessage()).startsWith("s.yaml: client tiny (aggregate_rate x"
        + " rate_fraction / sum of rate fractions = 4.99").contains("poisson rate must be at"
        + " least 3.17e-08 requests per second");
  }

  @Test
  void aByteOrderMarkJsonAndFlowMappingsReadAsPlainYaml(@TempDir Path dir) throws IOException {
    WorkloadSpec plain = WorkloadSpec.parse(BASE, "s.yaml");
    Path bom = Files.writeString(dir.resolve("bom.yaml"), "\uFEFF" + BASE, StandardCharsets.UTF_8);
    assertThat(WorkloadSpec.load(bom)).isEqualTo(plain);
    assertThat(WorkloadSpec.parse("\uFEFF" + BASE, "s.yaml")).isEqualTo(plain);
    String json = "{\"aggregate_rate\": 5, \"num_requests\": 10, \"clients\": [{\"id\": \"a\","
        + " \"input\": {\"type\": \"gaussian\", \"mean\": 100, \"std\": 10, \"min\": 1, \"max\": 200},"
        + " \"output\": {\"type\": \"constant\", \"value\": 5}}]}";
    Path jsonBom = Files.writeString(dir.resolve("s.json"), "\uFEFF" + json, StandardCharsets.UTF_8);
    assertThat(WorkloadSpec.load(jsonBom)).isEqualTo(plain);
    String flow = json.replace("\"", "");
    assertThat(WorkloadSpec.parse(flow, "s.yaml")).isEqualTo(plain);
    // Anchors alone change nothing.
    assertThat(WorkloadSpec.parse(BASE.replace("id: a", "id: &name a"), "s.yaml")).isEqualTo(plain);
  }

  @Test
  void filesThatCannotBeSpecsSayWhatTheyAre(@TempDir Path dir) throws IOException {
    Path d = Files.createDirectory(dir.resolve("spec.yaml"));
    assertThatThrownBy(() -> WorkloadSpec.load(d)).hasMessage(d + ": is a directory, expected a file");
    Path missing = dir.resolve("nope.yaml");
    assertThatThrownBy(() -> WorkloadSpec.load(missing)).hasMessage(missing + ": no such file");
    Path bin = Files.write(dir.resolve("bin.yaml"), new byte[] {'a', ':', ' ', (byte) 0xC3, '\n', (byte) 0xFF});
    assertThatThrownBy(() -> WorkloadSpec.load(bin))
        .hasMessage(bin + ":1: not UTF-8 text (a binary file, or text in another encoding?)");
    Path big = Files.writeString(dir.resolve("big.yaml"), "#" + "x".repeat(3 * 1024 * 1024) + "\n");
    assertThatThrownBy(() -> WorkloadSpec.load(big)).hasMessageStartingWith(big + ": too large");
    Path empty = Files.writeString(dir.resolve("empty.yaml"), "");
    assertThatThrownBy(() -> WorkloadSpec.load(empty)).hasMessage(empty + ": the file is empty");
  }

  @Test
  void aLineBreakInAValueIsEscapedSoTheMessageStaysOneLine() {
    assertThat(parseFails(edit("type: gaussian", "type: \"gauss\\nian\"")).getMessage())
        .contains("unknown length distribution 'gauss\\u000Aian'");
    assertThat(parseFails(edit("id: a", "id: a\n    \"x\\ny\": 1")).getMessage())
        .contains("unknown key 'x\\u000Ay'");
  }
}
