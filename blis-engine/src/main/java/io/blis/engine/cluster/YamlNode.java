package io.blis.engine.cluster;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.blis.latency.coeff.InputTrees;
import io.blis.workload.TextFiles;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A YAML node of a policy file with where it starts: a mapping, a sequence or a scalar; a number
 * scalar also has its value as the YAML parser reads it (which knows forms such as {@code 0x1F},
 * {@code 0b101} and {@code 1_000}). Read by {@link PolicyBundle} in either of its formats.
 */
record YamlNode(Map<String, YamlNode> map, List<YamlNode> list, String text, Number number,
    JsonToken token, int line, int column) {

  boolean isNull() {
    return token == JsonToken.VALUE_NULL;
  }

  boolean isScalar() {
    return map == null && list == null;
  }

  private static final com.fasterxml.jackson.dataformat.yaml.YAMLFactory YAML =
      new com.fasterxml.jackson.dataformat.yaml.YAMLFactory();

  /**
   * The single YAML document {@code text} as a tree, null when it is empty or {@code ~}; errors
   * name {@code source}, the line and the column.
   */
  static YamlNode document(String text, String source) {
    try (JsonParser p = YAML.createParser(text)) {
      if (p.nextToken() == null) {
        return null;
      }
      YamlNode root = read(p, source);
      if (p.nextToken() != null) {
        throw new Problem(source, p.currentTokenLocation(), "expected a single YAML document");
      }
      return root.isNull() ? null : root;
    } catch (com.fasterxml.jackson.core.JacksonException e) {
      throw new IllegalArgumentException(source + ", "
          + io.blis.latency.coeff.InputTrees.problem(e, "not valid YAML"), e);
    } catch (IOException e) {
      throw new IllegalArgumentException(source + ": cannot read: " + e.getMessage(), e);
    }
  }

  static YamlNode read(JsonParser p, String source) throws IOException {
    InputTrees.refuseAnchors(p, source);
    JsonLocation at = p.currentTokenLocation();
    int line = at.getLineNr();
    int col = at.getColumnNr();
    JsonToken t = p.currentToken();
    if (t == JsonToken.START_OBJECT) {
      Map<String, YamlNode> m = new LinkedHashMap<>();
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String key = p.currentName();
        JsonLocation keyAt = p.currentTokenLocation();
        p.nextToken();
        YamlNode value = read(p, source);
        if (m.put(key, value) != null) {
          throw new Problem(source, keyAt, "duplicate key '" + key + "'");
        }
      }
      return new YamlNode(m, null, null, null, t, line, col);
    }
    if (t == JsonToken.START_ARRAY) {
      List<YamlNode> l = new ArrayList<>();
      while (p.nextToken() != JsonToken.END_ARRAY) {
        l.add(read(p, source));
      }
      return new YamlNode(null, l, null, null, t, line, col);
    }
    Number number = null;
    if (t == JsonToken.VALUE_NUMBER_INT || t == JsonToken.VALUE_NUMBER_FLOAT) {
      try {
        number = p.getNumberValue();
      } catch (com.fasterxml.jackson.core.JacksonException e) {
        number = special(p.getText()); // YAML's .nan and .inf: a number, which the readers then refuse as not finite
        if (number == null) {
          throw e;
        }
      }
    }
    return new YamlNode(null, null, p.getText(), number, t, line, col);
  }

  /** YAML's not-a-number and infinities ({@code .nan}, {@code -.Inf}, ...), or null for another text. */
  private static Double special(String text) {
    return switch (text == null ? "" : text) {
      case ".nan", ".NaN", ".NAN" -> Double.NaN;
      case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF" -> Double.POSITIVE_INFINITY;
      case "-.inf", "-.Inf", "-.INF" -> Double.NEGATIVE_INFINITY;
      default -> null;
    };
  }

  /** An error at a place in the file, on one line whatever keys or values it quotes. */
  static final class Problem extends IllegalArgumentException {
    Problem(String source, JsonLocation at, String message) {
      super(source + ", line " + at.getLineNr() + ", column " + at.getColumnNr() + ": "
          + TextFiles.oneLine(message));
    }

    Problem(String source, YamlNode at, String message) {
      super(source + ", line " + at.line() + ", column " + at.column() + ": " + TextFiles.oneLine(message));
    }
  }
}
