package io.blis.latency.catalog;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/** Typed access to the fields of one JSON object, with errors naming the source and the key. */
final class HfFields {

  private final String source;
  private final ObjectNode node;

  HfFields(String source, ObjectNode node) {
    this.source = source;
    this.node = node;
  }

  /** Where the object came from, for error messages. */
  String source() {
    return source;
  }

  /** The first present key among {@code keys}, as a positive int; error when none is present. */
  int requiredInt(String... keys) {
    for (String k : keys) {
      JsonNode v = node.get(k);
      if (v != null && !v.isNull()) {
        return toInt(k, v);
      }
    }
    throw new IllegalArgumentException(
        source + ": missing required field '" + keys[0] + "'"
            + (keys.length > 1 ? " (or one of " + String.join(", ", keys) + ")" : ""));
  }

  /** The first present key among {@code keys} as an int, or {@code fallback}. */
  int optionalInt(int fallback, String... keys) {
    for (String k : keys) {
      JsonNode v = node.get(k);
      if (v != null && !v.isNull()) {
        return toInt(k, v);
      }
    }
    return fallback;
  }

  /** The first present key among {@code keys} as a number, or {@code fallback}. */
  double optionalDouble(double fallback, String... keys) {
    for (String k : keys) {
      JsonNode v = node.get(k);
      if (v != null && !v.isNull()) {
        if (!v.isNumber()) {
          throw new IllegalArgumentException(
              source + ": field '" + k + "' must be a number, got " + v);
        }
        return v.asDouble();
      }
    }
    return fallback;
  }

  boolean bool(String key, boolean fallback) {
    JsonNode v = node.get(key);
    if (v == null || v.isNull()) {
      return fallback;
    }
    if (!v.isBoolean()) {
      throw new IllegalArgumentException(
          source + ": field '" + key + "' must be true or false, got " + v);
    }
    return v.asBoolean();
  }

  String text(String... keys) {
    for (String k : keys) {
      JsonNode v = node.get(k);
      if (v != null && v.isTextual()) {
        return v.asText();
      }
    }
    return null;
  }

  private int toInt(String key, JsonNode v) {
    if (!v.isIntegralNumber() && !(v.isNumber() && v.asDouble() == Math.rint(v.asDouble()))) {
      throw new IllegalArgumentException(
          source + ": field '" + key + "' must be an integer, got " + v);
    }
    long l = v.asLong();
    if (l < 0) {
      throw new IllegalArgumentException(
          source + ": field '" + key + "' must not be negative, got " + l);
    }
    if (l > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(source + ": field '" + key + "' is too large: " + l);
    }
    return (int) l;
  }
}
