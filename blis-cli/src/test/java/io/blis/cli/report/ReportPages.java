package io.blis.cli.report;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Test helpers: the chart specifications a {@link ChartPage} holds, and their inline data. */
public final class ReportPages {

  private static final Pattern SPEC = Pattern.compile(
      "<script type=\"application/json\" id=\"chart-(\\d+)-spec\">(.*?)</script>", Pattern.DOTALL);

  private ReportPages() {}

  /** Every chart's specification, in page order (parsed, so that escapes are undone). */
  public static List<JsonNode> specs(String html) {
    List<JsonNode> out = new ArrayList<>();
    Matcher m = SPEC.matcher(html);
    ObjectMapper mapper = new ObjectMapper();
    while (m.find()) {
      if (Integer.parseInt(m.group(1)) != out.size() + 1) {
        throw new AssertionError("chart ids out of order at chart-" + m.group(1));
      }
      try {
        out.add(mapper.readTree(m.group(2)));
      } catch (JsonProcessingException e) {
        throw new AssertionError("chart-" + m.group(1) + " is not JSON: " + e.getOriginalMessage(), e);
      }
    }
    return out;
  }

  private static final Pattern EXTERNAL = Pattern.compile("<(script|img|link|iframe|object|embed)\\b[^>]*\\s(src|href)=",
      Pattern.CASE_INSENSITIVE);

  private static final Pattern SCRIPT_BODY = Pattern.compile("(<script[^>]*>).*?(</script>)", Pattern.DOTALL);

  /**
   * Whether the page's HTML loads anything from elsewhere: an element with a src or href outside
   * the scripts' code (whose strings may well hold such markup).
   */
  public static boolean loadsExternalResources(String html) {
    return EXTERNAL.matcher(SCRIPT_BODY.matcher(html).replaceAll("$1$2")).find();
  }

  /** The rows of a named inline dataset of a chart. */
  public static List<JsonNode> rows(JsonNode spec, String dataset) {
    JsonNode rows = spec.path("datasets").path(dataset);
    if (!rows.isArray()) {
      throw new AssertionError("no dataset '" + dataset + "' in " + spec.path("datasets").fieldNames());
    }
    List<JsonNode> out = new ArrayList<>();
    rows.forEach(out::add);
    return out;
  }

  /** The rows of a dataset that match. */
  public static List<JsonNode> rows(JsonNode spec, String dataset, Predicate<JsonNode> which) {
    return rows(spec, dataset).stream().filter(which).toList();
  }

  /** The numbers of an array field. */
  public static double[] numbers(JsonNode array) {
    double[] out = new double[array.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = array.get(i).asDouble();
    }
    return out;
  }
}
