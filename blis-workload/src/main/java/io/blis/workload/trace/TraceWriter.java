package io.blis.workload.trace;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.blis.workload.PromptTokens;
import io.blis.workload.RequestSpec;
import io.blis.workload.TextFiles;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPOutputStream;

/**
 * Streams requests to a BLIS trace file, one CSV row per {@link #write} call (nothing is kept in
 * memory). Call it for every request the engine admits: open-loop requests pulled from {@code
 * next()} and session follow-ups returned by {@code onFinished}, so that {@link TraceReader} can
 * rebuild the sessions. The format is described in docs/workloads.md.
 *
 * <p>Without token ids, a row records the prompt's structure: prefix group and length, and a
 * {@code content_id}, the {@link PromptTokens#fingerprint} of the first (up to 4) tokens after the
 * prefix. Requests whose content starts identically get the same content id, and the reader
 * rebuilds them from that id so they share ids again.
 */
public final class TraceWriter implements AutoCloseable {

  private final Writer out;
  private final boolean tokenIds;
  private final boolean models;
  private final boolean adapters;
  private final StringBuilder line = new StringBuilder(256);
  private long rows;

  /** Writes to {@code out} (closed by {@link #close}); its requests name no model. */
  public TraceWriter(Writer out, TraceHeader header) {
    this(out, header, false);
  }

  /**
   * Writes to {@code out} (closed by {@link #close}), with a {@code model} column when {@code
   * models} (the workload's requests name models); its requests name no LoRA adapter.
   */
  public TraceWriter(Writer out, TraceHeader header, boolean models) {
    this(out, header, models, false);
  }

  /**
   * Writes to {@code out} (closed by {@link #close}), with a {@code model} column when {@code
   * models} (the workload's requests name models) and an {@code adapter} column when {@code
   * adapters} (they name LoRA adapters).
   */
  public TraceWriter(Writer out, TraceHeader header, boolean models, boolean adapters) {
    this.out = out;
    this.tokenIds = header.tokenIds();
    this.models = models;
    this.adapters = adapters;
    ObjectNode json = new ObjectMapper().createObjectNode();
    json.put("version", header.version());
    json.put("time_unit", "us");
    json.put("token_seed", header.tokenSeed());
    json.put("token_ids", header.tokenIds());
    json.put("description", header.description());
    try {
      out.write(TraceFormat.MAGIC);
      out.write(json.toString());
      out.write('\n');
      out.write(String.join(",", TraceFormat.columns(tokenIds, models, adapters)));
      out.write('\n');
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write trace header: " + e.getMessage(), e);
    }
  }

  /**
   * Writes to {@code raw} (gzip-compressed when {@code gzip}); closing the writer closes it. For
   * a destination the caller opened itself (a device, a FIFO, standard output).
   */
  public static TraceWriter create(OutputStream raw, TraceHeader header, boolean gzip) throws IOException {
    return create(raw, header, gzip, false);
  }

  /** As {@link #create(OutputStream, TraceHeader, boolean)}, with a {@code model} column when {@code models}. */
  public static TraceWriter create(OutputStream raw, TraceHeader header, boolean gzip, boolean models)
      throws IOException {
    return create(raw, header, gzip, models, false);
  }

  /**
   * As {@link #create(OutputStream, TraceHeader, boolean)}, with a {@code model} column when {@code
   * models} and an {@code adapter} column when {@code adapters}.
   */
  public static TraceWriter create(OutputStream raw, TraceHeader header, boolean gzip, boolean models,
      boolean adapters) throws IOException {
    OutputStream os = gzip ? new GZIPOutputStream(raw, 1 << 16) : raw;
    return new TraceWriter(new BufferedWriter(new OutputStreamWriter(os, StandardCharsets.UTF_8), 1 << 16),
        header, models, adapters);
  }

  /** Creates {@code file} (gzip-compressed when the name ends in {@code .gz}). */
  public static TraceWriter create(Path file, TraceHeader header) {
    return create(file, header, file.toString().endsWith(".gz"));
  }

  /**
   * Creates {@code file}, gzip-compressed when {@code gzip} (for a temporary file whose final
   * name tells the compression).
   */
  public static TraceWriter create(Path file, TraceHeader header, boolean gzip) {
    try {
      return create(Files.newOutputStream(file), header, gzip);
    } catch (IOException e) {
      if (Files.isDirectory(file)) {
        throw new IllegalArgumentException(file + ": is a directory, expected a file to write");
      }
      throw new UncheckedIOException("cannot create trace " + file + ": " + TextFiles.reason(e), e);
    }
  }

  /** Appends one request. */
  public void write(RequestSpec r) {
    int[] p = r.promptTokens();
    line.setLength(0);
    line.append(r.id()).append(',')
        .append(r.arrivalTimeUs()).append(',')
        .append(p.length).append(',')
        .append(r.outputTokens()).append(',')
        .append(name("prefix_group", r.prefixGroup(), r)).append(',')
        .append(r.prefixLength()).append(',')
        .append(PromptTokens.fingerprint(p, r.prefixLength(), p.length - r.prefixLength())).append(',')
        .append(r.sessionId()).append(',')
        .append(r.round()).append(',')
        .append(name("slo_class", r.sloClass(), r)).append(',')
        .append(name("tenant", r.tenant(), r)).append(',')
        .append(r.stage()).append(',')
        .append(r.timeoutUs());
    if (models) {
      line.append(',').append(name("model", r.model(), r));
    } else if (!r.model().isEmpty()) {
      throw new IllegalArgumentException("request " + r.id() + " names model '" + r.model()
          + "', and this trace has no model column (open it with models)");
    }
    if (adapters) {
      line.append(',').append(name("adapter", r.adapter(), r));
    } else if (!r.adapter().isEmpty()) {
      throw new IllegalArgumentException("request " + r.id() + " names LoRA adapter '" + r.adapter()
          + "', and this trace has no adapter column (open it with adapters)");
    }
    if (tokenIds) {
      line.append(',');
      for (int i = 0; i < p.length; i++) {
        if (i > 0) {
          line.append(' ');
        }
        line.append(p[i]);
      }
    }
    line.append('\n');
    try {
      out.append(line);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write trace row " + rows + ": " + TextFiles.reason(e), e);
    }
    rows++;
  }

  private static String name(String field, String value, RequestSpec r) {
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c == ',' || c == '\n' || c == '\r' || c == '"') {
        throw new IllegalArgumentException("request " + r.id() + ": " + field + " '" + value
            + "' cannot be written to a trace (no commas, quotes or line breaks)");
      }
    }
    return value;
  }

  /** Rows written so far. */
  public long rowsWritten() {
    return rows;
  }

  public void flush() {
    try {
      out.flush();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void close() {
    try {
      out.close();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot close trace: " + e.getMessage(), e);
    }
  }
}
