package io.blis.workload.trace;

import io.blis.workload.RequestSpec;
import io.blis.workload.TextFiles;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * Reader of the per-request ground-truth traces of real vLLM runs ({@code requests/<id>.csv.gz}:
 * gzip CSV with header {@code req,stage,arrival_ms,ok,input_tokens,output_tokens_client,e2e_ms,
 * ttft_ms}). Rows are validated; any malformed row fails the whole read with a message naming the
 * file, line and column.
 */
public final class GroundTruthTrace {

  /** Columns every ground-truth trace has, in this order. */
  public static final List<String> COLUMNS = List.of(
      "req", "stage", "arrival_ms", "ok", "input_tokens", "output_tokens_client", "e2e_ms",
      "ttft_ms");

  /**
   * One request of a real run.
   *
   * @param req 0-based index in send order
   * @param stage load stage
   * @param arrivalMs send time relative to the first request, milliseconds
   * @param ok true when the request succeeded (false: client timeout)
   * @param inputTokens client-side prompt tokens including BOS, -1 when not recorded (failures)
   * @param outputTokensClient re-tokenized streamed text length (not the generated count), -1 when
   *     not recorded
   * @param e2eMs send to last streamed line (for failures: time to the timeout), milliseconds
   * @param ttftMs send to first streamed line, milliseconds; NaN when not recorded
   */
  public record Row(
      long req,
      int stage,
      double arrivalMs,
      boolean ok,
      int inputTokens,
      int outputTokensClient,
      double e2eMs,
      double ttftMs) {}

  private GroundTruthTrace() {}

  /** Reads every row of a trace (gzip if the name ends in {@code .gz}). */
  public static List<Row> read(Path file) {
    List<Row> rows = new ArrayList<>();
    forEach(file, rows::add);
    return rows;
  }

  /** Streams the rows of a trace to {@code sink} in file order without keeping them. */
  public static void forEach(Path file, Consumer<Row> sink) {
    try (RowReader reader = open(file)) {
      Row row;
      while ((row = reader.next()) != null) {
        sink.accept(row);
      }
    }
  }

  /** Opens a trace for pulling rows one at a time. */
  public static RowReader open(Path file) {
    return new RowReader(file);
  }

  /** Pulls validated rows one at a time; close it when done. */
  public static final class RowReader implements AutoCloseable {
    private final LineReader lines;
    private long expectedReq;
    private double lastArrival = Double.NEGATIVE_INFINITY;

    private RowReader(Path file) {
      this.lines = new LineReader(file);
      String header = lines.firstLine("a ground-truth trace (a header " + String.join(",", COLUMNS) + ")");
      if (!List.of(header.strip().split(",", -1)).equals(COLUMNS)) {
        lines.close();
        throw new IllegalArgumentException(file + ":1: header is '" + TextFiles.quote(header)
            + "', expected " + String.join(",", COLUMNS));
      }
    }

    /** The next row, or null at the end of the file. */
    public Row next() {
      String line = lines.nonBlankLine();
      if (line == null) {
        return null;
      }
      CsvFields f = new CsvFields(lines.file.toString(), lines.lineNo(), COLUMNS, line);
      long req = f.longValue(0);
      if (req != expectedReq) {
        throw f.error(0, "expected request index " + expectedReq + " (rows in send order)");
      }
      expectedReq++;
      int stage = f.intValue(1, 0);
      double arrival = f.nonNegativeDouble(2, RequestSpec.MAX_TIME_US / 1000.0,
          "the latest simulated time, ms");
      if (arrival < lastArrival) {
        throw f.error(2, "arrival times must not decrease (previous " + lastArrival + ")");
      }
      lastArrival = arrival;
      int okFlag = f.intValue(3, 0);
      if (okFlag != 0 && okFlag != 1) {
        throw f.error(3, "expected 0 or 1");
      }
      int input = f.isEmpty(4) ? -1
          : f.intValue(4, 1, RequestSpec.MAX_TOKENS, "the most tokens a request may have");
      int output = f.isEmpty(5) ? -1
          : f.intValue(5, 0, RequestSpec.MAX_TOKENS, "the most tokens a request may have");
      double e2e = f.nonNegativeDouble(6);
      double ttft = f.isEmpty(7) ? Double.NaN : f.nonNegativeDouble(7);
      if (okFlag == 1 && (input < 0 || Double.isNaN(ttft))) {
        throw f.error(input < 0 ? 4 : 7, "a successful request must record this value");
      }
      return new Row(req, stage, arrival, okFlag == 1, input, output, e2e, ttft);
    }

    @Override
    public void close() {
      lines.close();
    }
  }
}
