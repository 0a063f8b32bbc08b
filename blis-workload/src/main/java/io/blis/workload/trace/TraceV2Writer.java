package io.blis.workload.trace;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Writes Go BLIS's TraceV2 (what its {@code blis observe} writes and {@link TraceV2Reader} reads):
 * a header YAML ({@code trace_version}, {@code time_unit}, {@code created_at}, {@code mode},
 * {@code warm_up_requests}, {@code workload_seed}, {@code workload_spec}, {@code server}, {@code
 * network}, in Go's order) and a data CSV with the columns {@link TraceV2Reader#COLUMNS} (and
 * {@code adapter} last when a row names one), times as integer microseconds. Also Go's ITL CSV
 * ({@code request_id,chunk_index,timestamp_us}: one row per streamed chunk).
 *
 * <p>Go BLIS's observe records {@code arrival_time_us} on the workload's clock (microseconds since
 * the run began) and {@code send_time_us}, {@code first_chunk_time_us} and {@code
 * last_chunk_time_us} on the wall clock (Unix epoch microseconds); {@link TraceV2Reader#open}
 * moves such times back so that the first request is sent at 0.
 */
public final class TraceV2Writer {

  /** The columns of Go BLIS's ITL CSV. */
  public static final List<String> ITL_COLUMNS = List.of("request_id", "chunk_index", "timestamp_us");

  private TraceV2Writer() {}

  /**
   * The header of a TraceV2 pair.
   *
   * @param traceVersion Go BLIS's {@code trace_version} (3 for what its observe writes today)
   * @param createdAt when, RFC 3339 in UTC ({@code 2026-01-02T03:04:05Z})
   * @param mode {@code real} (observed), {@code generated} or {@code replayed}
   * @param warmUpRequests the first requests left out of the data
   * @param workloadSeed the workload's seed, or null
   * @param workloadSpec a spec file's path, {@code preset:NAME}, or null (distribution synthesis)
   * @param serverType {@code server.type} ({@code vllm}), or null for no server section
   * @param serverModel {@code server.model}: the model name the requests sent
   * @param measuredRttMs {@code network.measured_rtt_ms} (0: not measured, Go writes {@code network: {}})
   * @param observedKv {@code observed_kv_metrics}, or null
   * @param kvOffload the {@code kv_offload:} block as YAML lines (each ending in a newline), or null
   */
  public record Header(int traceVersion, String createdAt, String mode, int warmUpRequests,
      Long workloadSeed, String workloadSpec, String serverType, String serverModel, double measuredRttMs,
      ObservedKv observedKv, String kvOffload) {

    /** A header without a KV offload configuration. */
    public Header(int traceVersion, String createdAt, String mode, int warmUpRequests, Long workloadSeed,
        String workloadSpec, String serverType, String serverModel, double measuredRttMs, ObservedKv observedKv) {
      this(traceVersion, createdAt, mode, warmUpRequests, workloadSeed, workloadSpec, serverType, serverModel,
          measuredRttMs, observedKv, null);
    }

    /** A header without an observed KV hit rate. */
    public Header(int traceVersion, String createdAt, String mode, int warmUpRequests, Long workloadSeed,
        String workloadSpec, String serverType, String serverModel, double measuredRttMs) {
      this(traceVersion, createdAt, mode, warmUpRequests, workloadSeed, workloadSpec, serverType, serverModel,
          measuredRttMs, null);
    }
  }

  /**
   * The header's {@code observed_kv_metrics} (Go BLIS's {@code observe --scrape-kv-metrics}): the
   * server's KV-cache hit rate over the measured window, from its Prometheus counters.
   *
   * @param source which counters gave it
   * @param hitRate hits / queries over the window, in [0, 1]
   * @param blockHits the hits counter's increase over the window (0 when a gauge gave the rate)
   * @param blockQueries the queries counter's increase over the window
   * @param vllmCommit the vLLM commit the user named, or empty
   */
  public record ObservedKv(String source, double hitRate, long blockHits, long blockQueries, String vllmCommit) {}

  /**
   * One request: one row of the data CSV, in Go's column meaning. The prompt's modality split
   * (text/image/audio/video tokens) and reason_ratio are written as 0.
   *
   * @param inputTokens prompt tokens after the group's shared prefix
   * @param deadlineUs absolute client deadline on the arrival clock, 0 for none
   * @param serverInputTokens the server's {@code usage.prompt_tokens}, 0 when not given
   * @param status {@code ok}, {@code error} or {@code timeout}
   */
  public record Row(long requestId, String clientId, String tenantId, String sloClass, String sessionId,
      int roundIndex, String prefixGroup, int prefixLength, boolean streaming, int inputTokens,
      int outputTokens, String model, long deadlineUs, int serverInputTokens, long arrivalTimeUs,
      long sendTimeUs, long firstChunkTimeUs, long lastChunkTimeUs, int numChunks, String status,
      String errorMessage, String finishReason, String adapter) {}

  /** One streamed chunk of a request: Go's ITL row ({@code timestamp_us}: epoch microseconds). */
  public record ItlRow(long requestId, int chunkIndex, long timestampUs) {}

  private static final Pattern PLAIN = Pattern.compile("[A-Za-z_/][A-Za-z0-9_./:@+-]*");

  /** The header as Go's yaml.v3 writes it (keys in its order, empty optional keys left out). */
  public static String headerYaml(Header h) {
    StringBuilder b = new StringBuilder();
    b.append("trace_version: ").append(h.traceVersion()).append('\n');
    b.append("time_unit: us\n");
    if (h.createdAt() != null && !h.createdAt().isEmpty()) {
      b.append("created_at: ").append(scalar(h.createdAt())).append('\n');
    }
    b.append("mode: ").append(scalar(h.mode())).append('\n');
    b.append("warm_up_requests: ").append(h.warmUpRequests()).append('\n');
    if (h.workloadSeed() != null) {
      b.append("workload_seed: ").append(h.workloadSeed()).append('\n');
    }
    if (h.workloadSpec() != null && !h.workloadSpec().isEmpty()) {
      b.append("workload_spec: ").append(scalar(h.workloadSpec())).append('\n');
    }
    if (h.serverType() != null) {
      b.append("server:\n");
      if (!h.serverType().isEmpty()) {
        b.append("    type: ").append(scalar(h.serverType())).append('\n');
      }
      if (h.serverModel() != null && !h.serverModel().isEmpty()) {
        b.append("    model: ").append(scalar(h.serverModel())).append('\n');
      }
    }
    if (h.measuredRttMs() > 0) {
      b.append("network:\n    measured_rtt_ms: ").append(number(h.measuredRttMs())).append('\n');
    } else {
      b.append("network: {}\n");
    }
    if (h.kvOffload() != null) {
      b.append(h.kvOffload()); // a kv_offload: block, lines ending in newlines
    }
    ObservedKv kv = h.observedKv();
    if (kv != null) {
      b.append("observed_kv_metrics:\n    source: ").append(scalar(kv.source())).append('\n');
      b.append("    hit_rate: ").append(number(kv.hitRate())).append('\n');
      b.append("    block_hits: ").append(kv.blockHits()).append('\n');
      b.append("    block_queries: ").append(kv.blockQueries()).append('\n');
      if (!kv.vllmCommit().isEmpty()) {
        b.append("    vllm_commit: ").append(scalar(kv.vllmCommit())).append('\n');
      }
    }
    return b.toString();
  }

  /** A YAML scalar: plain when it cannot be read as anything but this string, else double-quoted. */
  public static String scalar(String s) {
    String lower = s.toLowerCase(Locale.ROOT);
    boolean reserved = List.of("true", "false", "yes", "no", "on", "off", "null", "y", "n").contains(lower);
    if (PLAIN.matcher(s).matches() && !reserved && !s.contains(": ") && !s.endsWith(":")) {
      return s;
    }
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\t' -> b.append("\\t");
        default -> {
          if (c < 0x20) {
            b.append(String.format(Locale.ROOT, "\\x%02x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    return b.append('"').toString();
  }

  /** A float as Go's {@code strconv.FormatFloat(v, 'f', -1, 64)} writes it (shortest, no exponent). */
  public static String number(double v) {
    if (v == Math.rint(v) && Math.abs(v) < 1e15) {
      return Long.toString((long) v);
    }
    return new java.math.BigDecimal(Double.toString(v)).stripTrailingZeros().toPlainString();
  }

  /** Writes the header YAML. */
  public static void writeHeader(Path file, Header h) {
    write(file, List.of(headerYaml(h)));
  }

  /** The data CSV's column line for {@code rows}: Go's 27 columns, then {@code adapter} if any row names one. */
  public static List<String> columns(List<Row> rows) {
    List<String> c = new ArrayList<>(TraceV2Reader.COLUMNS);
    if (rows.stream().anyMatch(r -> r.adapter() != null && !r.adapter().isEmpty())) {
      c.add("adapter");
    }
    return c;
  }

  /** Writes the data CSV, rows in the order given. */
  public static void writeData(Path file, List<Row> rows) {
    List<String> columns = columns(rows);
    boolean adapter = columns.contains("adapter");
    List<String> lines = new ArrayList<>(rows.size() + 1);
    lines.add(String.join(",", columns) + "\n");
    for (Row r : rows) {
      List<String> f = new ArrayList<>(columns.size());
      f.add(Long.toString(r.requestId()));
      f.add(csv(r.clientId()));
      f.add(csv(r.tenantId()));
      f.add(csv(r.sloClass()));
      f.add(csv(r.sessionId()));
      f.add(Integer.toString(r.roundIndex()));
      f.add(csv(r.prefixGroup()));
      f.add(Integer.toString(r.prefixLength()));
      f.add(Boolean.toString(r.streaming()));
      f.add(Integer.toString(r.inputTokens()));
      f.add(Integer.toString(r.outputTokens()));
      f.add("0"); // text_tokens
      f.add("0"); // image_tokens
      f.add("0"); // audio_tokens
      f.add("0"); // video_tokens
      f.add("0"); // reason_ratio
      f.add(csv(r.model()));
      f.add(Long.toString(r.deadlineUs()));
      f.add(Integer.toString(r.serverInputTokens()));
      f.add(Long.toString(r.arrivalTimeUs()));
      f.add(Long.toString(r.sendTimeUs()));
      f.add(Long.toString(r.firstChunkTimeUs()));
      f.add(Long.toString(r.lastChunkTimeUs()));
      f.add(Integer.toString(r.numChunks()));
      f.add(csv(r.status()));
      f.add(csv(r.errorMessage()));
      f.add(csv(r.finishReason()));
      if (adapter) {
        f.add(csv(r.adapter()));
      }
      lines.add(String.join(",", f) + "\n");
    }
    write(file, lines);
  }

  /** Writes Go's ITL CSV, rows in the order given. */
  public static void writeItl(Path file, List<ItlRow> rows) {
    List<String> lines = new ArrayList<>(rows.size() + 1);
    lines.add(String.join(",", ITL_COLUMNS) + "\n");
    for (ItlRow r : rows) {
      lines.add(r.requestId() + "," + r.chunkIndex() + "," + r.timestampUs() + "\n");
    }
    write(file, lines);
  }

  /**
   * A CSV field as Go's encoding/csv writes it: quoted (quotes doubled) when it holds a comma, a
   * quote, a line break or starts with a space; line breaks become spaces here, as {@link
   * TraceV2Reader} reads a row per line.
   */
  static String csv(String s) {
    if (s == null || s.isEmpty()) {
      return "";
    }
    String one = s.replace("\r\n", " ").replace('\n', ' ').replace('\r', ' ');
    if (one.indexOf(',') >= 0 || one.indexOf('"') >= 0 || one.startsWith(" ")) {
      return "\"" + one.replace("\"", "\"\"") + "\"";
    }
    return one;
  }

  private static void write(Path file, List<String> chunks) {
    try {
      Path parent = file.toAbsolutePath().getParent();
      if (parent != null) {
        Files.createDirectories(parent);
      }
      try (BufferedWriter w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
        for (String c : chunks) {
          w.write(c);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(file + ": cannot write: " + e.getMessage(), e);
    }
  }

}
