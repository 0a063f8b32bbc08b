package io.blis.cli.observe;

import java.util.List;
import java.util.Map;

/** {@link PrometheusText} for tests of other packages (it is package-private). */
public final class PrometheusTextAccess {

  /** One sample of a scrape. */
  public record Series(String name, Map<String, String> labels, double value) {}

  private PrometheusTextAccess() {}

  /** The samples of {@code text}; fails when a line is not one. */
  public static List<Series> parse(String text) {
    PrometheusText.Scrape s = PrometheusText.parse(text);
    if (s.malformedLines() != 0) {
      throw new AssertionError(s.malformedLines() + " malformed lines in\n" + text);
    }
    return s.samples().stream().map(x -> new Series(x.name(), x.labels(), x.value())).toList();
  }
}
