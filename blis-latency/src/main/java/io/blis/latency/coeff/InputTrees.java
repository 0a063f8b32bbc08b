package io.blis.latency.coeff;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLParser;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Locale;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;

/**
 * Reads the YAML and JSON files people write (coefficient files, interval ensembles, and in the
 * engine policy bundles, experiments files and validation results) to trees, with every problem
 * one line naming the file, the line and column, and what was expected; never a parser's
 * internals.
 *
 * <p>Stricter than a plain {@code readTree}: one document only; a key given twice is an error
 * (not the last one silently winning); YAML anchors and aliases ({@code &name}, {@code *name},
 * {@code <<: *name}) are refused, because a plain tree reader would take an alias's name as the
 * value. Files are read whole; these are small hand-written files.
 */
public final class InputTrees {

  /**
   * Largest file read whole: 256 MiB, far above any file these are (a few kilobytes; the
   * ground-truth experiments file is 60 kB), so that a wrong path (a log, a device such as
   * {@code /dev/zero}) is refused instead of filling the memory.
   */
  public static final int MAX_FILE_BYTES = 256 << 20;

  private static final YAMLFactory YAML = new YAMLFactory();
  private static final JsonFactory JSON = new JsonFactory();
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
  /** Characters a one-line message must not hold as they are. */
  private static final Pattern CONTROL = Pattern.compile("[\\p{Cntrl}\\u0080-\\u009F\\u2028\\u2029]");
  /** How Jackson names a location inside a message: "[Source: ...; line: 3, column: 7]". */
  private static final Pattern SOURCE_REF =
      Pattern.compile("\\s*\\[Source: [^\\]]*?; line: (\\d+), column: (\\d+)\\]");

  private InputTrees() {}

  /**
   * The text of {@code file} (without a leading byte-order mark), or one clear error: {@code FILE: no such file}, {@code FILE: is a
   * directory, expected a file}, {@code FILE: cannot read (permission denied)}.
   *
   * @param what what the file is, for the message (e.g. "coefficient file")
   */
  public static String readText(Path file, String what) {
    return readText(file, what, MAX_FILE_BYTES);
  }

  /** {@link #readText(Path, String)} of a file of at most {@code maxBytes} bytes. */
  static String readText(Path file, String what, int maxBytes) {
    byte[] bytes;
    try (InputStream in = Files.newInputStream(file)) {
      // a size read up front would say nothing of a device or a pipe: read one byte past the limit
      bytes = in.readNBytes(maxBytes + 1);
    } catch (IOException e) {
      throw new IllegalArgumentException(file + ": cannot read " + what + ": " + reason(file, e), e);
    }
    if (bytes.length > maxBytes) {
      throw new IllegalArgumentException(file + ": cannot read " + what + ": more than " + maxBytes
          + " bytes, far more than such a file holds (is it the right file?)");
    }
    String text;
    try {
      text = StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(bytes)).toString();
    } catch (CharacterCodingException e) {
      throw new IllegalArgumentException(file + ": cannot read " + what + ": not UTF-8 text", e);
    }
    return text.startsWith("\uFEFF") ? text.substring(1) : text; // a UTF-8 byte-order mark
  }

  /**
   * Why {@code file} could not be opened or read ({@code e}), in words: "no such file", "is a
   * directory, expected a file", "permission denied", else the system's message.
   */
  private static String reason(Path file, IOException e) {
    if (e instanceof NoSuchFileException || !Files.exists(file)) {
      return "no such file";
    }
    if (Files.isDirectory(file)) {
      return "is a directory, expected a file";
    }
    if (e instanceof AccessDeniedException || !Files.isReadable(file)) {
      return "permission denied";
    }
    return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
  }

  /**
   * Parses YAML (JSON is YAML) to a tree; null for an empty document (nothing, or only comments,
   * or {@code ~}).
   *
   * @param source names the text in messages (usually the file)
   * @throws IllegalArgumentException {@code SOURCE, line L, column C: ...} for invalid YAML, a
   *     second document, a duplicate key, an anchor or an alias
   */
  public static JsonNode yaml(String text, String source) {
    return parse(YAML, text, source, "YAML");
  }

  /**
   * Parses JSON to a tree; null for an empty text.
   *
   * @throws IllegalArgumentException {@code SOURCE, line L, column C: ...} for invalid JSON, more
   *     than one value, or a duplicate key
   */
  public static JsonNode json(String text, String source) {
    return parse(JSON, text, source, "JSON");
  }

  /** {@code text} in the format of {@code factory} ({@code format} names it) to a tree. */
  private static JsonNode parse(JsonFactory factory, String text, String source, String format) {
    try (JsonParser p = factory.createParser(text)) {
      return document(p, source);
    } catch (JacksonException e) {
      throw new IllegalArgumentException(source + ", " + problem(e, "not valid " + format), e);
    } catch (IOException e) {
      throw new IllegalArgumentException(source + ": cannot read: " + e.getMessage(), e);
    }
  }

  /**
   * The place and the problem of a parser error without the parser's internals: {@code line L,
   * column C: WHAT: problem} (YAML errors point at the problem, with the construct it is in).
   */
  public static String problem(JacksonException e, String what) {
    if (e.getCause() instanceof MarkedYAMLException y && y.getProblemMark() != null) {
      Mark at = y.getProblemMark();
      String problem = y.getProblem() == null ? "" : y.getProblem().trim();
      String context = y.getContext() == null ? "" : y.getContext().trim();
      Mark from = y.getContextMark();
      if (!context.isEmpty()) {
        problem += " (" + context + (from == null ? "" : " that starts at line " + (from.getLine() + 1)
            + ", column " + (from.getColumn() + 1)) + ")";
      }
      return "line " + (at.getLine() + 1) + ", column " + (at.getColumn() + 1) + ": " + what + ": "
          + oneLine(problem);
    }
    JsonLocation at = e.getLocation();
    return (at == null ? "" : "line " + at.getLineNr() + ", column " + at.getColumnNr() + ": ") + what + ": "
        + message(e);
  }

  /**
   * A parser error's message without its location and without the parser's internals (a
   * location inside it reads "(line L, column C)").
   */
  public static String message(JacksonException e) {
    String message = e.getOriginalMessage() == null ? e.getClass().getSimpleName() : e.getOriginalMessage();
    // the parser's own limits, in the input's terms rather than the library's names
    message = LIMIT_NAME.matcher(message).replaceAll("$1");
    return oneLine(SOURCE_REF.matcher(message).replaceAll(" (line $1, column $2)")
        .replaceAll("\\s+", " ").trim());
  }

  /** ", from `StreamReadConstraints.getMaxNestingDepth()`" and the like after a limit's value. */
  private static final Pattern LIMIT_NAME = Pattern.compile("(\\d+), from `Stream(?:Read|Write)Constraints\\.[A-Za-z]+\\(\\)`");

  /** {@code value} as a one-line message quotes it: at most 60 characters, {@link #oneLine}. */
  public static String quote(String value) {
    return oneLine(value.length() > 60 ? value.substring(0, 60) + "..." : value);
  }

  /**
   * {@code text} for a one-line message: control characters and line separators (which a parser
   * may quote from the input) escaped as a backslash, {@code u} and four hex digits.
   */
  public static String oneLine(String text) {
    return CONTROL.matcher(text).replaceAll(m -> String.format(Locale.ROOT, "\\\\u%04X",
        (int) m.group().charAt(0)));
  }

  private static JsonNode document(JsonParser p, String source) throws IOException {
    if (p.nextToken() == null) {
      return null;
    }
    JsonNode root = value(p, source);
    if (p.nextToken() != null) {
      throw error(p, source, "expected a single document, found more after it");
    }
    return root.isNull() ? null : root;
  }

  private static JsonNode value(JsonParser p, String source) throws IOException {
    refuseAnchors(p, source);
    JsonToken t = p.currentToken();
    switch (t) {
      case START_OBJECT -> {
        ObjectNode o = NODES.objectNode();
        while (p.nextToken() == JsonToken.FIELD_NAME) {
          String key = p.currentName();
          JsonLocation keyAt = p.currentTokenLocation();
          p.nextToken();
          JsonNode v = value(p, source);
          if (o.has(key)) {
            throw new IllegalArgumentException(source + ", line " + keyAt.getLineNr() + ", column "
                + keyAt.getColumnNr() + ": duplicate key '" + oneLine(key) + "'");
          }
          o.set(key, v);
        }
        return o;
      }
      case START_ARRAY -> {
        ArrayNode a = NODES.arrayNode();
        while (p.nextToken() != JsonToken.END_ARRAY) {
          a.add(value(p, source));
        }
        return a;
      }
      case VALUE_STRING -> {
        return NODES.textNode(p.getText());
      }
      case VALUE_NUMBER_INT -> {
        return switch (p.getNumberType()) {
          case INT -> NODES.numberNode(p.getIntValue());
          case LONG -> NODES.numberNode(p.getLongValue());
          default -> NODES.numberNode(p.getBigIntegerValue());
        };
      }
      case VALUE_NUMBER_FLOAT -> {
        return NODES.numberNode(p.getDoubleValue());
      }
      case VALUE_TRUE -> {
        return NODES.booleanNode(true);
      }
      case VALUE_FALSE -> {
        return NODES.booleanNode(false);
      }
      case VALUE_NULL -> {
        return NODES.nullNode();
      }
      default -> throw error(p, source, "unexpected " + t);
    }
  }

  /**
   * Refuses a YAML anchor or alias at the parser's current token: a tree reader would take an
   * alias's name for its value, and expanding aliases unbounded is a known denial of service.
   */
  public static void refuseAnchors(JsonParser p, String source) {
    if (p instanceof YAMLParser y && (y.isCurrentAlias() || y.getCurrentAnchor() != null)) {
      String name;
      try {
        name = y.isCurrentAlias() ? "alias '*" + y.getText() + "'" : "anchor '&" + y.getCurrentAnchor() + "'";
      } catch (IOException e) {
        name = "anchors and aliases";
      }
      throw error(p, source, "YAML " + name + " is not supported: write the value out where it is used"
          + " (anchors and aliases are refused)");
    }
  }

  private static IllegalArgumentException error(JsonParser p, String source, String message) {
    JsonLocation at = p.currentTokenLocation();
    return new IllegalArgumentException(source + ", line " + at.getLineNr() + ", column " + at.getColumnNr()
        + ": " + message);
  }
}
