package io.blis.latency.coeff;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class InputTreesTest {

  private static void fails(String yaml, String... expected) {
    assertThatThrownBy(() -> InputTrees.yaml(yaml, "f.yaml")).isInstanceOf(IllegalArgumentException.class)
        .satisfies(e -> assertThat(e.getMessage()).startsWith("f.yaml").contains(expected).doesNotContain("\n")
            .doesNotContain("in 'reader'").doesNotContain("Source: ").doesNotContain("com.fasterxml"));
  }

  @Test
  void readsTheSameTreeAsJacksonForPlainFiles() throws Exception {
    String yaml = "version: 1\nname: x\nlist: [1, 2.5, -3, 1e300, 12345678901, 123456789012345678901]\n"
        + "nested: {a: true, b: null, c: 'text'}\n";
    JsonNode expected = new ObjectMapper(new YAMLFactory()).readTree(yaml);
    assertThat(InputTrees.yaml(yaml, "f.yaml")).isEqualTo(expected);
    String json = "{\"a\": [1, 2.5, {\"b\": \"c\"}], \"d\": null}";
    assertThat(InputTrees.json(json, "f.json")).isEqualTo(new ObjectMapper().readTree(json));
  }

  @Test
  void anEmptyDocumentIsNull() {
    for (String empty : new String[] {"", "# only a comment\n", "~\n", "---\n", "null\n"}) {
      assertThat(InputTrees.yaml(empty, "f.yaml")).as(empty).isNull();
    }
    assertThat(InputTrees.json("  \n", "f.json")).isNull();
  }

  @Test
  void anchorsAliasesDuplicatesAndSecondDocumentsAreRefusedWithTheirPlace() {
    fails("a: &x [1]\nb: 2\n", "f.yaml, line 1, column 4: YAML anchor '&x' is not supported");
    fails("a: [1]\nb: *x\n", "f.yaml, line 2, column 4: YAML alias '*x' is not supported");
    fails("base: &b {x: 1}\nother:\n  <<: *b\n", "YAML anchor '&b'");
    fails("a: 1\nb: 2\na: 3\n", "f.yaml, line 3, column 1: duplicate key 'a'");
    fails("a: 1\n---\nb: 2\n", "f.yaml, line 3, column 1: expected a single document");
  }

  @Test
  void syntaxErrorsPointAtTheProblemWithoutParserInternals() {
    fails("a: [1, 2\n", "f.yaml, line 2, column 1: not valid YAML: expected ',' or ']', but got <stream end>"
        + " (while parsing a flow sequence that starts at line 1, column 4)");
    fails("a: b: c\n", "f.yaml, line 1, column 5: not valid YAML: mapping values are not allowed here");
    assertThatThrownBy(() -> InputTrees.json("{\"a\": [1,\n", "f.json"))
        .hasMessage("f.json, line 2, column 1: not valid JSON: Unexpected end-of-input within/between Array"
            + " entries");
    assertThatThrownBy(() -> InputTrees.json("{\"a\": 1} {\"b\": 2}", "f.json"))
        .hasMessageContaining("f.json, line 1, column 10: expected a single document");
  }

  @Test
  void unreadableFilesSayWhy(@TempDir Path dir) throws Exception {
    assertThatThrownBy(() -> InputTrees.readText(dir.resolve("nope.yaml"), "coefficient file"))
        .hasMessage(dir.resolve("nope.yaml") + ": cannot read coefficient file: no such file");
    assertThatThrownBy(() -> InputTrees.readText(dir, "coefficient file"))
        .hasMessage(dir + ": cannot read coefficient file: is a directory, expected a file");
    Path latin1 = dir.resolve("latin1.yaml");
    Files.write(latin1, new byte[] {'a', ':', ' ', (byte) 0xe9, '\n'});
    assertThatThrownBy(() -> InputTrees.readText(latin1, "coefficient file"))
        .hasMessage(latin1 + ": cannot read coefficient file: not UTF-8 text");
  }

  @Test
  void aFileFarLargerThanSuchFilesIsRefusedBeforeFillingTheMemory(@TempDir Path dir) throws Exception {
    Path big = Files.writeString(dir.resolve("big.yaml"), "version: 1\n".repeat(20));
    assertThat(InputTrees.readText(big, "coefficient file", 220)).startsWith("version: 1");
    assertThatThrownBy(() -> InputTrees.readText(big, "coefficient file", 219))
        .hasMessage(big + ": cannot read coefficient file: more than 219 bytes, far more than such a"
            + " file holds (is it the right file?)");
    Path zeros = Path.of("/dev/zero");
    if (Files.isReadable(zeros)) {
      assertThatThrownBy(() -> InputTrees.readText(zeros, "policy bundle"))
          .hasMessageContaining("/dev/zero: cannot read policy bundle: more than " + InputTrees.MAX_FILE_BYTES);
    }
  }

  @Test
  void aLineSeparatorTheParserQuotesFromTheInputIsEscaped() {
    assertThatThrownBy(() -> InputTrees.json("[\u2028]", "f.json"))
        .satisfies(e -> assertThat(e.getMessage()).startsWith("f.json, line 1, column 2: not valid JSON:")
            .contains("'\\u2028' (code 8232").doesNotContain("\u2028"));
  }

  /** The parser's nesting limit is said in the input's terms, without the library's method name. */
  @Test
  void theNestingLimitIsNamedWithoutTheLibrarysName() {
    String deep = "[".repeat(1200) + "]".repeat(1200);
    assertThatThrownBy(() -> new ObjectMapper().readTree(deep))
        .isInstanceOfSatisfying(com.fasterxml.jackson.core.JacksonException.class, e ->
            assertThat(InputTrees.message(e)).startsWith("Document nesting depth (1001) exceeds the maximum allowed (1000)")
                .doesNotContain("StreamReadConstraints").doesNotContain("`"));
  }
}
