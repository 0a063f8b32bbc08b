package io.blis.latency.fit;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.blis.latency.coeff.InputTrees;
import java.io.BufferedInputStream;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import java.util.zip.GZIPInputStream;

/**
 * Reads vLLM OpenTelemetry traces as an OTel collector's file exporter writes them (OTLP JSON, one
 * {@code ExportTraceServiceRequest} per line; a file, gzipped or not, or a directory of them):
 * {@code step.BATCH_SUMMARY} and {@code step.REQUEST_SNAPSHOT} events become {@link TracedStep}s,
 * joined by instance and {@code step.id}; journey spans of scopes {@code vllm.api} and {@code
 * vllm.scheduler} become {@link TracedJourney}s, joined by {@code request.id}.
 *
 * <p>Sampled or partial traces are expected: a snapshot whose step has no summary, an event
 * missing a required attribute, a step summary whose {@code step.duration_us} is not finite, or a
 * span of another scope is skipped and counted in {@link Result#warnings()}, with where each kind
 * was first seen ({@link Result#firstSeen()}). A trace that is broken is an error naming the file
 * and line: a line that is not JSON, {@code resourceSpans} (or {@code scopeSpans}, {@code spans},
 * {@code events}, {@code attributes}) that is not a list, an {@code intValue} that is not a whole
 * number or a {@code doubleValue} that is not a number, a truncated gzip stream, or a trace with
 * nothing in it (every file empty): a trace is never silently cut short.
 */
public final class TraceImport {

  private static final ObjectMapper JSON = new ObjectMapper();

  private TraceImport() {}

  /**
   * What a trace held.
   *
   * @param steps steps with a summary, by instance then step id
   * @param journeys journeys by request id, in the order first seen
   * @param warnings what was skipped, by kind, with counts
   * @param firstSeen for each kind of warning, where it was first seen ({@code FILE line N})
   * @param summaries {@code step.BATCH_SUMMARY} events read, usable or not
   */
  public record Result(List<TracedStep> steps, List<TracedJourney> journeys,
      Map<String, Long> warnings, Map<String, String> firstSeen, long summaries) {}

  /** Reads a trace file or every regular file of a directory (by name). */
  public static Result read(Path path) {
    List<Path> files = new ArrayList<>();
    if (Files.isDirectory(path)) {
      try (Stream<Path> s = Files.list(path)) {
        s.filter(Files::isRegularFile).sorted().forEach(files::add);
      } catch (IOException e) {
        throw new UncheckedIOException("traces: cannot list " + path + ": " + e.getMessage(), e);
      }
      if (files.isEmpty()) {
        throw new IllegalArgumentException("traces: no files in " + path);
      }
      if (Files.isRegularFile(path.resolve("experiments.json")) && Files.isRegularFile(path.resolve("run.json"))) {
        throw new IllegalArgumentException("traces: " + path + " is the folder of an observed run (blis observe):"
            + " what a client saw, not the server's traces. Fitting reads vLLM's OpenTelemetry traces (OTLP JSON,"
            + " one object with resourceSpans per line, as an OTel collector's file exporter writes the spans of a"
            + " vLLM started with --otlp-traces-endpoint); an observed run is read by calibrate and validate"
            + " (--experiments " + path.resolve("experiments.json") + ")");
      }
    } else if (Files.isRegularFile(path)) {
      files.add(path);
    } else {
      throw new IllegalArgumentException("traces: no such file or directory '" + path + "'");
    }
    Builder b = new Builder();
    for (Path f : files) {
      b.readFile(f);
    }
    if (b.lines == 0) {
      throw new IllegalArgumentException("traces: " + (files.size() == 1 ? path + " is empty"
          : "every file in " + path + " is empty") + " (expected OTLP JSON, one object with resourceSpans"
          + " per line, as an OTel collector's file exporter writes it)");
    }
    return b.result();
  }

  /** Collects events across files. */
  private static final class Builder {
    private final Map<String, Map<Long, StepParts>> steps = new TreeMap<>();
    private final Map<String, JourneyParts> journeys = new LinkedHashMap<>();
    private final Map<String, Long> warnings = new TreeMap<>();
    private final Map<String, String> firstSeen = new TreeMap<>();
    /** Non-blank lines read, over all files. */
    long lines;
    private long summaries;
    /** Where the line being read is: {@code FILE line N}. */
    private String at = "";

    private void warn(String kind) {
      warn(kind, at);
    }

    private void warn(String kind, String where) {
      warnings.merge(kind, 1L, Long::sum);
      firstSeen.putIfAbsent(kind, where);
    }

    /** A broken trace: one error naming the place. */
    private IllegalArgumentException broken(String where, String message) {
      return new IllegalArgumentException("traces: " + where + ": " + message);
    }

    /** The elements of {@code holder.field}: none when it is absent, an error when it is not a list. */
    private Iterable<JsonNode> list(JsonNode holder, String field) {
      JsonNode n = holder.get(field);
      if (n == null || n.isNull()) {
        return List.of();
      }
      if (!n.isArray()) {
        throw broken(at, field + " must be a list, got " + kind(n) + " (not OTLP JSON)");
      }
      return n;
    }

    void readFile(Path f) {
      long lineNo = 0;
      try (BufferedReader r = new BufferedReader(new InputStreamReader(open(f), StandardCharsets.UTF_8))) {
        String line;
        while (true) {
          try {
            line = r.readLine();
          } catch (IOException e) {
            throw new IllegalArgumentException("traces: " + f + " is truncated or corrupt after line "
                + lineNo + ": " + e.getMessage(), e);
          }
          if (line == null) {
            break;
          }
          lineNo++;
          if (line.isBlank()) {
            continue;
          }
          lines++;
          at = f + " line " + lineNo;
          JsonNode root;
          try {
            root = JSON.readTree(line);
          } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("traces: " + f + " line " + lineNo
                + (e.getLocation() == null ? "" : ", column " + e.getLocation().getColumnNr())
                + ": not OTLP JSON (" + InputTrees.message(e) + ")", e);
          }
          if (root == null || !root.isObject() || !root.has("resourceSpans")) {
            throw new IllegalArgumentException("traces: " + f + " line " + lineNo
                + ": expected an object with resourceSpans (an OTel collector file export)");
          }
          for (JsonNode rs : list(root, "resourceSpans")) {
            String instance = attributes(rs.path("resource")).getOrDefault("service.instance.id", "");
            for (JsonNode ss : list(rs, "scopeSpans")) {
              String scope = ss.path("scope").path("name").asText("");
              for (JsonNode span : list(ss, "spans")) {
                span(instance, scope, span);
              }
            }
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException("traces: cannot read " + f + ": " + e.getMessage(), e);
      }
    }

    private static InputStream open(Path f) throws IOException {
      InputStream in = new BufferedInputStream(Files.newInputStream(f), 1 << 16);
      in.mark(2);
      int b1 = in.read();
      int b2 = in.read();
      in.reset();
      return b1 == 0x1f && b2 == 0x8b ? new GZIPInputStream(in, 1 << 16) : in;
    }

    private void span(String instance, String scope, JsonNode span) {
      switch (scope) {
        case "vllm.scheduler.step" -> {
          for (JsonNode e : list(span, "events")) {
            String name = e.path("name").asText("");
            if (name.equals("step.BATCH_SUMMARY")) {
              summary(instance, e);
            } else if (name.equals("step.REQUEST_SNAPSHOT")) {
              snapshot(instance, e);
            } else {
              warn("unknown step event " + name);
            }
          }
        }
        case "vllm.api", "vllm.scheduler" -> journey(instance, scope.equals("vllm.api"), span);
        default -> warn("span of scope '" + scope + "' ignored");
      }
    }

    private void summary(String instance, JsonNode e) {
      summaries++;
      Map<String, JsonNode> a = values(e);
      try {
        StepParts p = steps.computeIfAbsent(instance, k -> new TreeMap<>())
            .computeIfAbsent(num(a, "step.id"), k -> new StepParts());
        if (p.summary != null) {
          warn("duplicate step summary");
          return;
        }
        p.summary = a;
        p.at = at;
      } catch (MissingAttribute m) {
        warn("step summary without " + m.getMessage());
      }
    }

    private void snapshot(String instance, JsonNode e) {
      Map<String, JsonNode> a = values(e);
      try {
        long step = num(a, "step.id");
        TracedStep.Request q = new TracedStep.Request(str(a, "request.id"),
            str(a, "request.phase").equals("PREFILL"), (int) num(a, "request.num_prompt_tokens"),
            (int) num(a, "request.num_computed_tokens"), (int) num(a, "request.num_output_tokens"),
            (int) optNum(a, "request.num_preemptions"), (int) num(a, "request.scheduled_tokens_this_step"),
            (int) optNum(a, "kv.blocks_allocated_gpu"), (int) optNum(a, "kv.blocks_cached_gpu"));
        StepParts p = steps.computeIfAbsent(instance, k -> new TreeMap<>())
            .computeIfAbsent(step, k -> new StepParts());
        if (!p.requestIds.add(q.requestId())) {
          warn("duplicate request snapshot");
          return;
        }
        p.requests.add(q);
      } catch (MissingAttribute m) {
        warn("request snapshot without " + m.getMessage());
      }
    }

    private void journey(String instance, boolean api, JsonNode span) {
      String id = attributes(span).get("request.id");
      if (id == null) {
        warn("journey span without request.id");
        return;
      }
      JourneyParts j = journeys.computeIfAbsent(id, k -> new JourneyParts());
      if (!api) {
        j.instance = instance;
      }
      for (JsonNode e : list(span, "events")) {
        Map<String, JsonNode> a = values(e);
        long t;
        try {
          t = Long.parseLong(e.path("timeUnixNano").asText());
        } catch (NumberFormatException ex) {
          warn("journey event without timeUnixNano");
          continue;
        }
        TracedJourney.Event ev = new TracedJourney.Event(e.path("name").asText(""), t,
            optNum(a, "scheduler.step"), (int) optNum(a, "prefill_done_tokens"),
            (int) optNum(a, "prefill_total_tokens"), (int) optNum(a, "decode_done_tokens"),
            (int) optNum(a, "num_preemptions"),
            a.containsKey("schedule.kind") ? text(a.get("schedule.kind"))
                : a.containsKey("finish.status") ? text(a.get("finish.status")) : "");
        (api ? j.api : j.core).add(ev);
      }
    }

    Result result() {
      List<TracedStep> out = new ArrayList<>();
      for (Map.Entry<String, Map<Long, StepParts>> inst : steps.entrySet()) {
        for (Map.Entry<Long, StepParts> e : inst.getValue().entrySet()) {
          StepParts p = e.getValue();
          if (p.summary == null) {
            warn("request snapshots of a step without summary");
            continue;
          }
          Map<String, JsonNode> a = p.summary;
          at = p.at;
          try {
            double duration = real(a, "step.duration_us");
            if (!Double.isFinite(duration)) {
              warn("step summary with a non-finite step.duration_us");
              continue;
            }
            out.add(new TracedStep(inst.getKey(), e.getKey(), num(a, "step.ts_start_ns"),
                num(a, "step.ts_end_ns"), Math.round(duration),
                (int) num(a, "batch.num_prefill_reqs"), (int) num(a, "batch.num_decode_reqs"),
                num(a, "batch.prefill_tokens"), num(a, "batch.decode_tokens"),
                (int) optNum(a, "queue.running_depth"), (int) optNum(a, "queue.waiting_depth"),
                optNum(a, "kv.blocks_total_gpu"), optNum(a, "kv.blocks_free_gpu"),
                (int) optNum(a, "batch.num_finished"), (int) optNum(a, "batch.num_preempted"),
                p.requests));
          } catch (MissingAttribute m) {
            warn("step summary without " + m.getMessage());
          }
        }
      }
      List<TracedJourney> js = new ArrayList<>();
      Comparator<TracedJourney.Event> byTime = Comparator.comparingLong(TracedJourney.Event::timeNs);
      journeys.forEach((id, j) -> {
        j.api.sort(byTime);
        j.core.sort(byTime);
        js.add(new TracedJourney(id, j.instance, j.api, j.core));
      });
      return new Result(out, js, warnings, firstSeen, summaries);
    }

    /** Attribute key to OTLP value object. */
    private Map<String, JsonNode> values(JsonNode holder) {
      Map<String, JsonNode> m = new HashMap<>();
      for (JsonNode a : list(holder, "attributes")) {
        m.put(a.path("key").asText(), a.path("value"));
      }
      return m;
    }

    /** Attribute key to its value as text. */
    private Map<String, String> attributes(JsonNode holder) {
      Map<String, String> m = new HashMap<>();
      for (JsonNode a : list(holder, "attributes")) {
        m.put(a.path("key").asText(), text(a.path("value")));
      }
      return m;
    }

    private long num(Map<String, JsonNode> a, String key) throws MissingAttribute {
      JsonNode v = a.get(key);
      if (v == null) {
        throw new MissingAttribute(key);
      }
      if (v.has("intValue")) {
        JsonNode n = v.get("intValue");
        if (n.isIntegralNumber() && n.canConvertToLong()) {
          return n.asLong();
        }
        try {
          if (n.isTextual()) {
            return Long.parseLong(n.asText().trim());
          }
        } catch (NumberFormatException e) {
          // below
        }
        throw broken(at, "attribute " + key + ": intValue must be a whole number, got " + n);
      }
      if (v.has("doubleValue")) {
        double d = real(a, key);
        if (!Double.isFinite(d)) {
          throw broken(at, "attribute " + key + ": doubleValue must be finite, got " + v.get("doubleValue"));
        }
        return Math.round(d);
      }
      throw new MissingAttribute(key);
    }

    /**
     * A numeric attribute as a double: an {@code intValue}, or a {@code doubleValue} (a JSON number,
     * or as proto3 JSON writes them "NaN", "Infinity", "-Infinity" or a number in a string).
     */
    private double real(Map<String, JsonNode> a, String key) throws MissingAttribute {
      JsonNode v = a.get(key);
      if (v == null) {
        throw new MissingAttribute(key);
      }
      if (!v.has("doubleValue")) {
        return num(a, key);
      }
      JsonNode n = v.get("doubleValue");
      if (n.isNumber()) {
        return n.asDouble();
      }
      if (n.isTextual()) {
        String t = n.asText().trim();
        switch (t) {
          case "NaN" -> {
            return Double.NaN;
          }
          case "Infinity" -> {
            return Double.POSITIVE_INFINITY;
          }
          case "-Infinity" -> {
            return Double.NEGATIVE_INFINITY;
          }
          default -> {
            try {
              return Double.parseDouble(t);
            } catch (NumberFormatException e) {
              // below
            }
          }
        }
      }
      throw broken(at, "attribute " + key + ": doubleValue must be a number, got " + n);
    }

    private long optNum(Map<String, JsonNode> a, String key) {
      try {
        return a.containsKey(key) ? num(a, key) : -1;
      } catch (MissingAttribute e) {
        return -1;
      }
    }
  }

  private static final class StepParts {
    Map<String, JsonNode> summary;
    /** Where the summary is, {@code FILE line N}. */
    String at;
    final List<TracedStep.Request> requests = new ArrayList<>();
    final java.util.Set<String> requestIds = new java.util.HashSet<>();
  }

  private static final class JourneyParts {
    String instance = "";
    final List<TracedJourney.Event> api = new ArrayList<>();
    final List<TracedJourney.Event> core = new ArrayList<>();
  }

  private static final class MissingAttribute extends Exception {
    MissingAttribute(String key) {
      super(key, null, false, false);
    }
  }

  /** What {@code n} is, for messages. */
  private static String kind(JsonNode n) {
    return n.isObject() ? "an object" : n.isTextual() ? "a string" : n.isNumber() ? "a number"
        : n.isBoolean() ? "true or false" : n.toString();
  }

  private static String text(JsonNode v) {
    for (String k : new String[] {"stringValue", "intValue", "doubleValue", "boolValue"}) {
      if (v.has(k)) {
        return v.get(k).asText();
      }
    }
    return "";
  }

  private static String str(Map<String, JsonNode> a, String key) throws MissingAttribute {
    JsonNode v = a.get(key);
    if (v == null) {
      throw new MissingAttribute(key);
    }
    return text(v);
  }
}
