package io.blis.cli.report;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.List;

/**
 * Small builders of Vega-Lite JSON for {@link ChartPage}: numbers rounded for drawing, encoding
 * channels, named inline datasets. Everything else is plain Jackson nodes in the shape of the
 * Vega-Lite documentation (https://vega.github.io/vega-lite/docs/).
 */
public final class VegaLite {

  private static final JsonNodeFactory NODES = JsonNodeFactory.withExactBigDecimals(true);
  private static final MathContext DRAWN = new MathContext(5, RoundingMode.HALF_EVEN);

  /** The colour of observed values in every chart. */
  public static final String OBSERVED_COLOR = "#4d4d4d";
  /** The colour of predicted values in every chart. */
  public static final String PREDICTED_COLOR = "#1f77b4";

  private VegaLite() {}

  /** An empty object. */
  public static ObjectNode object() {
    return NODES.objectNode();
  }

  /** An empty array. */
  public static ArrayNode array() {
    return NODES.arrayNode();
  }

  /** An array of strings. */
  public static ArrayNode strings(List<String> values) {
    ArrayNode a = array();
    values.forEach(a::add);
    return a;
  }

  /** A number to draw: 5 significant digits (plenty for a chart or a tooltip), null when not finite. */
  public static JsonNode num(double v) {
    if (!Double.isFinite(v)) {
      return NODES.nullNode();
    }
    BigDecimal b = BigDecimal.valueOf(v).round(DRAWN).stripTrailingZeros();
    return NODES.numberNode(b.scale() < 0 ? b.setScale(0) : b);
  }

  /** A chart of the given plot size, in pixels. */
  public static ObjectNode chart(int width, int height) {
    ObjectNode c = object();
    c.put("width", width);
    c.put("height", height);
    return c;
  }

  /**
   * An encoding channel.
   *
   * @param type {@code quantitative}, {@code nominal}, {@code ordinal} or {@code temporal}
   * @param title the axis or legend title, with the unit
   */
  public static ObjectNode field(String field, String type, String title) {
    ObjectNode f = object();
    f.put("field", field);
    f.put("type", type);
    f.put("title", title);
    return f;
  }

  /** A quantitative channel on a log scale. */
  public static ObjectNode logField(String field, String title) {
    ObjectNode f = field(field, "quantitative", title);
    f.putObject("scale").put("type", "log");
    return f;
  }

  /** Adds {@code rows} to the chart's top-level datasets under {@code name}; returns {@code {"name": name}}. */
  public static ObjectNode dataset(ObjectNode chart, String name, ArrayNode rows) {
    ObjectNode sets = chart.has("datasets") ? (ObjectNode) chart.get("datasets") : chart.putObject("datasets");
    sets.set(name, rows);
    return object().put("name", name);
  }

  /** A mark of the given type with properties. */
  public static ObjectNode mark(String type) {
    return object().put("type", type);
  }

  /** {@code {"filter": expression}}. */
  public static ObjectNode filter(String expression) {
    return object().put("filter", expression);
  }

  /**
   * {@link #scale} of the values of {@code field} that occur in {@code rows}, each with the range
   * value in its place, so that a legend lists only those.
   */
  public static ObjectNode present(ArrayNode rows, String field, List<String> domain, List<String> range) {
    java.util.Set<String> seen = new java.util.HashSet<>();
    rows.forEach(r -> seen.add(r.path(field).asText()));
    List<String> d = new java.util.ArrayList<>();
    List<String> r = new java.util.ArrayList<>();
    for (int i = 0; i < domain.size(); i++) {
      if (seen.contains(domain.get(i))) {
        d.add(domain.get(i));
        r.add(range.get(i));
      }
    }
    return scale(d, r);
  }

  /**
   * Colours a point chart's marks by their {@code role} field (only the roles present, in the
   * given order and colours) and draws those of role {@code large} larger: the frontier charts'
   * encoding of the best, the frontier and the rest.
   */
  public static void byRole(ObjectNode encoding, ArrayNode rows, List<String> roles, List<String> colors,
      String large, int size) {
    ObjectNode color = field("role", "nominal", null);
    color.set("scale", present(rows, "role", roles, colors));
    encoding.set("color", color);
    ObjectNode s = object();
    s.putObject("condition").put("test", "datum.role === '" + large + "'").put("value", 220);
    s.put("value", size);
    encoding.set("size", s);
  }

  /** An ordinal scale mapping each domain value to the range value in the same place (colours, shapes, sizes). */
  public static ObjectNode scale(List<String> domain, List<?> range) {
    ObjectNode s = object();
    s.set("domain", strings(domain));
    ArrayNode r = s.putArray("range");
    for (Object v : range) {
      if (v instanceof Number n) {
        r.add(num(n.doubleValue()));
      } else {
        r.add(String.valueOf(v));
      }
    }
    return s;
  }
}
