package io.blis.engine.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** File checks shared by the commands; failures name the flag and the path. */
final class Cli {

  private Cli() {}

  /** Fails with a message naming {@code flag} unless {@code file} is a readable regular file. */
  static Path requireFile(String flag, Path file) {
    if (!Files.isRegularFile(file)) {
      throw new IllegalArgumentException(flag + ": no such file '" + file + "'");
    }
    if (!Files.isReadable(file)) {
      throw new IllegalArgumentException(flag + ": cannot read '" + file + "'");
    }
    return file;
  }

  /** Creates the parent directories of an output file named by {@code flag}; returns the file. */
  static Path parentsCreated(String flag, Path file) {
    Path parent = file.toAbsolutePath().getParent();
    try {
      if (parent != null) {
        Files.createDirectories(parent);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(flag + ": cannot create " + parent + ": " + e.getMessage(), e);
    }
    return file;
  }

  /**
   * Appends a field to a pretty-printed JSON object without touching the rest of its text:
   * {@code "key" : value} before the closing brace, indented like the object's other fields.
   */
  static String appendField(String json, String key, com.fasterxml.jackson.databind.JsonNode value) {
    String body = json.stripTrailing();
    if (!body.endsWith("}")) {
      throw new IllegalStateException("not a JSON object");
    }
    String rendered;
    try {
      rendered = new com.fasterxml.jackson.databind.ObjectMapper()
          .writer(new com.fasterxml.jackson.core.util.DefaultPrettyPrinter()).writeValueAsString(value);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException("cannot render " + key, e);
    }
    String head = body.substring(0, body.length() - 1).stripTrailing();
    boolean empty = head.endsWith("{");
    return head + (empty ? "\n" : ",\n") + "  \"" + key + "\" : " + rendered.replace("\n", "\n  ") + "\n}\n";
  }
}
