package io.blis.latency.coeff;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.blis.api.Coefficients;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CoefficientFilesTest {

  @TempDir Path dir;

  @Test
  void loadsYaml() throws IOException {
    Path f = write("c.yaml", """
        version: 1
        latency_model: blackbox
        description: test
        alpha: [1, 2.5, 3]
        beta: [4, 5, 6]
        scheduling_us: 7
        """);
    CoefficientFiles.CoefficientFile file = CoefficientFiles.read(f);
    assertThat(file.latencyModel()).isEqualTo("blackbox");
    Coefficients c = file.coefficients();
    assertThat(c.names()).containsExactly("alpha", "beta", "scheduling_us");
    assertThat(c.vector("alpha")).containsExactly(1, 2.5, 3);
    assertThat(c.vector("scheduling_us")).containsExactly(7);
    assertThat(c.source()).isEqualTo(f.toString());
  }

  @Test
  void loadsJson() throws IOException {
    Path f = write("c.json", "{\"version\": 1, \"beta\": [1e3, 0.5]}");
    assertThat(CoefficientFiles.load(f).vector("beta")).containsExactly(1000, 0.5);
  }

  @Test
  void errorsNameFileAndKey() throws IOException {
    Path noVersion = write("a.yaml", "alpha: [1]\n");
    assertThatThrownBy(() -> CoefficientFiles.load(noVersion))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(noVersion.toString())
        .hasMessageContaining("'version'");
    Path v2 = write("b.yaml", "version: 2\nalpha: [1]\n");
    assertThatThrownBy(() -> CoefficientFiles.load(v2)).hasMessageContaining("reads version 1");
    Path text = write("c.yaml", "version: 1\nbeta: [1, x, 3]\n");
    assertThatThrownBy(() -> CoefficientFiles.load(text))
        .hasMessageContaining(text.toString())
        .hasMessageContaining("key 'beta' entry 1 must be a number");
    Path nan = write("d.yaml", "version: 1\nbeta: [1, 1.0e999]\n");
    assertThatThrownBy(() -> CoefficientFiles.load(nan))
        .hasMessageContaining("key 'beta' entry 1 must be finite");
    Path empty = write("e.yaml", "version: 1\nbeta: []\n");
    assertThatThrownBy(() -> CoefficientFiles.load(empty))
        .hasMessageContaining("key 'beta' must be a non-empty list");
    Path missing = dir.resolve("nope.yaml");
    assertThatThrownBy(() -> CoefficientFiles.load(missing))
        .hasMessageContaining(missing.toString()).hasMessageEndingWith("no such file");
  }

  @Test
  void aliasesDuplicatesEmptyFilesAndDirectoriesAreClearErrors() throws IOException {
    Path alias = write("alias.yaml", "version: 1\nalpha: &a [1, 2, 3]\nbeta: *a\n");
    assertThatThrownBy(() -> CoefficientFiles.load(alias)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage(alias + ", line 2, column 8: YAML anchor '&a' is not supported: write the value out where"
            + " it is used (anchors and aliases are refused)");
    Path dup = write("dup.yaml", "version: 1\nalpha: [1]\nalpha: [2]\n");
    assertThatThrownBy(() -> CoefficientFiles.load(dup)).hasMessage(dup + ", line 3, column 1: duplicate key 'alpha'");
    Path empty = write("empty.yaml", "# nothing here\n");
    assertThatThrownBy(() -> CoefficientFiles.load(empty))
        .hasMessageStartingWith(empty + ": the coefficient file is empty; expected 'version: 1'");
    assertThatThrownBy(() -> CoefficientFiles.load(dir))
        .hasMessage(dir + ": cannot read coefficient file: is a directory, expected a file");
  }

  @Test
  void parsesInline() {
    Coefficients c = CoefficientFiles.parseInline("alpha=1,2,3; beta = 4, 5.5 ,6");
    assertThat(c.vector("alpha")).containsExactly(1, 2, 3);
    assertThat(c.vector("beta")).containsExactly(4, 5.5, 6);
  }

  @Test
  void malformedInlineGivesOneClearMessage() {
    assertThatThrownBy(() -> CoefficientFiles.parseInline("alpha=1,x,3"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("value 1 of 'alpha' ('x') is not a number")
        .hasMessageContaining("alpha=1,2,3;beta=4,5,6");
    assertThatThrownBy(() -> CoefficientFiles.parseInline("alpha"))
        .hasMessageContaining("'alpha' is not name=values");
    assertThatThrownBy(() -> CoefficientFiles.parseInline("alpha=1,,2"))
        .hasMessageContaining("value 1 of 'alpha' ('') is not a number");
    assertThatThrownBy(() -> CoefficientFiles.parseInline("alpha=1;alpha=2"))
        .hasMessageContaining("given twice");
    assertThatThrownBy(() -> CoefficientFiles.parseInline("beta=NaN"))
        .hasMessageContaining("must be finite");
    assertThatThrownBy(() -> CoefficientFiles.parseInline(" ")).hasMessageContaining("empty");
  }

  @Test
  void inlineTextQuotedInAMessageIsCutAndKeptOnOneLine() {
    String file = "version: 1\n" + "alpha: [1, 2, 3]\n".repeat(10);
    assertThatThrownBy(() -> CoefficientFiles.parseInline(file))
        .hasMessage("inline coefficients 'version: 1\\u000Aalpha: [1, 2, 3]\\u000Aalpha: [1, 2, 3]\\u000Aalpha: [1, 2, 3...':"
            + " 'version: 1\\u000Aalpha: [1, 2, 3]\\u000Aalpha: [1, 2, 3]\\u000Aalpha: [1, 2, 3...' is not"
            + " name=values; expected name=v1,v2,...;name=v1,... (e.g. alpha=1,2,3;beta=4,5,6)");
    assertThatThrownBy(() -> CoefficientFiles.parseInline("alpha=1,\u2028x"))
        .hasMessageContaining("('\\u2028x') is not a number");
  }

  private Path write(String name, String text) throws IOException {
    Path f = dir.resolve(name);
    Files.writeString(f, text);
    return f;
  }
}
