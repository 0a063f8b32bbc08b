package io.blis.cli.observe;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads the Prometheus text exposition format (version 0.0.4, what vLLM's {@code /metrics}
 * serves): one sample per line, {@code name{label="value",...} value [timestamp]}, comments and
 * blank lines skipped. A line that is not a sample is counted and skipped, never guessed at.
 */
public final class PrometheusText {

  /** One sample: a series and its value. */
  public record Sample(String name, Map<String, String> labels, double value) {}

  /** The samples of a scrape and how many lines could not be read. */
  public record Scrape(List<Sample> samples, int malformedLines) {

    /**
     * The sum over every series of metric {@code name} whose value is finite (NaN, +Inf and -Inf
     * count as absent), NaN when there is none or the sum is not finite.
     */
    double sum(String name) {
      double s = 0;
      boolean any = false;
      for (Sample x : samples) {
        if (x.name().equals(name) && Double.isFinite(x.value())) {
          s += x.value();
          any = true;
        }
      }
      return any && Double.isFinite(s) ? s : Double.NaN;
    }

    /** The mean over every finite series of metric {@code name}, as {@link #sum}. */
    double mean(String name) {
      double s = 0;
      int n = 0;
      for (Sample x : samples) {
        if (x.name().equals(name) && Double.isFinite(x.value())) {
          s += x.value();
          n++;
        }
      }
      return n == 0 || !Double.isFinite(s) ? Double.NaN : s / n;
    }

    /** The labels of the first series of {@code name}, or an empty map. */
    Map<String, String> firstLabels(String name) {
      for (Sample x : samples) {
        if (x.name().equals(name)) {
          return x.labels();
        }
      }
      return Map.of();
    }
  }

  private PrometheusText() {}

  static Scrape parse(String text) {
    List<Sample> out = new ArrayList<>();
    int bad = 0;
    for (String raw : text.split("\n")) {
      String line = raw.strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      Sample s = sample(line);
      if (s == null) {
        bad++;
      } else {
        out.add(s);
      }
    }
    return new Scrape(List.copyOf(out), bad);
  }

  /** One sample line, or null when it is not one. */
  private static Sample sample(String line) {
    int i = 0;
    int n = line.length();
    while (i < n && isNameChar(line.charAt(i), i == 0)) {
      i++;
    }
    if (i == 0) {
      return null;
    }
    String name = line.substring(0, i);
    Map<String, String> labels = new LinkedHashMap<>();
    if (i < n && line.charAt(i) == '{') {
      i++;
      while (true) {
        while (i < n && (line.charAt(i) == ' ' || line.charAt(i) == ',')) {
          i++;
        }
        if (i < n && line.charAt(i) == '}') {
          i++;
          break;
        }
        int start = i;
        while (i < n && isNameChar(line.charAt(i), i == start)) {
          i++;
        }
        if (i == start || i >= n || line.charAt(i) != '=' || i + 1 >= n || line.charAt(i + 1) != '"') {
          return null;
        }
        String key = line.substring(start, i);
        i += 2;
        StringBuilder v = new StringBuilder();
        boolean closed = false;
        while (i < n) {
          char c = line.charAt(i++);
          if (c == '\\' && i < n) {
            char e = line.charAt(i++);
            v.append(e == 'n' ? '\n' : e);
          } else if (c == '"') {
            closed = true;
            break;
          } else {
            v.append(c);
          }
        }
        if (!closed) {
          return null;
        }
        labels.put(key, v.toString());
      }
    }
    String[] rest = line.substring(i).strip().split("\\s+");
    if (rest.length < 1 || rest[0].isEmpty()) {
      return null;
    }
    double value;
    try {
      value = switch (rest[0]) {
        case "+Inf", "Inf" -> Double.POSITIVE_INFINITY;
        case "-Inf" -> Double.NEGATIVE_INFINITY;
        case "NaN" -> Double.NaN;
        default -> Double.parseDouble(rest[0]);
      };
    } catch (NumberFormatException e) {
      return null;
    }
    return new Sample(name, Map.copyOf(labels), value);
  }

  private static boolean isNameChar(char c, boolean first) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':'
        || (!first && c >= '0' && c <= '9');
  }
}
