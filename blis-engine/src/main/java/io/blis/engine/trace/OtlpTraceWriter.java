package io.blis.engine.trace;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.blis.api.RequestView;
import io.blis.engine.EngineListener;
import io.blis.engine.StepRecord;
import io.blis.workload.RequestOutcome;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.zip.GZIPOutputStream;

/**
 * Writes a simulated run as vLLM's OpenTelemetry traces would record it, in the OTLP JSON an
 * OTel collector's file exporter writes: one {@code ExportTraceServiceRequest} object per line,
 * {@code resourceSpans} per instance ({@code service.instance.id}), gzip when the file name ends in
 * {@code .gz}. Timestamps are nanoseconds since the start of the simulation.
 *
 * <ul>
 *   <li>Journey spans carry the attribute {@code request.id}.
 *   <li>Scope {@code vllm.api}, span {@code llm_request} per request: events {@code ARRIVED},
 *       {@code HANDOFF_TO_CORE}, {@code FIRST_RESPONSE}, {@code DEPARTED} (client times).
 *   <li>Scope {@code vllm.scheduler}, span {@code llm_core} per routed request: {@code QUEUED},
 *       {@code SCHEDULED} ({@code schedule.kind} FIRST or RESUME), {@code FIRST_TOKEN}, {@code
 *       PREEMPTED}, {@code FINISHED} ({@code finish.status}), each with {@code ts.monotonic},
 *       {@code scheduler.step}, {@code phase}, {@code prefill_done_tokens}, {@code
 *       prefill_total_tokens}, {@code decode_done_tokens}, {@code decode_max_tokens}, {@code
 *       num_preemptions}. As in vLLM, {@code scheduler.step} is the step being formed on {@code
 *       SCHEDULED} and {@code PREEMPTED} (a preempted request is not in that step's batch) and the
 *       step whose output it was on {@code FIRST_TOKEN} and {@code FINISHED} (absent on a {@code
 *       FINISHED} that no step's output caused, such as a timeout, and on {@code QUEUED});
 *       {@code prefill_done_tokens} is the high-water mark of the prompt tokens computed, so on
 *       {@code SCHEDULED} FIRST it counts the prompt tokens found in the prefix cache. A request's
 *       spans are written when it ends (after the step that ended it completes).
 *   <li>Scope {@code vllm.scheduler.step}, span {@code scheduler_step} per sampled step: event
 *       {@code step.BATCH_SUMMARY} ({@code step.id}, {@code step.ts_start_ns}, {@code
 *       step.ts_end_ns}, {@code step.duration_us}, {@code batch.*}, {@code queue.*}, {@code kv.*})
 *       and, with request snapshots on, one {@code step.REQUEST_SNAPSHOT} per request of the batch.
 * </ul>
 *
 * <p>Steps are sampled deterministically: step {@code k} of instance {@code i} is kept when a hash
 * of (seed, i, k) falls below the step sample rate. Requests likewise, as vLLM's {@code
 * --journey-tracing-sample-rate}: request {@code r} has both its spans or neither, by a hash of
 * (seed, r). Output is byte-identical for the same run and seed.
 */
public final class OtlpTraceWriter implements EngineListener, AutoCloseable {

  private static final JsonFactory JSON = new JsonFactory().setRootValueSeparator("\n");

  private final Path file;
  private final Writer out;
  /** One generator for the whole file; root values are separated by newlines. */
  private final JsonGenerator gen;
  private final double stepSampleRate;
  private final double journeySampleRate;
  private final boolean requestSnapshots;
  private final long seed;
  private final Map<Long, Journey> journeys = new HashMap<>();
  /** Per instance, requests that ended since its last step, written once that step completes. */
  private final Map<Integer, List<Ended>> ended = new TreeMap<>();
  private long stepsWritten;
  private long requestsWritten;

  /** Buffered events of one request until it ends. */
  private static final class Journey {
    final long arrivalUs;
    int instance = -1;
    long firstResponseUs = -1;
    /** Most prompt tokens computed so far, as vLLM's journey tracing reports prefill progress. */
    int prefillHighWater;
    final List<Event> core = new ArrayList<>();

    Journey(long arrivalUs) {
      this.arrivalUs = arrivalUs;
    }
  }

  private record Event(String name, long timeUs, long step, String phase, int prefillDone,
      int prefillTotal, int decodeDone, int preemptions, String extraKey, String extraValue) {}

  /** A request that ended, waiting for the step in progress to complete. */
  private record Ended(long requestId, Journey journey, Event finished, RequestOutcome outcome,
      long clientEndUs) {}

  /**
   * Opens {@code file} for writing, with every request's journey.
   *
   * @param stepSampleRate fraction of steps written, in (0, 1]
   * @param requestSnapshots also write one REQUEST_SNAPSHOT per request of each sampled step
   * @param seed seed of the step sampling
   */
  public OtlpTraceWriter(Path file, double stepSampleRate, boolean requestSnapshots, long seed) {
    this(file, stepSampleRate, 1.0, requestSnapshots, seed);
  }

  /**
   * Opens {@code file} for writing.
   *
   * @param stepSampleRate fraction of steps written, in (0, 1]
   * @param journeySampleRate fraction of requests whose journey spans are written, in [0, 1]
   * @param requestSnapshots also write one REQUEST_SNAPSHOT per request of each sampled step
   * @param seed seed of the step and journey sampling
   */
  public OtlpTraceWriter(Path file, double stepSampleRate, double journeySampleRate,
      boolean requestSnapshots, long seed) {
    this(file, file.getFileName().toString().endsWith(".gz"), stepSampleRate, journeySampleRate,
        requestSnapshots, seed);
  }

  /**
   * Opens {@code file} for writing, gzip-compressed when {@code gzip} whatever its name (a
   * temporary file moved into place when complete keeps the compression of its final name).
   *
   * @param stepSampleRate fraction of steps written, in (0, 1]
   * @param journeySampleRate fraction of requests whose journey spans are written, in [0, 1]
   * @param requestSnapshots also write one REQUEST_SNAPSHOT per request of each sampled step
   * @param seed seed of the step and journey sampling
   */
  public OtlpTraceWriter(Path file, boolean gzip, double stepSampleRate, double journeySampleRate,
      boolean requestSnapshots, long seed) {
    if (!(stepSampleRate > 0 && stepSampleRate <= 1)) {
      throw new IllegalArgumentException("step sample rate must be in (0, 1], got " + stepSampleRate);
    }
    if (!(journeySampleRate >= 0 && journeySampleRate <= 1)) {
      throw new IllegalArgumentException("journey sample rate must be in [0, 1], got " + journeySampleRate);
    }
    this.file = file;
    this.stepSampleRate = stepSampleRate;
    this.journeySampleRate = journeySampleRate;
    this.requestSnapshots = requestSnapshots;
    this.seed = seed;
    try {
      OutputStream os = new BufferedOutputStream(io.blis.engine.result.OutputFiles.open(file), 1 << 16);
      if (gzip) {
        os = new GZIPOutputStream(os, 1 << 16);
      }
      this.out = new OutputStreamWriter(os, StandardCharsets.UTF_8);
      this.gen = JSON.createGenerator(out);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the trace " + file + ": " + e.getMessage(), e);
    }
  }

  /** Steps written so far. */
  public long stepsWritten() {
    return stepsWritten;
  }

  /** Requests written so far. */
  public long requestsWritten() {
    return requestsWritten;
  }

  @Override
  public void onArrived(RequestView r, long timeUs) {
    if (journeySampled(r.id())) {
      journeys.put(r.id(), new Journey(timeUs));
    }
  }

  @Override
  public void onQueued(int instance, RequestView r, long timeUs) {
    Journey j = journeys.get(r.id());
    if (j != null) {
      j.instance = instance;
      j.core.add(event(j, "QUEUED", r, timeUs, -1, "WAITING", null, null));
    }
  }

  @Override
  public void onScheduled(int instance, RequestView r, long stepId, boolean resume, long timeUs) {
    Journey j = journeys.get(r.id());
    if (j != null) {
      j.core.add(event(j, "SCHEDULED", r, timeUs, stepId, "PREFILL", "schedule.kind",
          resume ? "RESUME" : "FIRST"));
    }
  }

  @Override
  public void onFirstToken(int instance, RequestView r, long stepId, long timeUs,
      long clientTimeUs) {
    Journey j = journeys.get(r.id());
    if (j != null) {
      j.firstResponseUs = clientTimeUs;
      j.core.add(event(j, "FIRST_TOKEN", r, timeUs, stepId, "DECODE", null, null));
    }
  }

  @Override
  public void onPreempted(int instance, RequestView r, long stepId, long timeUs) {
    Journey j = journeys.get(r.id());
    if (j != null) {
      j.core.add(event(j, "PREEMPTED", r, timeUs, stepId, "WAITING", null, null));
    }
  }

  @Override
  public void onFinished(int instance, RequestView r, RequestOutcome outcome, long engineEndUs,
      long clientEndUs) {
    Journey j = journeys.remove(r.id());
    if (j == null) {
      return; // not sampled
    }
    String status = switch (outcome) {
      case COMPLETED -> "length";
      case TIMED_OUT -> "aborted";
      case REJECTED -> "error";
    };
    if (instance < 0) {
      write(r.id(), j, outcome, clientEndUs);
      return;
    }
    j.instance = instance;
    // the step whose output ended it is known when that step completes (onStep follows)
    ended.computeIfAbsent(instance, k -> new ArrayList<>()).add(new Ended(r.id(), j,
        event(j, "FINISHED", r, engineEndUs, -1, "DECODE", "finish.status", status), outcome,
        clientEndUs));
  }

  @Override
  public void onStep(int instance, StepRecord step) {
    flushEnded(instance, step);
    if (!sampled(instance, step.stepId())) {
      return;
    }
    try {
      writeStep(instance, step);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the trace " + file + ": " + e.getMessage(), e);
    }
  }

  /**
   * Writes the requests of {@code instance} that ended since its previous step; those that ended
   * when {@code step} did (its output ended them) get its number, as vLLM's FINISHED does.
   */
  private void flushEnded(int instance, StepRecord step) {
    List<Ended> list = ended.get(instance);
    if (list == null || list.isEmpty()) {
      return;
    }
    for (Ended e : list) {
      Event f = e.finished();
      if (step != null && f.timeUs() == step.endUs()) {
        f = new Event(f.name(), f.timeUs(), step.stepId(), f.phase(), f.prefillDone(),
            f.prefillTotal(), f.decodeDone(), f.preemptions(), f.extraKey(), f.extraValue());
      }
      e.journey().core.add(f);
      write(e.requestId(), e.journey(), e.outcome(), e.clientEndUs());
    }
    list.clear();
  }

  private void write(long requestId, Journey j, RequestOutcome outcome, long clientEndUs) {
    try {
      writeRequest(requestId, j, outcome, clientEndUs);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the trace " + file + ": " + e.getMessage(), e);
    }
  }

  private boolean sampled(int instance, long stepId) {
    if (stepSampleRate >= 1) {
      return true;
    }
    long h = seed * 0x9E3779B97F4A7C15L ^ (instance + 1L) * 0xC2B2AE3D27D4EB4FL ^ stepId;
    h ^= h >>> 33;
    h *= 0xff51afd7ed558ccdL;
    h ^= h >>> 33;
    return (h >>> 11) * 0x1.0p-53 < stepSampleRate;
  }

  private boolean journeySampled(long requestId) {
    if (journeySampleRate >= 1) {
      return true;
    }
    long h = (seed + 0x632BE59BD9B4E019L) * 0xD6E8FEB86659FD93L ^ requestId * 0x9E3779B97F4A7C15L;
    h ^= h >>> 32;
    h *= 0xD6E8FEB86659FD93L;
    h ^= h >>> 32;
    return (h >>> 11) * 0x1.0p-53 < journeySampleRate;
  }

  private static Event event(Journey j, String name, RequestView r, long timeUs, long step,
      String phase, String extraKey, String extraValue) {
    int prefillDone = Math.max(j.prefillHighWater, Math.min(r.progressIndex(), r.inputTokens()));
    j.prefillHighWater = prefillDone;
    return new Event(name, timeUs, step, phase, prefillDone, r.inputTokens(), r.generatedTokens(),
        r.preemptions(), extraKey, extraValue);
  }

  // ---------------------------------------------------------------- JSON

  private void writeRequest(long id, Journey j, RequestOutcome outcome, long clientEndUs)
      throws IOException {
    String traceId = hex(id, 0x5151L) + hex(id, 0x7a7aL);
    JsonGenerator g = open(Math.max(j.instance, 0), "vllm.api");
    span(g, traceId, hex(id, 1), "llm_request", j.arrivalUs, clientEndUs);
    requestIdAttribute(g, id);
    g.writeArrayFieldStart("events");
    apiEvent(g, "ARRIVED", j.arrivalUs);
    if (j.instance >= 0 && !j.core.isEmpty()) {
      apiEvent(g, "HANDOFF_TO_CORE", j.core.get(0).timeUs());
    }
    if (j.firstResponseUs >= 0) {
      apiEvent(g, "FIRST_RESPONSE", j.firstResponseUs);
    }
    if (outcome == RequestOutcome.COMPLETED) {
      apiEvent(g, "DEPARTED", clientEndUs);
    }
    g.writeEndArray();
    g.writeObjectFieldStart("status");
    g.writeNumberField("code", outcome == RequestOutcome.COMPLETED ? 1 : 2);
    g.writeEndObject();
    g.writeEndObject();
    close(g);
    if (j.instance >= 0 && !j.core.isEmpty()) {
      g = open(j.instance, "vllm.scheduler");
      span(g, traceId, hex(id, 2), "llm_core", j.core.get(0).timeUs(),
          j.core.get(j.core.size() - 1).timeUs());
      g.writeStringField("parentSpanId", hex(id, 1));
      requestIdAttribute(g, id);
      g.writeArrayFieldStart("events");
      for (Event e : j.core) {
        g.writeStartObject();
        g.writeStringField("timeUnixNano", Long.toString(e.timeUs() * 1000));
        g.writeStringField("name", e.name());
        g.writeArrayFieldStart("attributes");
        intAttr(g, "ts.monotonic", e.timeUs() * 1000);
        if (e.step() >= 0) {
          intAttr(g, "scheduler.step", e.step());
        }
        strAttr(g, "phase", e.phase());
        intAttr(g, "prefill_done_tokens", e.prefillDone());
        intAttr(g, "prefill_total_tokens", e.prefillTotal());
        intAttr(g, "decode_done_tokens", e.decodeDone());
        intAttr(g, "num_preemptions", e.preemptions());
        if (e.extraKey() != null) {
          strAttr(g, e.extraKey(), e.extraValue());
        }
        g.writeEndArray();
        g.writeEndObject();
      }
      g.writeEndArray();
      g.writeEndObject();
      close(g);
    }
    requestsWritten++;
  }

  private void writeStep(int instance, StepRecord s) throws IOException {
    JsonGenerator g = open(instance, "vllm.scheduler.step");
    String traceId = hex(instance, 0x5e5eL) + hex(s.stepId(), 0x3c3cL);
    span(g, traceId, hex(s.stepId(), instance + 3L), "scheduler_step", s.startUs(), s.endUs());
    g.writeArrayFieldStart("events");
    g.writeStartObject();
    g.writeStringField("timeUnixNano", Long.toString(s.endUs() * 1000));
    g.writeStringField("name", "step.BATCH_SUMMARY");
    g.writeArrayFieldStart("attributes");
    intAttr(g, "step.id", s.stepId());
    intAttr(g, "step.ts_start_ns", s.startUs() * 1000);
    intAttr(g, "step.ts_end_ns", s.endUs() * 1000);
    intAttr(g, "step.duration_us", s.durationUs());
    intAttr(g, "queue.running_depth", s.runningDepth());
    intAttr(g, "queue.waiting_depth", s.waitingDepth());
    intAttr(g, "batch.num_prefill_reqs", s.prefillRequests());
    intAttr(g, "batch.num_decode_reqs", s.decodeRequests());
    intAttr(g, "batch.scheduled_tokens", s.prefillTokens() + s.decodeTokens());
    intAttr(g, "batch.prefill_tokens", s.prefillTokens());
    intAttr(g, "batch.decode_tokens", s.decodeTokens());
    intAttr(g, "batch.num_finished", s.finished());
    intAttr(g, "batch.num_preempted", s.preempted());
    g.writeStartObject();
    g.writeStringField("key", "kv.usage_gpu_ratio");
    g.writeObjectFieldStart("value");
    g.writeNumberField("doubleValue",
        (double) (s.kvBlocksTotal() - s.kvBlocksFree()) / s.kvBlocksTotal());
    g.writeEndObject();
    g.writeEndObject();
    intAttr(g, "kv.blocks_total_gpu", s.kvBlocksTotal());
    intAttr(g, "kv.blocks_free_gpu", s.kvBlocksFree());
    g.writeEndArray();
    g.writeEndObject();
    if (requestSnapshots) {
      for (StepRecord.RequestState q : s.requests()) {
        g.writeStartObject();
        g.writeStringField("timeUnixNano", Long.toString(s.endUs() * 1000));
        g.writeStringField("name", "step.REQUEST_SNAPSHOT");
        g.writeArrayFieldStart("attributes");
        intAttr(g, "step.id", s.stepId());
        strAttr(g, "request.id", Long.toString(q.requestId()));
        strAttr(g, "request.phase", q.prefill() ? "PREFILL" : "DECODE");
        intAttr(g, "request.num_prompt_tokens", q.promptTokens());
        intAttr(g, "request.num_computed_tokens", q.computedTokens());
        intAttr(g, "request.num_output_tokens", q.outputTokens());
        intAttr(g, "request.num_preemptions", q.preemptions());
        intAttr(g, "request.scheduled_tokens_this_step", q.scheduledTokens());
        intAttr(g, "kv.blocks_allocated_gpu", q.blocksAllocated());
        intAttr(g, "kv.blocks_cached_gpu", q.cachedBlocks());
        intAttr(g, "request.effective_prompt_len", q.promptTokens() - q.cachedPromptTokens());
        g.writeEndArray();
        g.writeEndObject();
      }
    }
    g.writeEndArray();
    g.writeEndObject();
    close(g);
    stepsWritten++;
  }

  /** Starts one line: resourceSpans of {@code instance}, one scope, an open span object. */
  private JsonGenerator open(int instance, String scope) throws IOException {
    JsonGenerator g = gen;
    g.writeStartObject();
    g.writeArrayFieldStart("resourceSpans");
    g.writeStartObject();
    g.writeObjectFieldStart("resource");
    g.writeArrayFieldStart("attributes");
    strAttr(g, "service.name", "blis");
    strAttr(g, "service.instance.id", Integer.toString(instance));
    g.writeEndArray();
    g.writeEndObject();
    g.writeArrayFieldStart("scopeSpans");
    g.writeStartObject();
    g.writeObjectFieldStart("scope");
    g.writeStringField("name", scope);
    g.writeEndObject();
    g.writeArrayFieldStart("spans");
    g.writeStartObject();
    return g;
  }

  private void close(JsonGenerator g) throws IOException {
    g.writeEndArray(); // spans
    g.writeEndObject();
    g.writeEndArray(); // scopeSpans
    g.writeEndObject();
    g.writeEndArray(); // resourceSpans
    g.writeEndObject();
  }

  private static void span(JsonGenerator g, String traceId, String spanId, String name,
      long startUs, long endUs) throws IOException {
    g.writeStringField("traceId", traceId);
    g.writeStringField("spanId", spanId);
    g.writeStringField("name", name);
    g.writeNumberField("kind", 1);
    g.writeStringField("startTimeUnixNano", Long.toString(startUs * 1000));
    g.writeStringField("endTimeUnixNano", Long.toString(endUs * 1000));
  }

  private static void requestIdAttribute(JsonGenerator g, long id) throws IOException {
    g.writeArrayFieldStart("attributes");
    strAttr(g, "request.id", Long.toString(id));
    g.writeEndArray();
  }

  private static void apiEvent(JsonGenerator g, String name, long timeUs) throws IOException {
    g.writeStartObject();
    g.writeStringField("timeUnixNano", Long.toString(timeUs * 1000));
    g.writeStringField("name", name);
    g.writeArrayFieldStart("attributes");
    intAttr(g, "ts.monotonic", timeUs * 1000);
    g.writeEndArray();
    g.writeEndObject();
  }

  private static void intAttr(JsonGenerator g, String key, long v) throws IOException {
    g.writeStartObject();
    g.writeStringField("key", key);
    g.writeObjectFieldStart("value");
    g.writeStringField("intValue", Long.toString(v));
    g.writeEndObject();
    g.writeEndObject();
  }

  private static void strAttr(JsonGenerator g, String key, String v) throws IOException {
    g.writeStartObject();
    g.writeStringField("key", key);
    g.writeObjectFieldStart("value");
    g.writeStringField("stringValue", v);
    g.writeEndObject();
    g.writeEndObject();
  }

  /** 16 hex digits mixing {@code id} and {@code salt}: deterministic trace and span ids. */
  private static String hex(long id, long salt) {
    long h = (id + 1) * 0x9E3779B97F4A7C15L ^ salt * 0xC2B2AE3D27D4EB4FL;
    h ^= h >>> 31;
    h *= 0xBF58476D1CE4E5B9L;
    h ^= h >>> 29;
    String hex = Long.toHexString(h);
    return hex.length() == 16 ? hex : "0".repeat(16 - hex.length()) + hex;
  }

  @Override
  public void close() {
    for (int instance : List.copyOf(ended.keySet())) {
      flushEnded(instance, null);
    }
    try {
      if (stepsWritten + requestsWritten > 0) {
        gen.writeRaw('\n');
      }
      gen.close();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the trace " + file + ": " + e.getMessage(), e);
    }
  }
}
