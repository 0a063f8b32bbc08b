package io.blis.cli.observe;

import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What a run's answers and scrapes said that the client did not record as the server gave it:
 * counted by kind, with the first case of each, for one warning line per kind at the end of the
 * run and the run's {@code client.server_values} in its experiments entry. The counting is shared
 * by the I/O thread (answers) and the run's thread (scrapes).
 */
public final class ServerChecks {

  /** The finish reasons recorded as the server gave them (OpenAI's, and vLLM's abort and error). */
  public static final List<String> FINISH_REASONS =
      List.of("stop", "length", "abort", "tool_calls", "content_filter", "function_call", "error");

  /** What {@link #FINISH_REASONS} leaves out is recorded as this. */
  public static final String UNKNOWN_FINISH_REASON = "unknown";

  /** A kind of server value the client does not take as given. */
  public enum Kind {
    /** A usage count that is not an integer in its range, or fewer output tokens than text chunks. */
    USAGE("usage", "answer(s) gave a usage count that cannot be right",
        "recorded as not given (-1); the client's own counts (the prompt sent, the text chunks received) stand in"),
    /** An answer of more output tokens (its usage, else its text chunks) than the max_tokens asked. */
    LONGER_THAN_ASKED("longer_than_max_tokens", "answer(s) were longer than the max_tokens asked",
        "recorded as seen"),
    /** A finish_reason outside {@link #FINISH_REASONS}. */
    FINISH_REASON("unknown_finish_reason", "answer(s) gave a finish_reason other than "
        + String.join(", ", FINISH_REASONS), "recorded as '" + UNKNOWN_FINISH_REASON + "'"),
    /** A scraped metric value that is NaN, +Inf or -Inf. */
    METRIC_VALUE("non_finite_metric_values", "metric value(s) the server's /metrics gave were not finite"
        + " numbers (NaN, +Inf, -Inf)", "left out: a metric with no finite value is an empty cell of metrics.csv");

    private final String key;
    private final String what;
    private final String done;

    Kind(String key, String what, String done) {
      this.key = key;
      this.what = what;
      this.done = done;
    }

    /** The name in the experiments entry's {@code client.server_values}. */
    public String key() {
      return key;
    }
  }

  private final Map<Kind, Long> counts = new EnumMap<>(Kind.class);
  private final Map<Kind, String> first = new EnumMap<>(Kind.class);

  /** Counts one case of {@code kind}; {@code example} (kept for the first) says what it was. */
  synchronized void add(Kind kind, long n, String example) {
    if (n <= 0) {
      return;
    }
    counts.merge(kind, n, Long::sum);
    first.putIfAbsent(kind, example);
  }

  /** The counts by kind, only kinds that happened. */
  public synchronized Map<Kind, Long> counts() {
    return Collections.unmodifiableMap(new EnumMap<>(counts));
  }

  /** One line per kind that happened, each starting {@code "warning: "}. */
  public synchronized List<String> warnings() {
    List<String> out = new ArrayList<>();
    counts.forEach((k, n) -> out.add(String.format(Locale.ROOT, "warning: %d %s (the first: %s): %s", n, k.what,
        first.get(k), k.done)));
    return out;
  }
}
