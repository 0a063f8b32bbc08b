package io.blis.workload.trace;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.blis.workload.PromptTokens;
import io.blis.workload.RequestOutcome;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads BLIS trace files written by {@link TraceWriter} as a {@link RequestSource}.
 *
 * <p>The file is read twice: a first pass validates every row (so a bad row fails before anything
 * is simulated) and keeps the session follow-up rows (round >= 1); the second pass streams the
 * open-loop rows (no session, or round 0), which must be in non-decreasing arrival order. A
 * follow-up row is released by {@link RequestSource#onFinished} when its previous round completes,
 * at its recorded arrival time or the completion time, whichever is later; a round that did not
 * complete ends its session. Memory is proportional to the number of follow-up rows only.
 */
public final class TraceReader {

  private TraceReader() {}

  /** True when {@code file} starts like a BLIS trace (as opposed to, say, a ground-truth CSV). */
  public static boolean isBlisTrace(Path file) {
    try (LineReader lines = new LineReader(file)) {
      String first = lines.line();
      return first != null && first.startsWith(TraceFormat.MAGIC);
    }
  }

  /** Reads only the header of a trace. */
  public static TraceHeader header(Path file) {
    try (Rows rows = new Rows(file)) {
      return rows.header;
    }
  }

  /** A request source replaying the trace. */
  public static RequestSource open(Path file) {
    Map<Long, Map<Integer, RequestSpec>> followUps = new HashMap<>();
    try (Rows rows = new Rows(file)) {
      long lastOpenArrival = Long.MIN_VALUE;
      RequestSpec[] followUp = new RequestSpec[1];
      while (rows.scan(followUp)) {
        RequestSpec r = followUp[0];
        if (!rows.openLoop) {
          RequestSpec prev = followUps.computeIfAbsent(r.sessionId(), k -> new HashMap<>())
              .put(r.round(), r);
          if (prev != null) {
            throw rows.error("session " + r.sessionId() + " round " + r.round() + " appears twice");
          }
        } else {
          if (rows.arrivalUs < lastOpenArrival) {
            throw rows.error("arrival_us " + rows.arrivalUs
                + " is before the previous open-loop row's " + lastOpenArrival
                + " (open-loop rows must be in arrival order)");
          }
          lastOpenArrival = rows.arrivalUs;
        }
      }
    }
    return new Source(file, followUps);
  }

  private static final class Source implements RequestSource {
    private final Rows rows;
    private final Map<Long, Map<Integer, RequestSpec>> followUps;

    Source(Path file, Map<Long, Map<Integer, RequestSpec>> followUps) {
      this.rows = new Rows(file);
      this.followUps = followUps;
    }

    @Override
    public RequestSpec next() {
      RequestSpec r;
      while ((r = rows.next()) != null) {
        if (r.sessionId() < 0 || r.round() == 0) {
          return r;
        }
      }
      return null;
    }

    @Override
    public List<RequestSpec> onFinished(RequestSpec request, RequestOutcome outcome, long timeUs) {
      if (request.sessionId() < 0) {
        return List.of();
      }
      Map<Integer, RequestSpec> session = followUps.get(request.sessionId());
      if (session == null) {
        return List.of();
      }
      RequestSpec next = session.remove(request.round() + 1);
      if (session.isEmpty() || outcome != RequestOutcome.COMPLETED) {
        followUps.remove(request.sessionId());
      }
      if (next == null || outcome != RequestOutcome.COMPLETED) {
        return List.of();
      }
      return List.of(next.withArrivalTimeUs(Math.max(next.arrivalTimeUs(), timeUs)));
    }

    @Override
    public void close() {
      rows.close();
    }
  }

  /** Parses the rows of a trace file one at a time. */
  static final class Rows implements AutoCloseable {
    private final Path file;
    private final LineReader lines;
    final TraceHeader header;
    private final List<String> columns;
    private final Map<String, String> names = new HashMap<>();

    Rows(Path file) {
      this.file = file;
      this.lines = new LineReader(file);
      String first = lines.line();
      if (first == null || !first.startsWith(TraceFormat.MAGIC)) {
        lines.close();
        throw new IllegalArgumentException(file + ":1: not a BLIS trace: expected a first line '"
            + TraceFormat.MAGIC + "{...}'");
      }
      try {
        header = parseHeader(first.substring(TraceFormat.MAGIC.length()));
      } catch (IllegalArgumentException e) {
        lines.close();
        throw e;
      }
      columns = TraceFormat.columns(header.tokenIds());
      String cols = lines.line();
      if (cols == null || !List.of(cols.strip().split(",", -1)).equals(columns)) {
        lines.close();
        throw new IllegalArgumentException(file + ":2: column header is '" + cols
            + "', expected " + String.join(",", columns));
      }
    }

    private TraceHeader parseHeader(String json) {
      try {
        JsonNode h = new ObjectMapper().readTree(json);
        for (String key : List.of("version", "token_seed", "token_ids")) {
          if (!h.has(key)) {
            throw new IllegalArgumentException(file + ":1: header lacks '" + key + "'");
          }
        }
        if (!"us".equals(h.path("time_unit").asText("us"))) {
          throw new IllegalArgumentException(file + ":1: time_unit must be us");
        }
        if (!h.get("version").canConvertToInt() || !h.get("token_seed").canConvertToLong()
            || !h.get("token_ids").isBoolean()) {
          throw new IllegalArgumentException(
              file + ":1: header needs an integer version and token_seed and a boolean token_ids");
        }
        return new TraceHeader(h.get("version").asInt(), h.get("token_seed").asLong(),
            h.get("token_ids").asBoolean(), h.path("description").asText(""));
      } catch (IOException e) {
        throw new IllegalArgumentException(file + ":1: header is not valid JSON: " + e.getMessage(), e);
      } catch (IllegalArgumentException e) {
        if (e.getMessage() != null && e.getMessage().startsWith(file.toString())) {
          throw e;
        }
        throw new IllegalArgumentException(file + ":1: " + e.getMessage(), e);
      }
    }

    IllegalArgumentException error(String message) {
      return lines.error(message);
    }

    /** Arrival of the row last parsed, microseconds. */
    long arrivalUs;
    /** Whether the row last parsed is open-loop (no session, or round 0). */
    boolean openLoop;

    /** The next row as a request, or null at the end. */
    RequestSpec next() {
      String line = lines.nonBlankLine();
      return line == null ? null : parse(line, true);
    }

    /**
     * Parses and validates the next row; returns false at the end. The request (with its prompt)
     * is built only for follow-up rows and returned through {@code followUp[0]} (else null).
     */
    boolean scan(RequestSpec[] followUp) {
      String line = lines.nonBlankLine();
      if (line == null) {
        return false;
      }
      followUp[0] = parse(line, false);
      return true;
    }

    private RequestSpec parse(String line, boolean buildOpenLoop) {
      CsvFields f = new CsvFields(file.toString(), lines.lineNo(), columns, line);
      long id = f.longValue(0);
      long arrival = f.longValue(1);
      int input = f.intValue(2, 1);
      int output = f.intValue(3, 1);
      String group = intern(f.string(4));
      int prefix = f.intValue(5, 0);
      if (prefix > input) {
        throw f.error(5, "prefix_length exceeds input_tokens " + input);
      }
      if (prefix > 0 && group.isEmpty()) {
        throw f.error(5, "a prefix length needs a prefix_group");
      }
      long contentId;
      try {
        contentId = Long.parseLong(f.string(6).strip());
      } catch (NumberFormatException e) {
        throw f.error(6, "expected a 64-bit integer");
      }
      long session = f.longValueAllowMinusOne(7);
      int round = f.intValue(8, 0);
      String slo = intern(f.string(9));
      if (slo.isEmpty()) {
        throw f.error(9, "expected an SLO class name");
      }
      String tenant = intern(f.string(10));
      int stage = f.intValue(11, 0);
      long timeout = f.longValue(12);
      arrivalUs = arrival;
      openLoop = session < 0 || round == 0;
      int[] tokens;
      if (header.tokenIds()) {
        String[] parts = f.string(13).strip().split(" ", -1);
        if (parts.length != input) {
          throw f.error(13, "expected " + input + " token ids (input_tokens), got " + parts.length);
        }
        tokens = new int[input];
        for (int i = 0; i < input; i++) {
          try {
            tokens[i] = Integer.parseInt(parts[i]);
          } catch (NumberFormatException e) {
            throw f.error(13, "token " + i + " '" + parts[i] + "' is not an integer");
          }
        }
      } else if (buildOpenLoop || !openLoop) {
        tokens = PromptTokens.rebuild(header.tokenSeed(), group, prefix, contentId, input);
      } else {
        return null;
      }
      if (!buildOpenLoop && openLoop) {
        return null;
      }
      return new RequestSpec(
          id, arrival, tokens, output, slo, tenant, group, prefix, session, round, timeout, stage);
    }

    private String intern(String s) {
      String seen = names.putIfAbsent(s, s);
      return seen != null ? seen : s;
    }

    @Override
    public void close() {
      lines.close();
    }
  }
}
