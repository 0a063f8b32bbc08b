package io.blis.workload.trace;

import io.blis.workload.TextFiles;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;

/**
 * Reads a text file line by line, counting lines from 1, as {@link TextFiles#open} opens it (UTF-8,
 * gzip when it starts with the gzip signature, a byte-order mark skipped). Errors name the file and
 * line.
 */
final class LineReader implements AutoCloseable {

  final Path file;
  private final BufferedReader reader;
  private int lineNo;

  LineReader(Path file) {
    this.file = file;
    this.reader = TextFiles.open(file);
  }

  /** Number of the line last returned. */
  int lineNo() {
    return lineNo;
  }

  /** The next line (blank lines included), or null at the end. */
  String line() {
    try {
      String line = reader.readLine();
      if (line != null) {
        lineNo++;
        if (line.indexOf(TextFiles.REPLACEMENT) >= 0) {
          close();
          throw TextFiles.notUtf8(file, lineNo);
        }
      }
      return line;
    } catch (IOException e) {
      close();
      throw new UncheckedIOException(
          file + ": cannot read after line " + lineNo + ": " + TextFiles.reason(e), e);
    }
  }

  /**
   * The first line, which must exist and be text; {@code expected} says what it should be in the
   * error for an empty file.
   */
  String firstLine(String expected) {
    String first = line();
    if (first == null) {
      close();
      throw new IllegalArgumentException(file + ": the file is empty, expected " + expected);
    }
    int bad = TextFiles.firstControlCharacter(first);
    if (bad >= 0) {
      close();
      throw TextFiles.controlCharacter(file + ":1:" + (bad + 1), first.charAt(bad));
    }
    return first;
  }

  /** The next non-blank line, or null at the end. */
  String nonBlankLine() {
    String line;
    do {
      line = line();
    } while (line != null && line.isBlank());
    return line;
  }

  /** An error located at the line last returned. */
  IllegalArgumentException error(String message) {
    return new IllegalArgumentException(file + ":" + lineNo + ": " + message);
  }

  @Override
  public void close() {
    try {
      reader.close();
    } catch (IOException e) {
      throw new UncheckedIOException(file + ": cannot close: " + TextFiles.reason(e), e);
    }
  }
}
