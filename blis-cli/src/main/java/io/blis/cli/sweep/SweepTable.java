package io.blis.cli.sweep;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.blis.engine.capacity.SloSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The sweep's table and summary, computed from the recorded points only (never from objects in
 * memory), so that the same records give the same bytes: one row per configuration (question
 * capacity) or per configuration and rate (question rates), in grid order, with costs, the Pareto
 * frontier and the best configuration. Every column is documented in docs/capacity.md (Sweeps).
 */
public final class SweepTable {

  /** Statistics of each latency metric in the table. */
  public static final List<String> STATS = List.of("mean", "p50", "p90", "p95", "p99");

  private static final JsonNodeFactory NODES = JsonNodeFactory.withExactBigDecimals(true);

  private final SweepGrid grid;
  private final List<String> columns;
  private final List<ObjectNode> rows;
  private final List<JsonNode> records;
  private final ObjectNode summary;

  private SweepTable(SweepGrid grid, List<String> columns, List<ObjectNode> rows, ObjectNode summary,
      List<JsonNode> records) {
    this.records = List.copyOf(records);
    this.grid = grid;
    this.columns = columns;
    this.rows = rows;
    this.summary = summary;
  }

  /** The columns of a grid's table, in order. */
  public static List<String> columns(SweepGrid.Question q) {
    List<String> c = new ArrayList<>(List.of("index", "key", "model", "gpu", "tp", "pp", "dp", "ep", "replicas", "gpus",
        "max_num_seqs", "max_num_batched_tokens", "router", "scheduler", "status", "reason"));
    if (q == SweepGrid.Question.CAPACITY) {
      c.addAll(List.of("capacity_rps", "capacity_lower_bound", "capacity_low_rps", "capacity_high_rps",
          "interval_level", "extrapolation", "saturation_rps", "saturation_lower_bound", "points_simulated"));
    } else {
      c.add("rate_rps");
    }
    c.addAll(List.of("meets_slo", "steady", "violations", "offered_rps", "achieved_rps", "measured", "completed",
        "mean_input_tokens", "mean_output_tokens", "output_tokens_per_s"));
    for (String m : SloSet.METRICS) {
      for (String s : STATS) {
        c.add(m + "_" + s + "_ms");
      }
    }
    c.addAll(List.of("usd_per_gpu_hour", "price_source", "example_price", "cost_per_hour_usd",
        "usd_per_million_output_tokens", "rps_per_usd_hour", "pareto", "best", "note"));
    return List.copyOf(c);
  }

  /**
   * The table of recorded points.
   *
   * @param records one record per configuration of the grid, in grid order (as {@code
   *     points.jsonl} holds them: {@code key}, {@code status}, ...)
   */
  public static SweepTable of(SweepGrid grid, PriceTable prices, List<JsonNode> records) {
    if (records.size() != grid.configs().size()) {
      throw new IllegalArgumentException("expected " + grid.configs().size() + " records, got " + records.size());
    }
    List<String> columns = columns(grid.question());
    List<ObjectNode> rows = new ArrayList<>();
    for (int i = 0; i < records.size(); i++) {
      SweepConfig c = grid.configs().get(i);
      JsonNode r = records.get(i);
      if (!c.key().equals(r.path("key").asText())) {
        throw new IllegalArgumentException("record " + i + " is of " + r.path("key").asText() + ", expected " + c.key());
      }
      boolean ok = r.path("status").asText().equals("ok");
      Optional<PriceTable.Price> price = ok ? prices.priceOf(c.gpu(), r.path("gpu_name").asText(null))
          : prices.priceOf(c.gpu());
      if (grid.question() == SweepGrid.Question.CAPACITY) {
        ObjectNode row = base(columns, i, c, r);
        if (ok) {
          JsonNode cap = r.path("capacity");
          row.set("capacity_rps", cap.get("rate_rps"));
          row.put("capacity_lower_bound", cap.path("lower_bound").asBoolean());
          JsonNode iv = cap.get("interval");
          if (iv != null) {
            row.set("capacity_low_rps", iv.get("low_rps"));
            row.set("capacity_high_rps", iv.get("high_rps"));
            row.set("interval_level", iv.get("level"));
            row.put("extrapolation", String.join("; ", texts(iv.path("extrapolation"))));
          }
          JsonNode sat = r.get("saturation");
          if (sat != null) {
            row.set("saturation_rps", sat.get("rate_rps"));
            row.put("saturation_lower_bound", sat.path("lower_bound").asBoolean());
          }
          row.put("points_simulated", cap.path("points_simulated").asInt() + (sat == null ? 0 : sat.path("points_simulated").asInt()));
          JsonNode at = cap.get("at");
          if (at != null) {
            copyPoint(row, at);
          } else {
            row.put("meets_slo", false);
            row.put("violations", String.join("; ", texts(cap.path("violations_at_lowest_rate"))));
            note(row, "no rate down to " + PointRun.round(grid.settings().minRps()).toPlainString() + " req/s met the SLO");
          }
          if (cap.path("lower_bound").asBoolean()) {
            note(row, "meets the SLO at the highest rate tried (" + PointRun.round(grid.settings().maxRps()).toPlainString()
                + " req/s): the capacity is at least that");
          }
          cost(row, c, price, row.get("capacity_rps"));
        }
        priceNote(row, c, price, ok);
        rows.add(row);
      } else if (!ok) {
        for (double rate : grid.rates()) {
          ObjectNode row = base(columns, i, c, r);
          row.put("rate_rps", PointRun.round(rate));
          priceNote(row, c, price, false);
          rows.add(row);
        }
      } else {
        for (JsonNode p : r.path("rates")) {
          ObjectNode row = base(columns, i, c, r);
          row.set("rate_rps", p.get("rate_rps"));
          copyPoint(row, p);
          cost(row, c, price, row.get("achieved_rps"));
          priceNote(row, c, price, true);
          rows.add(row);
        }
      }
    }
    String latency = grid.paretoLatency() + "_ms";
    List<ObjectNode> candidates = rows.stream().filter(row -> candidate(grid, row, latency)).toList();
    for (ObjectNode row : rows) {
      row.put("pareto", false);
      row.put("best", false);
    }
    List<ObjectNode> frontier = frontier(candidates, latency);
    frontier.forEach(a -> a.put("pareto", true));
    ObjectNode best = null;
    for (ObjectNode a : candidates) {
      if (best == null || better(a, best, latency)) {
        best = a;
      }
    }
    if (best != null) {
      best.put("best", true);
    }
    return new SweepTable(grid, columns, rows, summary(grid, prices, rows, frontier, best, latency), records);
  }

  /**
   * The rows no other row dominates (as high or higher throughput per dollar and as low or lower
   * latency, better in one), in their given order. O(n log n): sorted by throughput per dollar
   * (highest first, then lowest latency), a row is on the frontier when its latency is the lowest
   * of its throughput and below every latency of a higher throughput.
   */
  static List<ObjectNode> frontier(List<ObjectNode> candidates, String latency) {
    int n = candidates.size();
    double[] x = new double[n];
    double[] y = new double[n];
    Integer[] order = new Integer[n];
    for (int i = 0; i < n; i++) {
      x[i] = candidates.get(i).get("rps_per_usd_hour").asDouble();
      y[i] = candidates.get(i).get(latency).asDouble();
      order[i] = i;
    }
    java.util.Arrays.sort(order, (a, b) -> x[a] != x[b] ? Double.compare(x[b], x[a]) : Double.compare(y[a], y[b]));
    boolean[] on = new boolean[n];
    double lowestAbove = Double.POSITIVE_INFINITY; // lowest latency of a strictly higher throughput
    for (int i = 0; i < n;) {
      int j = i;
      double groupLowest = y[order[i]];
      while (j < n && x[order[j]] == x[order[i]]) {
        j++;
      }
      for (int k = i; k < j; k++) {
        on[order[k]] = y[order[k]] == groupLowest && groupLowest < lowestAbove;
      }
      lowestAbove = Math.min(lowestAbove, groupLowest);
      i = j;
    }
    List<ObjectNode> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      if (on[i]) {
        out.add(candidates.get(i));
      }
    }
    return out;
  }

  private static boolean better(ObjectNode a, ObjectNode b, String latency) {
    int c = Double.compare(a.get("rps_per_usd_hour").asDouble(), b.get("rps_per_usd_hour").asDouble());
    if (c != 0) {
      return c > 0;
    }
    return a.get(latency).asDouble() < b.get(latency).asDouble(); // else the earlier row stays
  }

  /** Whether a row competes for the frontier and the best: it meets the SLO and has a cost and the latency. */
  private static boolean candidate(SweepGrid grid, ObjectNode row, String latency) {
    if (!row.path("status").asText().equals("ok") || !row.path("rps_per_usd_hour").isNumber()
        || !row.path(latency).isNumber()) {
      return false;
    }
    return answersQuestion(grid, row);
  }

  /**
   * Whether a row answers the grid's question: its capacity meets the targets, or its fixed rate
   * is steady (and meets the targets when there are some).
   */
  static boolean answersQuestion(SweepGrid grid, JsonNode row) {
    if (grid.question() == SweepGrid.Question.CAPACITY) {
      return row.path("meets_slo").asBoolean();
    }
    return row.path("steady").asBoolean() && (grid.slo() == null || row.path("meets_slo").asBoolean());
  }

  private static ObjectNode base(List<String> columns, int index, SweepConfig c, JsonNode r) {
    ObjectNode row = NODES.objectNode();
    for (String col : columns) {
      row.putNull(col);
    }
    row.put("index", index);
    row.put("key", c.key());
    row.put("model", c.model());
    row.put("gpu", c.gpu());
    row.put("tp", c.tp());
    row.put("pp", c.pp());
    row.put("dp", c.dp());
    row.put("ep", c.ep());
    row.put("replicas", c.replicas());
    row.put("gpus", c.gpus());
    row.put("max_num_seqs", c.maxNumSeqs());
    row.put("max_num_batched_tokens", c.maxNumBatchedTokens());
    row.put("router", c.router());
    row.put("scheduler", c.scheduler());
    row.put("status", r.path("status").asText());
    if (r.hasNonNull("reason")) {
      row.put("reason", r.get("reason").asText());
    }
    return row;
  }

  /** A load point's fields, violations joined with "; ". */
  private static void copyPoint(ObjectNode row, JsonNode p) {
    for (String col : List.of("meets_slo", "steady", "offered_rps", "achieved_rps", "measured", "completed",
        "mean_input_tokens", "mean_output_tokens", "output_tokens_per_s")) {
      row.set(col, p.get(col));
    }
    row.put("violations", String.join("; ", texts(p.path("violations"))));
    for (String m : SloSet.METRICS) {
      for (String s : STATS) {
        row.set(m + "_" + s + "_ms", p.get(m + "_" + s + "_ms"));
      }
    }
  }

  /**
   * Cost per hour (every GPU of every replica: replicas x tp x pp x dp), per million output
   * tokens, and requests/s per dollar-hour at {@code rps}.
   */
  private static void cost(ObjectNode row, SweepConfig c, Optional<PriceTable.Price> price, JsonNode rps) {
    if (price.isEmpty()) {
      return;
    }
    double perHour = c.gpus() * price.get().usdPerGpuHour();
    row.put("cost_per_hour_usd", PointRun.round(perHour));
    JsonNode tokens = row.get("output_tokens_per_s");
    if (tokens != null && tokens.isNumber() && tokens.asDouble() > 0) {
      row.put("usd_per_million_output_tokens", PointRun.round(perHour / (tokens.asDouble() * 3600) * 1e6));
    }
    if (rps != null && rps.isNumber()) {
      row.put("rps_per_usd_hour", PointRun.round(rps.asDouble() / perHour));
    }
  }

  private static void priceNote(ObjectNode row, SweepConfig c, Optional<PriceTable.Price> price, boolean ok) {
    if (price.isPresent()) {
      row.put("usd_per_gpu_hour", PointRun.round(price.get().usdPerGpuHour()));
      row.put("price_source", price.get().source());
      row.put("example_price", price.get().example());
    } else if (ok) {
      note(row, "no price for GPU " + c.gpu() + " (give one with --prices)");
    }
  }

  private static void note(ObjectNode row, String text) {
    JsonNode n = row.get("note");
    row.put("note", n == null || n.isNull() ? text : n.asText() + "; " + text);
  }

  private static List<String> texts(JsonNode array) {
    List<String> out = new ArrayList<>();
    array.forEach(v -> out.add(v.asText()));
    return out;
  }

  private static ObjectNode summary(SweepGrid grid, PriceTable prices, List<ObjectNode> rows, List<ObjectNode> frontier,
      ObjectNode best, String latency) {
    ObjectNode s = NODES.objectNode();
    s.put("format", 1);
    s.put("grid", grid.source());
    s.put("fingerprint", grid.fingerprint());
    s.put("question", grid.question().key());
    if (grid.slo() != null) {
      s.put("slo", SweepGrid.describe(grid.slo()));
    } else {
      s.putNull("slo");
    }
    ArrayNode rates = s.putArray("rates_rps");
    grid.rates().forEach(r -> rates.add(PointRun.round(r)));
    s.put("workload", grid.workload().description());
    ObjectNode st = s.putObject("settings");
    var set = grid.settings();
    st.put("point_duration_s", PointRun.round(set.durationS()));
    st.put("min_requests", set.minRequests());
    st.put("max_requests", set.maxRequests());
    st.put("warmup", PointRun.round(set.warmup()));
    st.put("tolerance", PointRun.round(set.tolerance()));
    st.put("start_rps", PointRun.round(set.startRps()));
    st.put("max_rps", PointRun.round(set.maxRps()));
    st.put("min_rps", PointRun.round(set.minRps()));
    st.put("saturation", grid.saturation());
    ObjectNode dep = s.putObject("deployment");
    dep.put("latency_model", grid.deployment().latencyModel());
    if (grid.deployment().coefficients() == null) {
      dep.putNull("coefficients");
    } else {
      dep.put("coefficients", grid.deployment().coefficients());
    }
    dep.put("gpu_memory_utilization", PointRun.round(grid.deployment().gpuMemoryUtilization()));
    dep.put("block_size", grid.deployment().blockSize());
    if (grid.deployment().maxModelLen() == null) {
      dep.putNull("max_model_len");
    } else {
      dep.put("max_model_len", grid.deployment().maxModelLen());
    }
    if (grid.deployment().loraConfig() != null) { // only then, so that the summaries of other grids stay as they were
      dep.put("lora_config", grid.deployment().loraConfig());
    }
    s.put("configurations", grid.configs().size());
    s.put("rows", rows.size());
    s.put("skipped", rows.stream().filter(r -> r.path("status").asText().equals("skipped"))
        .map(r -> r.get("index").asInt()).distinct().count());
    s.put("rows_meeting_slo", rows.stream().filter(r -> r.path("meets_slo").asBoolean()).count());
    s.put("pareto_latency", grid.paretoLatency());
    s.put("best_rule", grid.question() == SweepGrid.Question.CAPACITY
        ? "highest rps_per_usd_hour (capacity_rps / cost_per_hour_usd) among configurations meeting the SLO;"
            + " ties: lower " + latency + ", then grid order"
        : "highest rps_per_usd_hour (achieved_rps / cost_per_hour_usd) among steady rows"
            + (grid.slo() == null ? "" : " meeting the SLO") + "; ties: lower " + latency + ", then grid order");
    if (best == null) {
      s.putNull("best");
    } else {
      s.set("best", best.deepCopy());
    }
    ArrayNode p = s.putArray("pareto");
    frontier.stream().sorted((a, b) -> Double.compare(a.get(latency).asDouble(), b.get(latency).asDouble()))
        .forEach(r -> {
          ObjectNode e = p.addObject();
          e.set("index", r.get("index"));
          e.set("key", r.get("key"));
          if (grid.question() == SweepGrid.Question.RATES) {
            e.set("rate_rps", r.get("rate_rps"));
          }
          e.set("rps_per_usd_hour", r.get("rps_per_usd_hour"));
          e.set(latency, r.get(latency));
          e.set("cost_per_hour_usd", r.get("cost_per_hour_usd"));
          e.set("usd_per_million_output_tokens", r.get("usd_per_million_output_tokens"));
        });
    ObjectNode pr = s.putObject("prices_usd_per_gpu_hour");
    prices.prices().forEach((gpu, price) -> {
      ObjectNode e = pr.putObject(gpu);
      e.put("usd_per_gpu_hour", PointRun.round(price.usdPerGpuHour()));
      e.put("source", price.source());
      e.put("example", price.example());
    });
    boolean examples = rows.stream().anyMatch(r -> r.path("example_price").asBoolean());
    s.put("example_prices_used", examples);
    if (examples) {
      s.put("prices_note", "some costs use the bundled EXAMPLE prices, which are illustrative, not quotes;"
          + " give real ones with --prices FILE");
    }
    return s;
  }

  /** The records the table was computed from, in grid order (the report draws their load points). */
  public List<JsonNode> records() {
    return records;
  }

  /** The rows in grid order. */
  public List<ObjectNode> rows() {
    return rows;
  }

  /** The column names, in order (every row has exactly these keys). */
  public List<String> columns() {
    return columns;
  }

  /** The summary: the question, counts, the best row, the Pareto frontier and the prices. */
  public ObjectNode summary() {
    return summary;
  }

  /** The table as CSV: a header line, then a line per row; empty cells for nulls. */
  public String csv() {
    return csv(columns, rows);
  }

  /**
   * Rows as CSV: a header line of the columns, then a line per row with its values in column
   * order; empty cells for nulls and absent keys, quoted where a value holds a comma, a quote or a
   * line break.
   */
  public static String csv(List<String> columns, List<? extends JsonNode> rows) {
    StringBuilder b = new StringBuilder();
    b.append(String.join(",", columns)).append('\n');
    for (JsonNode row : rows) {
      for (int i = 0; i < columns.size(); i++) {
        if (i > 0) {
          b.append(',');
        }
        b.append(cell(row.get(columns.get(i))));
      }
      b.append('\n');
    }
    return b.toString();
  }

  private static String cell(JsonNode v) {
    if (v == null || v.isNull()) {
      return "";
    }
    String t = v.isBigDecimal() ? v.decimalValue().toPlainString() : v.asText();
    if (t.contains(",") || t.contains("\"") || t.contains("\n") || t.contains("\r")) {
      return "\"" + t.replace("\"", "\"\"") + "\"";
    }
    return t;
  }

  /** The table as JSON lines: one object per row, keys in column order. */
  public String jsonLines() {
    StringBuilder b = new StringBuilder();
    for (ObjectNode row : rows) {
      b.append(Sweep.line(row)).append('\n');
    }
    return b.toString();
  }

  /** The grid the table answers. */
  public SweepGrid grid() {
    return grid;
  }
}
