package io.blis.engine.cluster;

import com.fasterxml.jackson.core.JsonToken;
import io.blis.api.NamedProvider;
import io.blis.api.Providers;
import java.util.List;
import java.util.Map;

/**
 * Checks the nodes of a policy file's YAML tree, in either format ({@link PolicyBundle}'s or Go
 * BLIS's), and makes the errors, which name {@code source} and the node's line and column.
 */
class NodeReader {

  private final String source;

  NodeReader(String source) {
    this.source = source;
  }

  /** The file (or other source) the tree was read from, as errors name it. */
  final String source() {
    return source;
  }

  IllegalArgumentException error(YamlNode at, String message) {
    return new YamlNode.Problem(source, at, message);
  }

  /**
   * The block under the single top-level key {@code key} of the YAML configuration {@code file}
   * ({@code what} names it in errors: "the WHAT is empty", "the WHAT needs a top-level KEY: block").
   */
  YamlNode topBlock(java.nio.file.Path file, String what, String key) {
    String text = io.blis.latency.coeff.InputTrees.readText(file, what);
    YamlNode root = YamlNode.document(text, source);
    if (root == null) {
      throw new IllegalArgumentException(source + ": the " + what + " is empty; give a " + key + ": block");
    }
    Map<String, YamlNode> top = mapping(root, "the " + what, List.of(key));
    if (!top.containsKey(key)) {
      throw error(root, "the " + what + " needs a top-level " + key + ": block");
    }
    return top.get(key);
  }

  String knownName(YamlNode at, String name, String what, Class<? extends NamedProvider> type) {
    List<String> names = Providers.names(type);
    String canonical = Providers.canonicalName(type, name); // an alias names its provider
    if (!names.contains(canonical)) {
      throw error(at, "unknown " + what + " '" + name + "'; available: " + String.join(", ", names));
    }
    return canonical;
  }

  /** The mapping {@code n}, whose keys must be in {@code accepted} (any when null). */
  Map<String, YamlNode> mapping(YamlNode n, String what, List<String> accepted) {
    return mapping(n, what, accepted, "key", "accepted");
  }

  /**
   * The mapping {@code n}, whose keys must be in {@code accepted} (any when null); an unknown
   * one is "unknown KIND 'k' in WHAT; LISTED: ...".
   */
  Map<String, YamlNode> mapping(YamlNode n, String what, List<String> accepted, String kind,
      String listed) {
    if (n.map() == null) {
      throw error(n, what + " must be a mapping of keys, got " + describe(n));
    }
    if (accepted != null) {
      for (String key : n.map().keySet()) {
        if (!accepted.contains(key)) {
          YamlNode at = n.map().get(key);
          throw error(at, "unknown " + kind + " '" + key + "' in " + what + "; " + listed + ": "
              + String.join(", ", accepted));
        }
      }
    }
    return n.map();
  }

  String string(YamlNode n, String key) {
    if (!n.isScalar() || n.token() != JsonToken.VALUE_STRING) {
      throw error(n, key + " must be a name (text), got " + describe(n));
    }
    return n.text();
  }

  long whole(YamlNode n, String key, long min) {
    if (n.token() != JsonToken.VALUE_NUMBER_INT) {
      throw error(n, key + " must be a whole number, got " + describe(n));
    }
    if (!(n.number() instanceof Integer || n.number() instanceof Long)) {
      throw error(n, key + " is too large: " + n.text());
    }
    long v = n.number().longValue();
    if (v < min || v > Integer.MAX_VALUE && !key.endsWith("_us") && !key.equals("total_kv_blocks")) {
      throw error(n, key + " must be a whole number >= " + min + ", got " + n.text());
    }
    return v;
  }

  double number(YamlNode n, String key) {
    if (n.token() != JsonToken.VALUE_NUMBER_INT && n.token() != JsonToken.VALUE_NUMBER_FLOAT) {
      throw error(n, key + " must be a number, got " + describe(n));
    }
    double v = n.number().doubleValue();
    if (!Double.isFinite(v)) {
      throw error(n, key + " must be a finite number, got " + n.text());
    }
    return v;
  }

  static String describe(YamlNode n) {
    if (n.map() != null) {
      return "a mapping";
    }
    if (n.list() != null) {
      return "a list";
    }
    return n.isNull() ? "nothing" : "'" + n.text() + "'";
  }
}
