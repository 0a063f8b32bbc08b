package io.blis.engine.fuzz;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.UncheckedIOException;
import org.junit.jupiter.api.Test;

/** The property the fuzz targets check refuses what it should and lets the rest through. */
class OneLineErrorsTest {

  private static OneLineErrors.Step throwing(RuntimeException e) {
    return () -> {
      throw e;
    };
  }

  @Test
  void aResultOrACleanLineNamingTheFilePasses() throws Exception {
    assertThat(OneLineErrors.accepted("x", "f.yaml", () -> { })).isTrue();
    assertThat(OneLineErrors.accepted("x", "f.yaml",
        throwing(new IllegalArgumentException("f.yaml, line 1, column 1: expected a mapping")))).isFalse();
    assertThat(OneLineErrors.accepted("x", null,
        throwing(new UncheckedIOException("cannot read", new IOException("disk"))))).isFalse();
  }

  @Test
  void aWordOfTheInputQuotedBackIsNotALeak() throws Exception {
    assertThat(OneLineErrors.accepted("router: {policy: java.Source}", "f.yaml",
        throwing(new IllegalArgumentException("f.yaml: unknown router 'java.Source'")))).isFalse();
    assertThat(OneLineErrors.accepted("key: in 'reader", "f.yaml",
        throwing(new IllegalArgumentException("f.yaml: unknown key 'in 'reader'")))).isFalse();
    assertThat(OneLineErrors.accepted("in\n'reader", "f.yaml",
        throwing(new IllegalArgumentException("f.yaml: expected a mapping, got 'in 'reader'")))).isFalse();
  }

  @Test
  void everyOtherRefusalIsAFinding() {
    assertThatThrownBy(() -> OneLineErrors.accepted("x", "f.yaml",
        throwing(new IllegalArgumentException("f.yaml: two\nlines")))).hasMessageContaining("more than one line");
    assertThatThrownBy(() -> OneLineErrors.accepted("x", "f.yaml",
        throwing(new IllegalArgumentException("expected a mapping")))).hasMessageContaining("does not name");
    assertThatThrownBy(() -> OneLineErrors.accepted("x", "f.yaml",
        throwing(new IllegalArgumentException(" ")))).hasMessageContaining("without a message");
    assertThatThrownBy(() -> OneLineErrors.accepted("0b1", null,
        throwing(new NumberFormatException("For input string: \"0b1\"")))).hasMessageContaining("number parser");
    assertThatThrownBy(() -> OneLineErrors.accepted("{", "f.json", throwing(new IllegalArgumentException(
        "f.json: Unexpected end [Source: REDACTED; line: 1]")))).hasMessageContaining("leaks 'Source:'");
    assertThatThrownBy(() -> OneLineErrors.accepted("x", null, throwing(new IllegalStateException("bug"))))
        .isInstanceOf(IllegalStateException.class);
  }
}
