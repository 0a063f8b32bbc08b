package io.blis.workload;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Strict binding of YAML (or JSON, which is YAML) configuration files to records with snake_case
 * keys: unknown keys, wrong types, fractional numbers for integers and validation failures in the
 * records' constructors all become one {@link IllegalArgumentException} naming the source, line,
 * column and key path.
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

  /** Reads {@code file} (JSON when its name ends in .json, YAML otherwise). */
  public static <T> T load(Path file, Class<T> type) {
    String text;
    try {
      text = Files.readString(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file + ": " + e.getMessage(), e);
    }
    return parse(text, file.toString(), type);
  }

  /** Binds {@code text} (YAML or JSON) to {@code type}; {@code sourceName} names it in errors. */
  public static <T> T parse(String text, String sourceName, Class<T> type) {
    ObjectMapper mapper = text.stripLeading().startsWith("{") ? JSON : YAML;
    try {
      T value = mapper.readValue(text, type);
      if (value == null) {
        throw new IllegalArgumentException(sourceName + ": the document is empty");
      }
      return value;
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException(describe(mapper, text, sourceName, e), e);
    }
  }

  private static String describe(
      ObjectMapper mapper, String text, String source, JsonProcessingException e) {
    StringBuilder sb = new StringBuilder(source);
    String path = "";
    if (e instanceof JsonMappingException jm) {
      path = pathOf(jm);
    }
    JsonLocation loc = locate(mapper, text, path);
    if (loc == null) {
      loc = e.getLocation();
    }
    if (loc != null && loc.getLineNr() > 0) {
      sb.append(':').append(loc.getLineNr()).append(':').append(loc.getColumnNr());
    }
    sb.append(": ");
    if (e instanceof UnrecognizedPropertyException u) {
      sb.append("unknown key '").append(u.getPropertyName()).append('\'');
      if (!path.isEmpty() && path.contains(".")) {
        sb.append(" in ").append(path, 0, path.lastIndexOf('.'));
      }
      sb.append("; expected one of ").append(u.getKnownPropertyIds());
      return sb.toString();
    }
    if (!path.isEmpty()) {
      sb.append("at '").append(path).append("': ");
    }
    Throwable cause = e.getCause();
    if (cause instanceof IllegalArgumentException iae && iae.getMessage() != null) {
      sb.append(iae.getMessage());
    } else {
      String msg = e.getOriginalMessage();
      sb.append(msg == null ? e.getClass().getSimpleName() : msg.replaceAll("\\s*\\(through reference chain.*$", ""));
    }
    return sb.toString();
  }

  /**
   * Where the key (or array element) at {@code path} starts, found by re-reading the text with a
   * streaming parser; null when the path is empty or not found. Jackson reports errors of
   * constructor-bound objects at the end of the object, which is why this lookup is needed.
   */
  private static JsonLocation locate(ObjectMapper mapper, String text, String path) {
    if (path.isEmpty()) {
      return null;
    }
    String pointer = "/" + path.replace("[", ".").replace("]", "").replace('.', '/');
    try (JsonParser p = mapper.getFactory().createParser(text)) {
      while (p.nextToken() != null) {
        if (p.getParsingContext().pathAsPointer().toString().equals(pointer)) {
          return p.currentTokenLocation();
        }
      }
    } catch (IOException ignored) {
      // Fall back to the exception's own location.
    }
    return null;
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
