package io.blis.workload.trace;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPInputStream;

/** Reads a text file (gzip when its name ends in .gz) line by line, counting lines from 1. */
final class LineReader implements AutoCloseable {

  final Path file;
  private final BufferedReader reader;
  private int lineNo;

  LineReader(Path file) {
    this.file = file;
    try {
      InputStream raw = Files.newInputStream(file);
      InputStream in = file.toString().endsWith(".gz") ? new GZIPInputStream(raw, 1 << 16) : raw;
      this.reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8), 1 << 16);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file + ": " + e.getMessage(), e);
    }
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
      }
      return line;
    } catch (IOException e) {
      throw new UncheckedIOException(
          "cannot read " + file + " after line " + lineNo + ": " + e.getMessage(), e);
    }
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
      throw new UncheckedIOException(e);
    }
  }
}
