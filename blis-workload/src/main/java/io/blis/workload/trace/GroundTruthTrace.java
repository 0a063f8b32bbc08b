package io.blis.workload.trace;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.zip.GZIPInputStream;

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
    private final Path file;
    private final BufferedReader reader;
    private int lineNo = 1;
    private long expectedReq;
    private double lastArrival = Double.NEGATIVE_INFINITY;

    private RowReader(Path file) {
      this.file = file;
      try {
        InputStream raw = Files.newInputStream(file);
        InputStream in = file.toString().endsWith(".gz") ? new GZIPInputStream(raw, 1 << 16) : raw;
        this.reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8), 1 << 16);
        String header = reader.readLine();
        if (header == null) {
          reader.close();
          throw new IllegalArgumentException(
              file + ": empty file, expected header " + String.join(",", COLUMNS));
        }
        if (!List.of(header.strip().split(",", -1)).equals(COLUMNS)) {
          reader.close();
          throw new IllegalArgumentException(
              file + ":1: header is '" + header.strip() + "', expected " + String.join(",", COLUMNS));
        }
      } catch (IOException e) {
        throw new UncheckedIOException("cannot read ground-truth trace " + file + ": " + e.getMessage(), e);
      }
    }

    /** The next row, or null at the end of the file. */
    public Row next() {
      String line;
      try {
        do {
          line = reader.readLine();
          if (line == null) {
            return null;
          }
          lineNo++;
        } while (line.isBlank());
      } catch (IOException e) {
        throw new UncheckedIOException(
            "cannot read ground-truth trace " + file + " after line " + lineNo + ": " + e.getMessage(), e);
      }
      CsvFields f = new CsvFields(file.toString(), lineNo, COLUMNS, line);
      long req = f.longValue(0);
      if (req != expectedReq) {
        throw f.error(0, "expected request index " + expectedReq + " (rows in send order)");
      }
      expectedReq++;
      int stage = f.intValue(1, 0);
      double arrival = f.nonNegativeDouble(2);
      if (arrival < lastArrival) {
        throw f.error(2, "arrival times must not decrease (previous " + lastArrival + ")");
      }
      lastArrival = arrival;
      int okFlag = f.intValue(3, 0);
      if (okFlag != 0 && okFlag != 1) {
        throw f.error(3, "expected 0 or 1");
      }
      int input = f.isEmpty(4) ? -1 : f.intValue(4, 1);
      int output = f.isEmpty(5) ? -1 : f.intValue(5, 0);
      double e2e = f.nonNegativeDouble(6);
      double ttft = f.isEmpty(7) ? Double.NaN : f.nonNegativeDouble(7);
      if (okFlag == 1 && (input < 0 || Double.isNaN(ttft))) {
        throw f.error(input < 0 ? 4 : 7, "a successful request must record this value");
      }
      return new Row(req, stage, arrival, okFlag == 1, input, output, e2e, ttft);
    }

    @Override
    public void close() {
      try {
        reader.close();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }
}
