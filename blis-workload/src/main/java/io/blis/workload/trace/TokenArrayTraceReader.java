package io.blis.workload.trace;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import io.blis.workload.TextFiles;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads Go BLIS's older request trace ({@code run --workload traces --workload-traces-filepath
 * FILE}): a CSV with a header row {@code arrival_time,request_id,model,prefill_tokens,decode_tokens}
 * (any order), {@code arrival_time} in seconds, the token columns JSON arrays of token ids in
 * double quotes ({@code "[1,2,3]"}). A request's prompt is exactly its prefill token ids (so equal
 * ids share cache blocks as they would on the server); it generates as many tokens as the decode
 * array has. Requests are numbered 0, 1, ... in file order, as Go BLIS names them request_0, ...;
 * {@code request_id} and {@code model} are read but have no meaning here (as in Go BLIS). Rows are
 * sorted by arrival (ties keep file order). Errors name the file, line and column.
 */
public final class TokenArrayTraceReader {

  /** The columns of the format. */
  public static final List<String> COLUMNS =
      List.of("arrival_time", "request_id", "model", "prefill_tokens", "decode_tokens");

  private static final JsonMapper JSON = JsonMapper.builder().build();

  private TokenArrayTraceReader() {}

  /** Whether {@code file} starts with this format's header row (in any column order). */
  public static boolean isTokenArrayTrace(Path file) {
    try (LineReader lines = new LineReader(file)) {
      String first = lines.line();
      if (first == null) {
        return false;
      }
      List<String> cols = List.of(first.strip().split(",", -1));
      return cols.size() == COLUMNS.size() && cols.containsAll(COLUMNS);
    }
  }

  private record Row(long id, long arrivalUs, int[] prompt, int output) {}

  /** Reads and checks every row; the requests are kept in memory (they carry their token ids). */
  public static NotedSource open(Path file) {
    List<Row> rows = new ArrayList<>();
    try (LineReader lines = new LineReader(file)) {
      String first = lines.firstLine("a trace CSV with the header " + String.join(",", COLUMNS));
      List<String> columns = List.of(first.strip().split(",", -1));
      if (columns.size() != COLUMNS.size() || !columns.containsAll(COLUMNS)) {
        throw new IllegalArgumentException(file + ":1:1: the header row is '" + TextFiles.quote(first)
            + "', expected the columns " + String.join(",", COLUMNS) + " (Go BLIS's traces CSV)");
      }
      int arrivalAt = columns.indexOf("arrival_time");
      int prefillAt = columns.indexOf("prefill_tokens");
      int decodeAt = columns.indexOf("decode_tokens");
      String line;
      while ((line = lines.nonBlankLine()) != null) {
        CsvFields f = CsvFields.quoted(file.toString(), lines.lineNo(), columns, line);
        double seconds = f.nonNegativeDouble(arrivalAt, RequestSpec.MAX_TIME_US / 1e6,
            "the latest simulated time, seconds");
        int[] prompt = tokens(f, prefillAt);
        int[] decode = tokens(f, decodeAt);
        if (prompt.length == 0) {
          throw f.error(prefillAt, "a prompt needs at least one token id");
        }
        if (decode.length == 0) {
          throw f.error(decodeAt, "a request here generates at least one token: give at least one id");
        }
        rows.add(new Row(rows.size(), Math.round(seconds * 1e6), prompt, decode.length));
      }
    }
    if (rows.isEmpty()) {
      throw new IllegalArgumentException(file + ": no requests: the trace has its header row and no rows");
    }
    List<Row> sorted = new ArrayList<>(rows);
    sorted.sort((a, b) -> Long.compare(a.arrivalUs(), b.arrivalUs()));
    List<RequestSpec> requests = new ArrayList<>(sorted.size());
    for (Row r : sorted) {
      requests.add(RequestSpec.simple(r.id(), r.arrivalUs(), r.prompt(), r.output()));
    }
    return new NotedSource(RequestSource.of(requests), List.of());
  }

  /** The JSON array of token ids in field {@code column}. */
  private static int[] tokens(CsvFields f, int column) {
    String text = f.string(column).strip();
    try (JsonParser p = JSON.createParser(text)) {
      if (p.nextToken() != JsonToken.START_ARRAY) {
        throw f.error(column, "expected a JSON array of token ids such as [1,2,3]");
      }
      int[] out = new int[16];
      int n = 0;
      JsonToken t;
      while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
        if (t != JsonToken.VALUE_NUMBER_INT || !p.getNumberType().equals(JsonParser.NumberType.INT)
            || p.getIntValue() < 0) {
          throw f.error(column, "token " + n + " is not a token id (an integer in [0, "
              + Integer.MAX_VALUE + "])");
        }
        if (n == RequestSpec.MAX_TOKENS) {
          throw f.error(column, "more than " + RequestSpec.MAX_TOKENS + " tokens, the most a request may have");
        }
        if (n == out.length) {
          out = java.util.Arrays.copyOf(out, Math.min(RequestSpec.MAX_TOKENS, n * 2));
        }
        out[n++] = p.getIntValue();
      }
      if (p.nextToken() != null) {
        throw f.error(column, "unexpected text after the JSON array");
      }
      return java.util.Arrays.copyOf(out, n);
    } catch (IOException e) {
      throw f.error(column, "expected a JSON array of token ids such as [1,2,3]");
    }
  }
}
