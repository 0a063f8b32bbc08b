package io.blis.workload.trace;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.blis.workload.PromptTokens;
import io.blis.workload.RequestOutcome;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import io.blis.workload.StrictYaml;
import io.blis.workload.TextFiles;
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
 * complete ends its session. Memory is proportional to the number of follow-up rows, plus a bit per
 * request id and per session (for ids numbered from 0; a few bytes each otherwise).
 */
public final class TraceReader {

  /** Reads the JSON of a header line: duplicate keys and trailing content are errors. */
  private static final ObjectMapper HEADER_JSON = JsonMapper.builder()
      .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
      .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
      .build();

  private TraceReader() {}

  /**
   * True when {@code file} starts like a BLIS trace (as opposed to, say, a ground-truth CSV).
   *
   * @throws IllegalArgumentException when the file can be a trace of no kind: a directory, an
   *     empty file, or not text
   */
  public static boolean isBlisTrace(Path file) {
    try (LineReader lines = new LineReader(file)) {
      return lines.firstLine("a trace").startsWith(TraceFormat.MAGIC);
    }
  }

  /** Reads only the header of a trace. */
  public static TraceHeader header(Path file) {
    try (Rows rows = new Rows(file)) {
      return rows.header;
    }
  }

  /**
   * A request source replaying the trace. Every row is checked first: its fields (token counts at
   * most {@link RequestSpec#MAX_TOKENS}, times at most {@link RequestSpec#MAX_TIME_US}), unique
   * request ids, open-loop rows in arrival order, and every follow-up round's previous round
   * present; a trace without rows is refused.
   *
   * @throws IllegalArgumentException naming the file and line of the first problem
   */
  public static RequestSource open(Path file) {
    Map<Long, Map<Integer, RequestSpec>> followUps = new HashMap<>();
    LongSet ids = new LongSet();
    LongSet firstRounds = new LongSet();
    long rowCount = 0;
    try (Rows rows = new Rows(file)) {
      long lastOpenArrival = Long.MIN_VALUE;
      RequestSpec[] followUp = new RequestSpec[1];
      while (rows.scan(followUp)) {
        rowCount++;
        if (!ids.add(rows.id)) {
          long id = rows.id;
          throw rows.error("request id " + id + " appears twice, on lines "
              + firstLine(file, r -> r.id == id) + " and " + rows.line());
        }
        RequestSpec r = followUp[0];
        if (!rows.openLoop) {
          RequestSpec prev = followUps.computeIfAbsent(r.sessionId(), k -> new HashMap<>())
              .put(r.round(), r);
          if (prev != null) {
            throw rows.error(sessionRoundTwice(file, rows));
          }
        } else {
          if (rows.sessionId >= 0 && !firstRounds.add(rows.sessionId)) {
            throw rows.error(sessionRoundTwice(file, rows));
          }
          if (rows.arrivalUs < lastOpenArrival) {
            throw rows.error("arrival_us " + rows.arrivalUs
                + " is before the previous open-loop row's " + lastOpenArrival
                + " (open-loop rows must be in arrival order)");
          }
          lastOpenArrival = rows.arrivalUs;
        }
      }
    }
    if (rowCount == 0) {
      throw new IllegalArgumentException(
          file + ": no requests: the trace has its two header lines and no rows");
    }
    if (!everyRoundHasItsPrevious(followUps, firstRounds)) {
      reportMissingRound(file, followUps, firstRounds);
    }
    return new Source(file, followUps);
  }

  private static boolean hasPrevious(
      long session, int round, Map<Long, Map<Integer, RequestSpec>> followUps, LongSet firstRounds) {
    return round == 1 ? firstRounds.contains(session) : followUps.get(session).containsKey(round - 1);
  }

  private static boolean everyRoundHasItsPrevious(
      Map<Long, Map<Integer, RequestSpec>> followUps, LongSet firstRounds) {
    for (Map.Entry<Long, Map<Integer, RequestSpec>> e : followUps.entrySet()) {
      for (int round : e.getValue().keySet()) {
        if (!hasPrevious(e.getKey(), round, followUps, firstRounds)) {
          return false;
        }
      }
    }
    return true;
  }

  /** Reads the file again to name the first follow-up row whose previous round is missing. */
  private static void reportMissingRound(
      Path file, Map<Long, Map<Integer, RequestSpec>> followUps, LongSet firstRounds) {
    try (Rows rows = new Rows(file)) {
      RequestSpec[] ignored = new RequestSpec[1];
      while (rows.scan(ignored)) {
        if (!rows.openLoop
            && !hasPrevious(rows.sessionId, rows.round, followUps, firstRounds)) {
          throw rows.error("session " + rows.sessionId + " round " + rows.round + " has no round "
              + (rows.round - 1) + " in the trace: a follow-up round is sent only when the"
              + " previous round of its session completes (to send this row at its own time, give"
              + " it session_id -1 and round 0)");
        }
      }
    }
    throw new IllegalStateException(file + ": a session round without its previous round");
  }

  private static String sessionRoundTwice(Path file, Rows rows) {
    long session = rows.sessionId;
    int round = rows.round;
    return "session " + session + " round " + round + " appears twice, on lines "
        + firstLine(file, r -> r.sessionId == session && r.round == round) + " and " + rows.line();
  }

  /** The line of the first row of {@code file} that {@code match} accepts (an error path). */
  private static int firstLine(Path file, java.util.function.Predicate<Rows> match) {
    try (Rows rows = new Rows(file)) {
      RequestSpec[] ignored = new RequestSpec[1];
      while (rows.scan(ignored)) {
        if (match.test(rows)) {
          return rows.line();
        }
      }
    }
    throw new IllegalStateException(file + ": the row looked for is gone");
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

    /** The rows read by {@link #next()} and the follow-ups {@link #onFinished} releases are apart. */
    @Override
    public boolean readableAhead() {
      return true;
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
    /** Whether the trace has a model column. */
    private final boolean models;
    /** Whether the trace has an adapter column. */
    private final boolean adapters;
    private final Map<String, String> names = new HashMap<>();

    Rows(Path file) {
      this.file = file;
      this.lines = new LineReader(file);
      String first = lines.firstLine("a BLIS trace (a first line '" + TraceFormat.MAGIC + "{...}')");
      if (!first.startsWith(TraceFormat.MAGIC)) {
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
      String cols = lines.line();
      List<String> given = cols == null ? List.of() : List.of(cols.strip().split(",", -1));
      // the optional model and adapter columns, each there or not
      boolean withModels = false;
      boolean withAdapters = false;
      for (boolean m : new boolean[] {false, true}) {
        for (boolean a : new boolean[] {false, true}) {
          if (given.equals(TraceFormat.columns(header.tokenIds(), m, a))) {
            withModels = m;
            withAdapters = a;
          }
        }
      }
      models = withModels;
      adapters = withAdapters;
      columns = TraceFormat.columns(header.tokenIds(), models, adapters);
      if (cols == null || !given.equals(columns)) {
        lines.close();
        throw new IllegalArgumentException(file + ":2: "
            + (cols == null ? "missing the column header line" : "column header is '"
                + TextFiles.quote(cols) + "'")
            + ", expected " + String.join(",", columns) + " (with a model and then an adapter column"
            + " after timeout_us when the requests name them)");
      }
    }

    private TraceHeader parseHeader(String json) {
      int column = TraceFormat.MAGIC.length();
      JsonNode h;
      try {
        h = HEADER_JSON.readTree(json);
      } catch (JsonProcessingException e) {
        JsonLocation loc = e.getLocation();
        throw new IllegalArgumentException(file + ":1:"
            + (loc != null && loc.getColumnNr() > 0 ? (column + loc.getColumnNr()) + ":" : "")
            + " header: " + StrictYaml.problem(e), e);
      }
      if (h == null || !h.isObject()) {
        throw new IllegalArgumentException(file + ":1: the header after '" + TraceFormat.MAGIC
            + "' must be a JSON object {\"version\":1,...}");
      }
      for (String key : List.of("version", "token_seed", "token_ids")) {
        if (!h.has(key)) {
          throw new IllegalArgumentException(file + ":1: header lacks '" + key + "'");
        }
      }
      if (!"us".equals(h.path("time_unit").asText("us"))) {
        throw new IllegalArgumentException(file + ":1: time_unit must be us");
      }
      if (!isInt(h.get("version")) || !h.get("token_seed").isIntegralNumber()
          || !h.get("token_seed").canConvertToLong() || !h.get("token_ids").isBoolean()) {
        throw new IllegalArgumentException(
            file + ":1: header needs an integer version and token_seed and a boolean token_ids");
      }
      try {
        return new TraceHeader(h.get("version").asInt(), h.get("token_seed").asLong(),
            h.get("token_ids").asBoolean(), h.path("description").asText(""));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(file + ":1: " + e.getMessage(), e);
      }
    }

    private static boolean isInt(JsonNode n) {
      return n.isIntegralNumber() && n.canConvertToInt();
    }

    IllegalArgumentException error(String message) {
      return lines.error(message);
    }

    /** Id of the row last parsed. */
    long id;
    /** Arrival of the row last parsed, microseconds. */
    long arrivalUs;
    /** Session (-1 for none) and round of the row last parsed. */
    long sessionId;
    int round;
    /** Whether the row last parsed is open-loop (no session, or round 0). */
    boolean openLoop;

    /** Line of the row last parsed. */
    int line() {
      return lines.lineNo();
    }

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
      long arrival = f.longValue(1, 0, RequestSpec.MAX_TIME_US, "the latest simulated time, us");
      int input = f.intValue(2, 1, RequestSpec.MAX_TOKENS, "the most tokens a request may have");
      int output = f.intValue(3, 1, RequestSpec.MAX_TOKENS, "the most tokens a request may have");
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
      if (session < 0 && round != 0) {
        throw f.error(8, "a row without a session (session_id -1) must have round 0");
      }
      String slo = intern(f.string(9));
      if (slo.isEmpty()) {
        throw f.error(9, "expected an SLO class name");
      }
      String tenant = intern(f.string(10));
      int stage = f.intValue(11, 0);
      long timeout = f.longValue(12, 0, RequestSpec.MAX_TIME_US, "the longest timeout, us");
      int column = 13;
      String model = models ? intern(f.string(column++).strip()) : "";
      String adapter = adapters ? intern(f.string(column++).strip()) : "";
      int tokenColumn = column;
      this.id = id;
      arrivalUs = arrival;
      sessionId = session;
      this.round = round;
      openLoop = session < 0 || round == 0;
      int[] tokens;
      if (header.tokenIds()) {
        String[] parts = f.string(tokenColumn).strip().split(" ", -1);
        if (parts.length != input) {
          throw f.error(tokenColumn, "expected " + input + " token ids (input_tokens), got " + parts.length);
        }
        tokens = new int[input];
        for (int i = 0; i < input; i++) {
          try {
            tokens[i] = Integer.parseInt(parts[i]);
          } catch (NumberFormatException e) {
            throw f.error(tokenColumn, "token " + i + " '" + TextFiles.quote(parts[i]) + "' is not an integer");
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
          id, arrival, tokens, output, slo, tenant, group, prefix, session, round, timeout, stage, model,
          adapter);
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
