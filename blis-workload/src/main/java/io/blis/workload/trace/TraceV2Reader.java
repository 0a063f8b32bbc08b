package io.blis.workload.trace;

import com.fasterxml.jackson.databind.JsonNode;
import io.blis.workload.PromptTokens;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import io.blis.workload.StrictYaml;
import io.blis.workload.TextFiles;
import io.blis.workload.synthetic.ClientSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Reads Go BLIS's TraceV2 (what its {@code observe}, {@code run --trace-output} and {@code replay}
 * write): a header {@code PREFIX.yaml} and the requests {@code PREFIX.csv}, times in microseconds.
 * Every row is sent at its recorded time (send_time_us, or arrival_time_us when 0), as Go BLIS's
 * {@code replay --session-mode fixed} does; rows are sorted by that time (ties keep file order).
 *
 * <p>A row's prompt is its group's shared prefix (the prefix_length of the group's first row, as in
 * Go BLIS) followed by input_tokens tokens of its own (or server_input_tokens when that is above 0
 * and the row has no group); it asks for output_tokens tokens (0 becomes 1: a request here
 * generates at least one); deadline_us becomes a timeout from the send time. Send times beyond the
 * latest simulated time, the Unix-epoch microseconds Go BLIS's observe writes, are moved back by the
 * earliest of them so that the first request is sent at 0 (with a note); a deadline is then a
 * timeout from the row's arrival_time_us, as Go BLIS sets it. Columns and header
 * keys that do not shape the simulation are listed as notes. Rows are validated on reading;
 * errors name the file, line and column.
 *
 * <p>{@link #recorded} reads the same pair for what was measured (the rows' send, first-chunk and
 * last-chunk times, tokens and status, the header's warm-up count, RTT and observed KV hit rate),
 * and {@link #itl} the per-chunk times of {@code observe --record-itl}: the observed side of {@code
 * blis calibrate --trace-header/--trace-data/--sim-results}.
 */
public final class TraceV2Reader {

  /** The columns every TraceV2 data file has. */
  public static final List<String> COLUMNS = List.of("request_id", "client_id", "tenant_id",
      "slo_class", "session_id", "round_index", "prefix_group", "prefix_length", "streaming",
      "input_tokens", "output_tokens", "text_tokens", "image_tokens", "audio_tokens",
      "video_tokens", "reason_ratio", "model", "deadline_us", "server_input_tokens",
      "arrival_time_us", "send_time_us", "first_chunk_time_us", "last_chunk_time_us", "num_chunks",
      "status", "error_message", "finish_reason");

  /** Columns Go BLIS writes only when used. */
  public static final List<String> OPTIONAL = List.of("vllm_priority", "slo_target_us",
      "x_request_id", "adapter", "think_time_us");

  private static final Pattern HEADER_KEY = Pattern.compile("^trace_version\\s*:");

  private TraceV2Reader() {}

  /** Binding of the header YAML. */
  record HeaderFile(Integer traceVersion, String timeUnit, String createdAt, String mode,
      Integer warmUpRequests, Long workloadSeed, String workloadSpec, String sessionContextGrowth,
      Server server, Network network, JsonNode goodputSloTargets, JsonNode kvOffload,
      JsonNode observedKvMetrics) {}

  record Server(String type, String model, Integer tensorParallel, Integer maxNumSeqs,
      Integer blockSize, Double gpuMemoryUtilization, Long maxModelLen) {}

  record Network(Double measuredRttMs) {}

  /** Whether {@code file} is a TraceV2 header: YAML with a top-level {@code trace_version}. */
  public static boolean isHeader(Path file) {
    try (LineReader lines = new LineReader(file)) {
      String line;
      for (int i = 0; i < 200 && (line = lines.line()) != null; i++) {
        if (HEADER_KEY.matcher(line).find()) {
          return true;
        }
      }
      return false;
    }
  }

  /** Whether {@code file} is TraceV2 data: a CSV whose first line starts with its columns. */
  public static boolean isData(Path file) {
    try (LineReader lines = new LineReader(file)) {
      String first = lines.line();
      return first != null && first.startsWith("request_id,client_id,");
    }
  }

  /**
   * The header and data of the TraceV2 pair {@code given} belongs to: {@code PREFIX.yaml} and
   * {@code PREFIX.csv}, whichever of them (or the prefix itself) was given.
   *
   * @throws IllegalArgumentException naming the file that is missing
   */
  public static Path[] pair(Path given) {
    String name = given.getFileName().toString();
    String prefix = name.endsWith(".yaml") || name.endsWith(".csv")
        ? name.substring(0, name.lastIndexOf('.')) : name.endsWith(".yml")
        ? name.substring(0, name.length() - 4) : name;
    Path dir = given.toAbsolutePath().getParent();
    Path header = name.endsWith(".yml") ? given : dir.resolve(prefix + ".yaml");
    Path data = dir.resolve(prefix + ".csv");
    if (!Files.isRegularFile(header) && Files.isRegularFile(dir.resolve(prefix + ".yml"))) {
      header = dir.resolve(prefix + ".yml");
    }
    for (Path p : new Path[] {header, data}) {
      if (!Files.isRegularFile(p)) {
        throw new IllegalArgumentException(given + ": a Go BLIS TraceV2 is two files, " + prefix
            + ".yaml (header) and " + prefix + ".csv (requests), and " + p + " is missing");
      }
    }
    return new Path[] {given.isAbsolute() ? header : relative(given, header),
        given.isAbsolute() ? data : relative(given, data)};
  }

  private static Path relative(Path given, Path sibling) {
    Path parent = given.getParent();
    return parent == null ? sibling.getFileName() : parent.resolve(sibling.getFileName());
  }

  /** One row, before its prompt is built. */
  /**
   * A row: as read, its send time (send_time_us, or arrival_time_us when 0), deadline_us (0 for
   * none) and arrival_time_us; as replayed, its send time moved and its timeout.
   */
  private record Row(long id, long arrivalUs, int ownTokens, int groupIndex, int outputTokens,
      String sloClass, String tenant, long timeoutUs, String adapter, int line, long deadlineUs,
      long recordedArrivalUs) {}

  /**
   * When the rows' send times lie beyond the latest simulated time, as the Unix-epoch microseconds
   * Go BLIS's observe writes do: the earliest of them, by which every row is moved back so that the
   * first request is sent at 0 (with a note); otherwise 0.
   */
  private static long epochShift(Path data, List<Row> rows, List<String> notes) {
    long min = Long.MAX_VALUE;
    long max = Long.MIN_VALUE;
    for (Row r : rows) {
      min = Math.min(min, r.arrivalUs());
      max = Math.max(max, r.arrivalUs());
    }
    if (max <= RequestSpec.MAX_TIME_US) {
      return 0;
    }
    notes.add(0, data + ": send_time_us are wall-clock (Unix epoch) microseconds, as Go BLIS's observe writes"
        + " them: every request is moved back by " + min + " us, so that the first is sent at 0");
    return min;
  }

  /** Whether the TraceV2 data file {@code data} has an {@code adapter} column (its requests may name LoRA adapters). */
  public static boolean hasAdapterColumn(Path data) {
    try (LineReader lines = new LineReader(data)) {
      String first = lines.firstLine("a TraceV2 data file (a first line request_id,client_id,...)");
      return List.of(first.strip().split(",", -1)).contains("adapter");
    }
  }

  /**
   * Reads and checks the pair and returns its requests. Token ids are drawn under {@code seed}
   * (they only decide which prompts share cache blocks: rows of one prefix group share their
   * prefix, nothing else is shared).
   */
  public static NotedSource open(Path header, Path data, long seed) {
    List<String> notes = new ArrayList<>();
    header(header, notes);
    List<Row> rows = new ArrayList<>();
    List<String> groups = new ArrayList<>();
    List<Integer> groupLengths = new ArrayList<>();
    Map<String, Integer> groupIndex = new HashMap<>();
    Map<String, String> once = new LinkedHashMap<>();
    Map<String, String> names = new HashMap<>();
    int[] zeroOutputs = {0};
    String[] firstZeroOutput = {null};
    forEachRow(data, (f, at, id, lineNo) -> {
      String where = data + ":" + lineNo;
      String slo = f.string(at.get("slo_class")).strip();
      if (slo.isEmpty()) {
        slo = "standard";
      } else if (!ClientSpec.SLO_CLASSES.contains(slo)) {
        throw f.error(at.get("slo_class"), "expected an SLO class, one of " + ClientSpec.SLO_CLASSES);
      }
      String group = f.string(at.get("prefix_group")).strip();
      int prefix = f.intValue(at.get("prefix_length"), 0, RequestSpec.MAX_TOKENS, "the most tokens a request may have");
      int input = f.intValue(at.get("input_tokens"), 0, RequestSpec.MAX_TOKENS, "the most tokens a request may have");
      int output = f.intValue(at.get("output_tokens"), 0, RequestSpec.MAX_TOKENS, "the most tokens a request may have");
      int server = f.intValue(at.get("server_input_tokens"), 0, RequestSpec.MAX_TOKENS, "the most tokens a request may have");
      // epoch microseconds too (Go BLIS's observe): moved to 0 below
      long arrival = f.longValue(at.get("arrival_time_us"), 0, Long.MAX_VALUE, "");
      long send = f.longValue(at.get("send_time_us"), 0, Long.MAX_VALUE, "");
      long deadline = f.longValue(at.get("deadline_us"), 0, Long.MAX_VALUE, "");
      int gi = -1;
      int own = input;
      if (!group.isEmpty()) {
        Integer known = groupIndex.get(group);
        if (known == null) {
          known = groups.size();
          groupIndex.put(group, known);
          groups.add(group);
          groupLengths.add(prefix);
        } else if (groupLengths.get(known) != prefix) {
          once.putIfAbsent("prefix_length", where + ": prefix_length " + prefix + " differs from the "
              + groupLengths.get(known) + " of group " + group + "'s first row, which every row of"
              + " the group uses (as in Go BLIS)");
        }
        gi = known;
      } else if (prefix > 0) {
        throw f.error(at.get("prefix_length"), "a prefix length needs a prefix_group");
      } else if (server > 0) {
        own = server;
      }
      if (own + (gi < 0 ? 0 : groupLengths.get(gi)) < 1) {
        throw f.error(at.get("input_tokens"), "a prompt needs at least one token (input_tokens,"
            + " server_input_tokens and the group prefix are all 0)");
      }
      if (output == 0) {
        zeroOutputs[0]++;
        firstZeroOutput[0] = firstZeroOutput[0] == null ? where : firstZeroOutput[0];
        output = 1;
      }
      long at0 = send > 0 ? send : arrival;
      String adapter = at.containsKey("adapter") ? intern(names, f.string(at.get("adapter")).strip()) : "";
      rows.add(new Row(id, at0, own, gi, output, intern(names, slo),
          intern(names, f.string(at.get("tenant_id")).strip()), 0, adapter, lineNo, deadline, arrival));
      noteColumns(f, at, where, once);
    });
    if (rows.isEmpty()) {
      throw new IllegalArgumentException(data + ": no requests: the TraceV2 data has its column line"
          + " and no rows");
    }
    if (zeroOutputs[0] > 0) {
      once.put("output_tokens", firstZeroOutput[0] + ": " + zeroOutputs[0] + " row(s) with output_tokens 0"
          + " are simulated with 1 output token (a request here generates at least one)");
    }
    long shift = epochShift(data, rows, notes);
    notes.addAll(once.values());
    List<Row> sorted = new ArrayList<>(rows.size());
    for (Row r : rows) {
      long t = r.arrivalUs() - shift;
      if (t > RequestSpec.MAX_TIME_US) {
        throw new IllegalArgumentException(data + ":" + r.line() + ": send_time_us " + r.arrivalUs() + " is "
            + (shift > 0 ? t + " us after the first request's, " : "") + "beyond the latest simulated time, "
            + RequestSpec.MAX_TIME_US + " us (" + RequestSpec.MAX_TIME_WORDS + ")");
      }
      // a deadline is a timeout from the send time; moved, from the row's recorded arrival (Go BLIS's own)
      long left = r.deadlineUs() - (shift > 0 ? r.recordedArrivalUs() : r.arrivalUs());
      long timeout = r.deadlineUs() == 0 ? 0 : Math.max(1, Math.min(RequestSpec.MAX_TIME_US, left));
      sorted.add(new Row(r.id(), t, r.ownTokens(), r.groupIndex(), r.outputTokens(), r.sloClass(), r.tenant(),
          timeout, r.adapter(), r.line(), r.deadlineUs(), r.recordedArrivalUs()));
    }
    sorted.sort((a, b) -> Long.compare(a.arrivalUs(), b.arrivalUs())); // stable: ties keep file order
    int[] lengths = groupLengths.stream().mapToInt(Integer::intValue).toArray();
    String[] groupNames = groups.toArray(String[]::new);
    return new NotedSource(new RequestSource() {
      private int next;

      @Override
      public RequestSpec next() {
        if (next >= sorted.size()) {
          return null;
        }
        Row r = sorted.get(next++);
        String group = r.groupIndex() < 0 ? "" : groupNames[r.groupIndex()];
        int prefix = r.groupIndex() < 0 ? 0 : lengths[r.groupIndex()];
        // in the form a BLIS trace without token ids rebuilds: blis convert writes none
        int[] prompt = PromptTokens.rebuildable(seed, group, prefix, r.id(), prefix + r.ownTokens());
        return new RequestSpec(r.id(), r.arrivalUs(), prompt, r.outputTokens(), r.sloClass(), r.tenant(),
            group, prefix, -1, 0, r.timeoutUs(), 0, "", r.adapter());
      }
    }, notes);
  }

  private static String intern(Map<String, String> names, String s) {
    String seen = names.putIfAbsent(s, s);
    return seen != null ? seen : s;
  }

  private static Map<String, Integer> columnIndex(Path data, List<String> columns) {
    Map<String, Integer> at = new HashMap<>();
    for (int i = 0; i < columns.size(); i++) {
      String c = columns.get(i);
      if (!COLUMNS.contains(c) && !OPTIONAL.contains(c)) {
        throw new IllegalArgumentException(data + ":1:" + (String.join(",", columns.subList(0, i)).length()
            + (i > 0 ? 2 : 1)) + ": unknown column '" + TextFiles.quote(c) + "', expected the TraceV2"
            + " columns " + String.join(",", COLUMNS) + " (and optionally " + String.join(", ", OPTIONAL) + ")");
      }
      if (at.put(c, i) != null) {
        throw new IllegalArgumentException(data + ":1: column '" + c + "' appears twice");
      }
    }
    for (String c : COLUMNS) {
      if (!at.containsKey(c)) {
        throw new IllegalArgumentException(data + ":1: missing column '" + c + "'; a TraceV2 data file"
            + " has the columns " + String.join(",", COLUMNS));
      }
    }
    return at;
  }

  /** Columns that do not shape the simulation: one note per column, at its first use. */
  private static void noteColumns(CsvFields f, Map<String, Integer> at, String where,
      Map<String, String> once) {
    for (String c : List.of("session_id", "model", "vllm_priority", "slo_target_us",
        "think_time_us", "reason_ratio", "image_tokens", "audio_tokens", "video_tokens")) {
      Integer i = at.get(c);
      if (i == null || once.containsKey(c)) {
        continue;
      }
      String v = f.string(i).strip();
      if (v.isEmpty() || v.equals("0") || v.equals("0.0")) {
        continue;
      }
      once.put(c, where + ": " + c + " has no meaning here: " + switch (c) {
        case "session_id", "think_time_us" -> "every row is sent at its recorded time (Go BLIS's"
            + " --session-mode fixed), so sessions and think times do not pace it";
        case "model" -> "the simulated model comes from --model or the policy config's pools";
        case "vllm_priority" -> "the priority comes from slo_class and the priority policy";
        case "slo_target_us" -> "SLO targets go in --policy-config (slo:)";
        case "reason_ratio" -> "reasoning tokens are output tokens like any other";
        default -> "input_tokens is the prompt length; its split by modality is not simulated";
      });
    }
  }

  private static HeaderFile header(Path file, List<String> notes) {
    String text = TextFiles.readConfig(file);
    HeaderFile h = StrictYaml.parse(text, file.toString(), HeaderFile.class);
    String source = file.toString();
    if (h.traceVersion() == null || h.traceVersion() < 1 || h.traceVersion() > 3) {
      throw new IllegalArgumentException(StrictYaml.location(source, text, "trace_version")
          + ": trace_version must be 1, 2 or 3 (Go BLIS TraceV2), got " + h.traceVersion());
    }
    if (h.timeUnit() != null && !h.timeUnit().equals("us")) {
      throw new IllegalArgumentException(StrictYaml.location(source, text, "time_unit")
          + ": time_unit must be us (microseconds), got '" + h.timeUnit() + "'");
    }
    if (h.warmUpRequests() != null && h.warmUpRequests() > 0) {
      notes.add(StrictYaml.location(source, text, "warm_up_requests")
          + ": warm_up_requests has no meaning here: the warm-up rows are simulated like the others"
          + " (Go BLIS leaves them out only when calibrating)");
    }
    if (h.server() != null) {
      notes.add(StrictYaml.location(source, text, "server")
          + ": server is not applied: the simulated deployment comes from --model, --tp, --max-num-seqs,"
          + " --block-size, --gpu-memory-utilization, --max-model-len");
    }
    String[][] noted = {
        {"network", "there is no client network in the simulation"},
        {"session_context_growth", "every row is sent at its recorded time with its recorded length"},
        {"goodput_slo_targets", "SLO targets go in --policy-config (slo:)"},
        {"kv_offload", "a run takes the CPU KV tier from its flags (blis replay applies it)"},
        {"observed_kv_metrics", "measurements of the real run, not inputs of a simulation"}};
    Object[] values = {h.network() == null || h.network().measuredRttMs() == null ? null : h.network(),
        h.sessionContextGrowth(), h.goodputSloTargets(), h.kvOffload(),
        h.observedKvMetrics()};
    for (int i = 0; i < noted.length; i++) {
      if (values[i] != null && !(values[i] instanceof JsonNode n && n.isNull())) {
        notes.add(StrictYaml.location(source, text, noted[i][0]) + ": " + noted[i][0]
            + " has no meaning here: " + noted[i][1]);
      }
    }
    return h;
  }

  // ---- the recorded timings (blis calibrate's observed side) ----

  /**
   * One row as recorded: its tokens and times, in microseconds on the clock of the trace (Go BLIS's
   * {@code observe} writes epoch microseconds). Latencies are differences of its times, so they do
   * not depend on where that clock starts.
   *
   * @param requestId request_id
   * @param sloClass slo_class as written (may be empty)
   * @param model model as written (may be empty)
   * @param prefixGroup prefix_group (may be empty)
   * @param prefixLength prefix_length
   * @param inputTokens input_tokens (without the group prefix)
   * @param serverInputTokens server_input_tokens: the prompt tokens the server reported, 0 when not recorded
   * @param outputTokens output_tokens
   * @param arrivalTimeUs arrival_time_us
   * @param sendTimeUs send_time_us
   * @param firstChunkTimeUs first_chunk_time_us, 0 when no chunk came
   * @param lastChunkTimeUs last_chunk_time_us, 0 when no chunk came
   * @param numChunks num_chunks
   * @param status status (ok, error, timeout)
   */
  public record RecordedRow(long requestId, String sloClass, String model, String prefixGroup, int prefixLength,
      int inputTokens, int serverInputTokens, int outputTokens, long arrivalTimeUs, long sendTimeUs,
      long firstChunkTimeUs, long lastChunkTimeUs, int numChunks, String status) {

    /** When the request left the client: send_time_us, or arrival_time_us when that is 0 (as {@link #open} sends it). */
    public long sentUs() {
      return sendTimeUs > 0 ? sendTimeUs : arrivalTimeUs;
    }

    /** Time to first token as the client saw it: first_chunk_time_us minus the send time. */
    public long ttftUs() {
      return firstChunkTimeUs - sentUs();
    }

    /** End-to-end latency as the client saw it: last_chunk_time_us minus the send time. */
    public long e2eUs() {
      return lastChunkTimeUs - sentUs();
    }

    /**
     * Whether the row has usable latencies: a first and a last chunk were recorded, neither before
     * the send time (a row without them, e.g. a failed request, or with clock skew has none).
     */
    public boolean timed() {
      return firstChunkTimeUs > 0 && lastChunkTimeUs > 0 && ttftUs() >= 0 && e2eUs() >= 0;
    }

    /**
     * The prompt tokens the server saw: server_input_tokens when recorded, else the group prefix
     * and input_tokens (what {@link #open} simulates for the row).
     */
    public int promptTokens() {
      return serverInputTokens > 0 ? serverInputTokens : (prefixGroup.isEmpty() ? 0 : prefixLength) + inputTokens;
    }
  }

  /**
   * The KV cache hit rate the real server reported over the run (header {@code
   * observed_kv_metrics}, Go BLIS's {@code observe --scrape-kv-metrics}).
   *
   * @param source which counters it came from (tiered, gpu-prefix-cache-fallback)
   * @param hitRate hits over queries, in [0, 1]
   */
  public record ObservedKvMetrics(String source, double hitRate) {}

  /** One data row: its fields, the columns by name, its request id (checked unique) and its line. */
  private interface RowVisitor {
    void row(CsvFields f, Map<String, Integer> at, long id, int lineNo);
  }

  /** Reads {@code data}'s column line, then hands each row to {@code v}, refusing a repeated request id. */
  private static void forEachRow(Path data, RowVisitor v) {
    LongSet ids = new LongSet();
    try (LineReader lines = new LineReader(data)) {
      String first = lines.firstLine("a TraceV2 data file (a first line request_id,client_id,...)");
      List<String> columns = List.of(first.strip().split(",", -1));
      Map<String, Integer> at = columnIndex(data, columns);
      String line;
      while ((line = lines.nonBlankLine()) != null) {
        CsvFields f = CsvFields.quoted(data.toString(), lines.lineNo(), columns, line);
        long id = f.longValue(at.get("request_id"), 0, Long.MAX_VALUE, "");
        if (!ids.add(id)) {
          throw f.error(at.get("request_id"), "request_id " + id + " appears twice");
        }
        v.row(f, at, id, lines.lineNo());
      }
    }
  }

  /**
   * A TraceV2 pair read for its recorded outcomes.
   *
   * @param mode header mode (real, generated, replayed), empty when absent
   * @param warmUpRequests header warm_up_requests (0 when absent): requests with a lower id are warm-up
   * @param measuredRttMs header network.measured_rtt_ms, 0 when absent
   * @param observedKv header observed_kv_metrics, or null
   * @param goodputTargets whether the header has goodput_slo_targets
   * @param rows the rows in file order
   */
  public record Recorded(String mode, int warmUpRequests, double measuredRttMs, ObservedKvMetrics observedKv,
      boolean goodputTargets, List<RecordedRow> rows) {}

  /**
   * Reads the pair's recorded outcomes: every row with its tokens and times (not sorted, nothing
   * simulated). Times are any non-negative microsecond values (epoch ones included). Errors name
   * the file, line and column.
   */
  public static Recorded recorded(Path header, Path data) {
    HeaderFile h = header(header, new ArrayList<>());
    ObservedKvMetrics kv = null;
    JsonNode o = h.observedKvMetrics();
    if (o != null && !o.isNull()) {
      JsonNode rate = o.get("hit_rate");
      if (!o.isObject() || rate == null || !rate.isNumber() || !(rate.asDouble() >= 0) || rate.asDouble() > 1) {
        throw new IllegalArgumentException(header + ": observed_kv_metrics.hit_rate must be a number in [0, 1], got "
            + (rate == null ? "none" : rate.toString()));
      }
      kv = new ObservedKvMetrics(o.path("source").asText(""), rate.asDouble());
    }
    double rtt = h.network() == null || h.network().measuredRttMs() == null ? 0 : h.network().measuredRttMs();
    if (!(rtt >= 0) || !Double.isFinite(rtt)) {
      throw new IllegalArgumentException(header + ": network.measured_rtt_ms must be a non-negative number, got " + rtt);
    }
    JsonNode gp = h.goodputSloTargets();
    boolean goodput = gp != null && !gp.isNull() && !(gp.isObject() && gp.isEmpty());
    List<RecordedRow> rows = new ArrayList<>();
    Map<String, String> names = new HashMap<>();
    forEachRow(data, (f, at, id, lineNo) -> {
      String bound = "the most tokens a request may have";
      rows.add(new RecordedRow(id, intern(names, f.string(at.get("slo_class")).strip()),
          intern(names, f.string(at.get("model")).strip()), intern(names, f.string(at.get("prefix_group")).strip()),
          f.intValue(at.get("prefix_length"), 0, RequestSpec.MAX_TOKENS, bound),
          f.intValue(at.get("input_tokens"), 0, RequestSpec.MAX_TOKENS, bound),
          f.intValue(at.get("server_input_tokens"), 0, RequestSpec.MAX_TOKENS, bound),
          f.intValue(at.get("output_tokens"), 0, RequestSpec.MAX_TOKENS, bound),
          f.longValue(at.get("arrival_time_us"), 0, Long.MAX_VALUE, ""),
          f.longValue(at.get("send_time_us"), 0, Long.MAX_VALUE, ""),
          f.longValue(at.get("first_chunk_time_us"), 0, Long.MAX_VALUE, ""),
          f.longValue(at.get("last_chunk_time_us"), 0, Long.MAX_VALUE, ""),
          f.intValue(at.get("num_chunks"), 0, Integer.MAX_VALUE, ""),
          intern(names, f.string(at.get("status")).strip())));
    });
    if (rows.isEmpty()) {
      throw new IllegalArgumentException(data + ": no requests: the TraceV2 data has its column line and no rows");
    }
    return new Recorded(h.mode() == null ? "" : h.mode(), h.warmUpRequests() == null ? 0 : h.warmUpRequests(), rtt,
        kv, goodput, List.copyOf(rows));
  }

  /**
   * One streamed chunk of Go BLIS's ITL file ({@code observe --record-itl}: columns request_id,
   * chunk_index, timestamp_us).
   */
  public record ItlChunk(long requestId, int chunkIndex, long timestampUs) {}

  /** The columns of an ITL file. */
  public static final List<String> ITL_COLUMNS = List.of("request_id", "chunk_index", "timestamp_us");

  /** Reads an ITL file (a column line, then one row per chunk); errors name the file, line and column. */
  public static List<ItlChunk> itl(Path file) {
    List<ItlChunk> out = new ArrayList<>();
    try (LineReader lines = new LineReader(file)) {
      String first = lines.firstLine("an ITL file (a first line " + String.join(",", ITL_COLUMNS) + ")");
      if (!first.strip().equals(String.join(",", ITL_COLUMNS))) {
        throw new IllegalArgumentException(file + ":1: expected the ITL columns " + String.join(",", ITL_COLUMNS)
            + " (blis observe --record-itl), got '" + TextFiles.quote(first.strip()) + "'");
      }
      String line;
      while ((line = lines.nonBlankLine()) != null) {
        CsvFields f = new CsvFields(file.toString(), lines.lineNo(), ITL_COLUMNS, line.strip());
        out.add(new ItlChunk(f.longValue(0), f.intValue(1, 0), f.longValue(2)));
      }
    }
    return out;
  }
}
