package io.blis.latency.fit;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
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
 * missing a required attribute, or a span of another scope is skipped and counted in {@link
 * Result#warnings()}. A line that is not JSON, or a truncated gzip stream, is an error naming the
 * file and line: a trace is never silently cut short.
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
   */
  public record Result(List<TracedStep> steps, List<TracedJourney> journeys,
      Map<String, Long> warnings) {}

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
    } else if (Files.isRegularFile(path)) {
      files.add(path);
    } else {
      throw new IllegalArgumentException("traces: no such file or directory '" + path + "'");
    }
    Builder b = new Builder();
    for (Path f : files) {
      b.readFile(f);
    }
    return b.result();
  }

  /** Collects events across files. */
  private static final class Builder {
    private final Map<String, Map<Long, StepParts>> steps = new TreeMap<>();
    private final Map<String, JourneyParts> journeys = new LinkedHashMap<>();
    private final Map<String, Long> warnings = new TreeMap<>();

    private void warn(String kind) {
      warnings.merge(kind, 1L, Long::sum);
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
          JsonNode root;
          try {
            root = JSON.readTree(line);
          } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("traces: " + f + " line " + lineNo
                + ": not OTLP JSON (" + e.getOriginalMessage() + ")", e);
          }
          if (!root.has("resourceSpans")) {
            throw new IllegalArgumentException("traces: " + f + " line " + lineNo
                + ": expected an object with resourceSpans (an OTel collector file export)");
          }
          for (JsonNode rs : root.path("resourceSpans")) {
            String instance = attributes(rs.path("resource")).getOrDefault("service.instance.id", "");
            for (JsonNode ss : rs.path("scopeSpans")) {
              String scope = ss.path("scope").path("name").asText("");
              for (JsonNode span : ss.path("spans")) {
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
          for (JsonNode e : span.path("events")) {
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
      Map<String, JsonNode> a = values(e);
      try {
        StepParts p = steps.computeIfAbsent(instance, k -> new TreeMap<>())
            .computeIfAbsent(num(a, "step.id"), k -> new StepParts());
        if (p.summary != null) {
          warn("duplicate step summary");
          return;
        }
        p.summary = a;
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
      for (JsonNode e : span.path("events")) {
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
          try {
            out.add(new TracedStep(inst.getKey(), e.getKey(), num(a, "step.ts_start_ns"),
                num(a, "step.ts_end_ns"), num(a, "step.duration_us"),
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
      return new Result(out, js, warnings);
    }
  }

  private static final class StepParts {
    Map<String, JsonNode> summary;
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

  /** Attribute key to OTLP value object. */
  private static Map<String, JsonNode> values(JsonNode holder) {
    Map<String, JsonNode> m = new HashMap<>();
    for (JsonNode a : holder.path("attributes")) {
      m.put(a.path("key").asText(), a.path("value"));
    }
    return m;
  }

  /** Attribute key to its value as text. */
  private static Map<String, String> attributes(JsonNode holder) {
    Map<String, String> m = new HashMap<>();
    for (JsonNode a : holder.path("attributes")) {
      m.put(a.path("key").asText(), text(a.path("value")));
    }
    return m;
  }

  private static String text(JsonNode v) {
    for (String k : new String[] {"stringValue", "intValue", "doubleValue", "boolValue"}) {
      if (v.has(k)) {
        return v.get(k).asText();
      }
    }
    return "";
  }

  private static long num(Map<String, JsonNode> a, String key) throws MissingAttribute {
    JsonNode v = a.get(key);
    if (v == null) {
      throw new MissingAttribute(key);
    }
    if (v.has("intValue")) {
      try {
        return Long.parseLong(v.get("intValue").asText());
      } catch (NumberFormatException e) {
        throw new MissingAttribute(key + " (not a whole number)");
      }
    }
    if (v.has("doubleValue")) {
      return Math.round(v.get("doubleValue").asDouble());
    }
    throw new MissingAttribute(key);
  }

  private static long optNum(Map<String, JsonNode> a, String key) {
    try {
      return a.containsKey(key) ? num(a, key) : -1;
    } catch (MissingAttribute e) {
      return -1;
    }
  }

  private static String str(Map<String, JsonNode> a, String key) throws MissingAttribute {
    JsonNode v = a.get(key);
    if (v == null) {
      throw new MissingAttribute(key);
    }
    return text(v);
  }
}
