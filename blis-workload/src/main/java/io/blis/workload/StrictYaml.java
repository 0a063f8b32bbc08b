package io.blis.workload;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.exc.InputCoercionException;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.core.exc.StreamReadException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.exc.InvalidFormatException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.exc.ValueInstantiationException;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLParser;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.file.Path;
import java.util.Collection;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;

/**
 * Strict binding of YAML (or JSON, which is YAML) configuration files to records with snake_case
 * keys: unknown keys, wrong types, fractional numbers for integers and validation failures in the
 * records' constructors all become one {@link IllegalArgumentException} naming the source, line,
 * column and key path, in the words of this project (never the binding library's).
 *
 * <p>YAML anchors ({@code &name}) are allowed, but aliases ({@code *name}) are refused with the
 * line of the alias: the YAML reader does not expand them (it would read {@code *name} as the text
 * "name"), and every value is read by one reader with one set of rules. A leading byte-order mark
 * is ignored.
 */
public final class StrictYaml {

  private static final ObjectMapper YAML = configure(YAMLMapper.builder(new YAMLFactory()));
  private static final ObjectMapper JSON = configure(JsonMapper.builder());

  private StrictYaml() {}

  private static ObjectMapper configure(
      com.fasterxml.jackson.databind.cfg.MapperBuilder<?, ?> builder) {
    ObjectMapper m = builder
        .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
        .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
        .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
        .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY)
        .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
        .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
        .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
        .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
        .build();
    m.coercionConfigDefaults().setCoercion(CoercionInputShape.String, CoercionAction.Fail);
    return m;
  }

  /**
   * Reads {@code file} (JSON when its text starts with '{' and is valid JSON, YAML otherwise).
   *
   * @throws IllegalArgumentException naming the file (and line and column when there are some) for
   *     a file that is missing, a directory, not UTF-8 text, too large, or does not bind
   */
  public static <T> T load(Path file, Class<T> type) {
    return parse(TextFiles.readConfig(file), file.toString(), type);
  }

  /** Binds {@code text} (YAML or JSON) to {@code type}; {@code sourceName} names it in errors. */
  public static <T> T parse(String text, String sourceName, Class<T> type) {
    text = TextFiles.stripBom(text);
    if (text.isBlank()) {
      throw new IllegalArgumentException(sourceName + ": the file is empty");
    }
    if (text.length() > TextFiles.MAX_CONFIG_CHARS) {
      throw new IllegalArgumentException(sourceName + ": more than " + TextFiles.MAX_CONFIG_CHARS
          + " characters, too large for a configuration file");
    }
    int bad = TextFiles.firstControlCharacter(text);
    if (bad >= 0) {
      throw TextFiles.controlCharacter(sourceName + ":" + position(text, bad), text.charAt(bad));
    }
    JsonSyntax notJson = null;
    if (text.stripLeading().startsWith("{")) {
      try {
        return bind(JSON, text, sourceName, type);
      } catch (JsonSyntax e) {
        // Perhaps a YAML flow mapping such as {a: 1}: read as YAML below.
        notJson = e;
      }
    }
    refuseAliases(text, sourceName);
    try {
      return bind(YAML, text, sourceName, type);
    } catch (JsonSyntax e) {
      if (notJson != null) {
        throw new IllegalArgumentException(
            describe(JSON, text, sourceName, notJson.cause), notJson.cause);
      }
      throw new IllegalArgumentException(describe(YAML, text, sourceName, e.cause), e.cause);
    }
  }

  /** A syntax error of the text (as opposed to a binding error), for the caller to report. */
  private static final class JsonSyntax extends Exception {
    final JsonProcessingException cause;

    JsonSyntax(JsonProcessingException cause) {
      super(null, cause, false, false);
      this.cause = cause;
    }
  }

  private static <T> T bind(ObjectMapper mapper, String text, String sourceName, Class<T> type)
      throws JsonSyntax {
    try {
      T value = mapper.readValue(text, type);
      if (value == null) {
        throw new IllegalArgumentException(
            sourceName + ": the document is empty (nothing but comments or an empty document)");
      }
      return value;
    } catch (JsonProcessingException e) {
      if (isSyntaxError(e)) {
        throw new JsonSyntax(e);
      }
      throw new IllegalArgumentException(describe(mapper, text, sourceName, e), e);
    }
  }

  private static boolean isSyntaxError(JsonProcessingException e) {
    return e instanceof StreamReadException && !(e instanceof InputCoercionException)
        && !(e instanceof StreamConstraintsException);
  }

  /**
   * Where the key (or list element) at {@code path} ("clients[0].network", "" for the document)
   * starts in YAML {@code text}, as "line:column" (1-based); null when the path is not there. For
   * messages about a file that bound without error but whose content is refused or noted later.
   */
  public static String position(String text, String path) {
    Found found = locate(YAML, TextFiles.stripBom(text), path);
    if (found == null || found.location.getLineNr() < 1) {
      return null;
    }
    return found.location.getLineNr() + ":" + found.location.getColumnNr();
  }

  /**
   * {@code source:line:column} of the key at {@code path} in YAML {@code text} (as {@link
   * #position(String, String)}), or {@code source} alone when the path is not there.
   */
  public static String location(String source, String text, String path) {
    String pos = position(text, path);
    return pos == null ? source : source + ":" + pos;
  }

  /**
   * {@code s} as a YAML double-quoted scalar (backslash escapes for quotes, backslashes and control
   * characters), which every YAML reader reads back as {@code s}.
   */
  public static String quote(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\t' -> b.append("\\t");
        case '\r' -> b.append("\\r");
        default -> {
          if (c < 0x20) {
            b.append(String.format(java.util.Locale.ROOT, "\\x%02x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    return b.append('"').toString();
  }

  /** {@code lines} as YAML comment lines ("# " + the line, line breaks inside made spaces). */
  public static String comments(java.util.List<String> lines) {
    StringBuilder y = new StringBuilder();
    for (String line : lines) {
      y.append("# ").append(line.replaceAll("\\s*\\R\\s*", " ")).append('\n');
    }
    return y.toString();
  }

  /** "line:column" (1-based) of character {@code index} of {@code text}. */
  private static String position(String text, int index) {
    int line = 1;
    int lineStart = 0;
    for (int i = 0; i < index; i++) {
      if (text.charAt(i) == '\n') {
        line++;
        lineStart = i + 1;
      }
    }
    return line + ":" + (index - lineStart + 1);
  }

  /** Fails on the first YAML alias of {@code text}, naming its line, column and key path. */
  private static void refuseAliases(String text, String source) {
    try (JsonParser p = YAML.createParser(text)) {
      while (p.nextToken() != null) {
        if (p instanceof YAMLParser y && y.isCurrentAlias()) {
          JsonLocation loc = p.currentTokenLocation();
          String path = pointerToPath(p.getParsingContext().pathAsPointer().toString());
          throw new IllegalArgumentException(source + ":" + loc.getLineNr() + ":"
              + loc.getColumnNr() + ": " + (path.isEmpty() ? "" : "at '" + path + "': ")
              + "YAML aliases are not supported (*" + TextFiles.quote(p.getText())
              + "): write the value out in full");
        }
      }
    } catch (IOException e) {
      // A syntax error: the binding reports it with its location.
    }
  }

  /**
   * The problem a Jackson exception reports, in this project's words and without location (the
   * caller adds it): for syntax errors of JSON or YAML text and for size limits.
   */
  public static String problem(JsonProcessingException e) {
    return TextFiles.oneLine(problem(e, null));
  }

  private static String describe(
      ObjectMapper mapper, String text, String source, JsonProcessingException e) {
    StringBuilder sb = new StringBuilder(source);
    String path = "";
    if (e instanceof JsonMappingException jm) {
      path = pathOf(jm);
    }
    Found found = locate(mapper, text, path);
    JsonLocation loc = found != null && !path.isEmpty() ? found.location : null;
    Found key = keyNamedBy(mapper, text, path, e);
    if (key != null) {
      // A constructor's message that starts with one of the object's keys is located at that key.
      loc = key.location;
    }
    Matcher duplicate = DUPLICATE.matcher(e.getOriginalMessage() == null ? "" : e.getOriginalMessage());
    if (duplicate.matches() && e.getLocation() != null && e.getLocation().getLineNr() > 0) {
      // Jackson reports a duplicate key after it; name the column where the key starts.
      int line = e.getLocation().getLineNr();
      String[] lines = text.split("\n", -1);
      int column = line <= lines.length ? lines[line - 1].indexOf(duplicate.group(1)) : -1;
      if (column >= 0) {
        loc = new JsonLocation(com.fasterxml.jackson.core.io.ContentReference.unknown(), -1L, line, column + 1);
      }
    }
    MarkedYAMLException yaml = yamlCause(e);
    if (yaml != null && yaml.getProblemMark() != null) {
      Mark m = yaml.getProblemMark();
      sb.append(':').append(m.getLine() + 1).append(':').append(m.getColumn() + 1);
    } else {
      if (loc == null) {
        loc = e.getLocation();
      }
      if (loc != null && loc.getLineNr() > 0) {
        sb.append(':').append(loc.getLineNr()).append(':').append(loc.getColumnNr());
      }
    }
    sb.append(": ");
    if (e instanceof UnrecognizedPropertyException u) {
      sb.append("unknown key '").append(TextFiles.quote(u.getPropertyName())).append('\'');
      if (!path.isEmpty() && path.contains(".")) {
        sb.append(" in ").append(path, 0, path.lastIndexOf('.'));
      }
      sb.append("; expected one of ").append(u.getKnownPropertyIds());
      if ("<<".equals(u.getPropertyName())) {
        sb.append(" (YAML merge keys are not supported)");
      }
      return TextFiles.oneLine(sb.toString());
    }
    if (!path.isEmpty()) {
      sb.append("at '").append(path).append("': ");
    }
    sb.append(problem(e, found));
    // a key in the path or a value in a constructor's message may hold a line break
    return TextFiles.oneLine(sb.toString());
  }

  private static String problem(JsonProcessingException e, Found found) {
    Throwable cause = e.getCause();
    if (cause instanceof NumberFormatException nfe) {
      // YAML's .nan/.inf or a number Java cannot read: say what was expected, not Java's words
      String m = String.valueOf(nfe.getMessage());
      String text = m.startsWith("For input string: ") ? m.substring("For input string: ".length()).replace("\"", "") : m;
      return "malformed number '" + TextFiles.quote(text) + "' (expected a finite number)";
    }
    if (e instanceof ValueInstantiationException || cause instanceof IllegalArgumentException) {
      if (cause instanceof IllegalArgumentException iae && iae.getMessage() != null) {
        return iae.getMessage();
      }
      return "invalid value" + (found != null ? " (" + found.describe() + ")" : "");
    }
    StreamConstraintsException limit = causeOf(e, StreamConstraintsException.class);
    if (limit != null) {
      return sizeLimit(limit.getOriginalMessage());
    }
    InputCoercionException range = causeOf(e, InputCoercionException.class);
    if (range != null) {
      return "expected " + expected(range.getTargetType(), true)
          + (found != null ? ", got " + found.describe() : "");
    }
    MarkedYAMLException yaml = yamlCause(e);
    if (yaml != null) {
      return yamlProblem(yaml);
    }
    String msg = e.getOriginalMessage() == null ? "" : e.getOriginalMessage();
    if (e instanceof MismatchedInputException mi) {
      if (msg.startsWith("No content to map")) {
        return "the document is empty (nothing but comments)";
      }
      if (msg.startsWith("Trailing token")) {
        return "unexpected content after the end of the document (more than one YAML document, or"
            + " text after the JSON object?)";
      }
      if (mi instanceof InvalidFormatException f && msg.startsWith("Cannot deserialize Map key")) {
        return "key '" + TextFiles.quote(String.valueOf(f.getValue())) + "' is not "
            + expected(f.getTargetType(), false);
      }
      return "expected " + expected(mi.getTargetType(), false)
          + (found != null ? ", got " + found.describe() : "");
    }
    Matcher duplicate = DUPLICATE.matcher(msg);
    if (duplicate.matches()) {
      return "key '" + TextFiles.quote(duplicate.group(1)) + "' appears twice";
    }
    if (msg.contains("base64")) {
      return "invalid base64 (!!binary) value";
    }
    if (msg.startsWith("Malformed numeric value")) {
      return "malformed number" + msg.substring("Malformed numeric value".length());
    }
    if (e instanceof StreamReadException) {
      return "invalid " + (e.getProcessor() instanceof YAMLParser ? "YAML" : "JSON") + ": "
          + cleanSyntax(msg);
    }
    return cleanSyntax(msg);
  }

  /** What a value of {@code type} is, in words ("an integer", "a list", ...). */
  private static String expected(Class<?> type, boolean withRange) {
    if (type == null) {
      return "a value of another kind";
    }
    if (type == Integer.class || type == int.class) {
      return withRange ? "an integer in [" + Integer.MIN_VALUE + ", " + Integer.MAX_VALUE + "]"
          : "an integer";
    }
    if (type == Long.class || type == long.class) {
      return withRange ? "an integer in [" + Long.MIN_VALUE + ", " + Long.MAX_VALUE + "]"
          : "an integer";
    }
    if (type == Short.class || type == short.class || type == BigInteger.class) {
      return "an integer";
    }
    if (type == Double.class || type == double.class || type == Float.class
        || type == float.class || type == BigDecimal.class) {
      return "a number";
    }
    if (type == Boolean.class || type == boolean.class) {
      return "true or false";
    }
    if (type == String.class || CharSequence.class.isAssignableFrom(type)) {
      return "a text value";
    }
    if (Collection.class.isAssignableFrom(type) || type.isArray()) {
      return "a list";
    }
    if (JsonNode.class.isAssignableFrom(type)) {
      return "a value";
    }
    if (type.isEnum()) {
      return "one of " + java.util.Arrays.toString(type.getEnumConstants());
    }
    if (Map.class.isAssignableFrom(type)) {
      return "a mapping of keys to values";
    }
    return "a mapping of keys to values (key: value)";
  }

  private static final Pattern LIMIT = Pattern.compile(
      "\\((\\d+), from `StreamReadConstraints\\.getMax(\\w+)\\(\\)`\\)");

  private static String sizeLimit(String message) {
    Matcher m = LIMIT.matcher(message == null ? "" : message);
    if (!m.find()) {
      return "too large a value";
    }
    String limit = m.group(1);
    return switch (m.group(2)) {
      case "NumberLength" -> "a number longer than " + limit + " characters";
      case "StringLength" -> "a text value longer than " + limit + " characters";
      case "NameLength" -> "a key longer than " + limit + " characters";
      case "NestingDepth" -> "nested more than " + limit + " levels deep";
      case "DocumentLength" -> "a document longer than " + limit + " characters";
      case "TokenCount" -> "more than " + limit + " values";
      default -> "a value beyond the limit of " + limit;
    };
  }

  private static String yamlProblem(MarkedYAMLException y) {
    StringBuilder sb = new StringBuilder("invalid YAML: ");
    String problem = y.getProblem() == null ? "syntax error" : y.getProblem();
    if (problem.contains("(TAB)")) {
      problem = "a tab where a token should start (indent YAML with spaces, not tabs)";
    }
    sb.append(problem.strip());
    if (y.getContext() != null) {
      sb.append(" (").append(y.getContext());
      Mark c = y.getContextMark();
      Mark p = y.getProblemMark();
      if (c != null && (p == null || c.getLine() != p.getLine() || c.getColumn() != p.getColumn())) {
        sb.append(" started at line ").append(c.getLine() + 1).append(", column ")
            .append(c.getColumn() + 1);
      }
      sb.append(')');
    }
    return oneLine(sb.toString());
  }

  private static final Pattern DUPLICATE = Pattern.compile("Duplicate field '(.*)'", Pattern.DOTALL);

  private static final Pattern SOURCE = Pattern.compile(
      "\\[Source: [^\\]]*?line: (\\d+), column: (\\d+)\\]");

  /** Jackson's syntax messages without source descriptions and character codes. */
  private static String cleanSyntax(String msg) {
    String s = SOURCE.matcher(msg).replaceAll("line $1, column $2");
    s = s.replaceAll(" \\(code -?\\d+\\)", "")
        .replaceAll("\\(token `JsonToken\\.(\\w+)`\\)", "")
        .replaceAll("`[\\w.$]+\\.(\\w+)`", "$1")
        .replaceAll("\\s*\\(through reference chain.*$", "");
    s = oneLine(s);
    if (!s.isEmpty()) {
      s = Character.toLowerCase(s.charAt(0)) + s.substring(1);
    }
    return s.isEmpty() ? "syntax error" : s;
  }

  private static String oneLine(String s) {
    return s.replaceAll("\\s*\\R\\s*", " ").strip();
  }

  private static MarkedYAMLException yamlCause(Throwable e) {
    return causeOf(e, MarkedYAMLException.class);
  }

  private static <X extends Throwable> X causeOf(Throwable e, Class<X> type) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (type.isInstance(t)) {
        return type.cast(t);
      }
    }
    return null;
  }

  /** Where a key path starts in the text and the kind of value found there. */
  private record Found(JsonLocation location, JsonToken token, String text) {
    String describe() {
      if (token == null) {
        return "nothing";
      }
      return switch (token) {
        case VALUE_STRING -> "the text '" + TextFiles.quote(text) + "'";
        case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> TextFiles.quote(text);
        case VALUE_TRUE -> "true";
        case VALUE_FALSE -> "false";
        case VALUE_NULL -> "an empty value";
        case START_ARRAY -> "a list";
        case START_OBJECT -> "a mapping";
        default -> "'" + TextFiles.quote(text) + "'";
      };
    }
  }

  /**
   * Where the key (or array element) at {@code path} starts, and its value, found by re-reading
   * the text with a streaming parser; the document's first value for the empty path; null when not
   * found. Jackson reports errors of constructor-bound objects at the end of the object, which is
   * why this lookup is needed.
   */
  private static Found locate(ObjectMapper mapper, String text, String path) {
    String pointer = path.isEmpty() ? ""
        : "/" + path.replace("[", ".").replace("]", "").replace('.', '/');
    try (JsonParser p = mapper.getFactory().createParser(text)) {
      JsonToken t;
      while ((t = p.nextToken()) != null) {
        if (p.getParsingContext().pathAsPointer().toString().equals(pointer)) {
          JsonLocation at = p.currentTokenLocation();
          if (t == JsonToken.FIELD_NAME) {
            t = p.nextToken();
          }
          return new Found(at, t, t == null || t.isStructStart() ? "" : p.getText());
        }
      }
    } catch (IOException ignored) {
      // Fall back to the exception's own location.
    }
    return null;
  }

  private static final Pattern WORD = Pattern.compile("[a-z][a-z0-9_]*");

  /**
   * For a constructor's error that names one of the keys of the object it builds among its first
   * words ("timeout_s must be ...", "shared_prefix: output_len must be ..."), where that key is in
   * the text; else null.
   */
  private static Found keyNamedBy(
      ObjectMapper mapper, String text, String path, JsonProcessingException e) {
    if (!(e.getCause() instanceof IllegalArgumentException iae) || iae.getMessage() == null) {
      return null;
    }
    Matcher m = WORD.matcher(iae.getMessage());
    for (int words = 0; words < 5 && m.find(); words++) {
      Found key = locate(mapper, text, path.isEmpty() ? m.group() : path + "." + m.group());
      if (key != null) {
        return key;
      }
    }
    return null;
  }

  /** "/clients/0/input" as "clients[0].input". */
  private static String pointerToPath(String pointer) {
    StringBuilder sb = new StringBuilder();
    for (String part : pointer.split("/")) {
      if (part.isEmpty()) {
        continue;
      }
      if (part.chars().allMatch(Character::isDigit)) {
        sb.append('[').append(part).append(']');
      } else {
        if (sb.length() > 0) {
          sb.append('.');
        }
        sb.append(part.replace("~1", "/").replace("~0", "~"));
      }
    }
    return sb.toString();
  }

  private static String pathOf(JsonMappingException e) {
    StringBuilder sb = new StringBuilder();
    for (JsonMappingException.Reference r : e.getPath()) {
      if (r.getIndex() >= 0) {
        sb.append('[').append(r.getIndex()).append(']');
      } else if (r.getFieldName() != null) {
        if (sb.length() > 0) {
          sb.append('.');
        }
        sb.append(r.getFieldName());
      }
    }
    return sb.toString();
  }
}
