package io.blis.engine.trace;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.blis.api.LatencyModel;
import io.blis.engine.EngineLimits;
import io.blis.engine.LinearTestModel;
import io.blis.engine.Simulation;
import io.blis.engine.result.SimulationResult;
import io.blis.workload.RequestOutcome;
import io.blis.workload.RequestSource;
import io.blis.workload.synthetic.LengthSpec;
import io.blis.workload.synthetic.SyntheticWorkload;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The exported trace says what the simulation did, in the documented shape. */
class OtlpTraceWriterTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  /** Step = 800 us + 3 us per token, so every step's duration can be checked from its tokens. */
  private static final LatencyModel MODEL = new LinearTestModel(800, 3, 100, 0, 5, 0);

  private static SimulationResult run(Path file, double rate, boolean snapshots) {
    RequestSource src = SyntheticWorkload.poissonGaussian(300, 300,
        new LengthSpec(400, 200, 16, 1500), new LengthSpec(60, 30, 1, 200), 64, 7);
    try (OtlpTraceWriter w = new OtlpTraceWriter(file, rate, snapshots, 42)) {
      return Simulation.builder().latencyModel(MODEL).limits(new EngineLimits(32, 512, 0, 0))
          .totalKvBlocks(250).source(src).listener(w).recordRequests(true).build().run();
    }
  }

  private static List<JsonNode> spans(Path file) throws Exception {
    List<JsonNode> out = new ArrayList<>();
    var in = Files.newInputStream(file);
    var stream = file.toString().endsWith(".gz") ? new GZIPInputStream(in) : in;
    try (BufferedReader r = new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8))) {
      String line;
      while ((line = r.readLine()) != null) {
        JsonNode rs = JSON.readTree(line).path("resourceSpans").get(0);
        JsonNode ss = rs.path("scopeSpans").get(0);
        for (JsonNode span : ss.path("spans")) {
          ((com.fasterxml.jackson.databind.node.ObjectNode) span).put("_scope",
              ss.path("scope").path("name").asText());
          out.add(span);
        }
      }
    }
    return out;
  }

  private static Map<String, JsonNode> attrs(JsonNode event) {
    Map<String, JsonNode> m = new HashMap<>();
    for (JsonNode a : event.path("attributes")) {
      m.put(a.path("key").asText(), a.path("value"));
    }
    return m;
  }

  private static long intAttr(JsonNode event, String key) {
    return Long.parseLong(attrs(event).get(key).path("intValue").asText());
  }

  @Test
  void everyStepAndRequestIsWrittenAndAgreesWithTheRun(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("run.otlp.jsonl");
    SimulationResult res = run(file, 1.0, true);
    List<JsonNode> spans = spans(file);
    List<JsonNode> steps = spans.stream().filter(s -> s.path("_scope").asText().equals("vllm.scheduler.step")).toList();
    assertThat(steps).hasSize((int) res.engine().steps());
    long finished = 0;
    long lastEnd = -1;
    for (JsonNode s : steps) {
      JsonNode summary = s.path("events").get(0);
      assertThat(summary.path("name").asText()).isEqualTo("step.BATCH_SUMMARY");
      long tokens = intAttr(summary, "batch.scheduled_tokens");
      assertThat(tokens).isEqualTo(intAttr(summary, "batch.prefill_tokens") + intAttr(summary, "batch.decode_tokens"));
      assertThat(intAttr(summary, "step.duration_us")).isEqualTo(800 + 3 * tokens);
      assertThat(intAttr(summary, "step.ts_end_ns") - intAttr(summary, "step.ts_start_ns"))
          .isEqualTo(1000 * intAttr(summary, "step.duration_us"));
      assertThat(intAttr(summary, "step.ts_end_ns")).isGreaterThan(lastEnd);
      lastEnd = intAttr(summary, "step.ts_end_ns");
      finished += intAttr(summary, "batch.num_finished");
      // one snapshot per request of the batch; their scheduled tokens add up to the step's
      long perRequest = 0;
      int snapshots = 0;
      for (JsonNode e : s.path("events")) {
        if (e.path("name").asText().equals("step.REQUEST_SNAPSHOT")) {
          snapshots++;
          perRequest += intAttr(e, "request.scheduled_tokens_this_step");
          assertThat(intAttr(e, "request.num_computed_tokens") + intAttr(e, "request.scheduled_tokens_this_step"))
              .isLessThanOrEqualTo(intAttr(e, "request.num_prompt_tokens") + 200);
        }
      }
      assertThat(snapshots).isEqualTo(intAttr(summary, "batch.num_prefill_reqs") + intAttr(summary, "batch.num_decode_reqs"));
      assertThat(perRequest).isEqualTo(tokens);
    }
    assertThat(finished).isEqualTo(res.overall().completedRequests());

    List<JsonNode> api = spans.stream().filter(s -> s.path("_scope").asText().equals("vllm.api")).toList();
    List<JsonNode> core = spans.stream().filter(s -> s.path("_scope").asText().equals("vllm.scheduler")).toList();
    assertThat(api).hasSize(300);
    assertThat(core).hasSize(300);
    Map<Long, Long> ttftByRecord = new HashMap<>();
    res.requests().stream().filter(r -> r.outcome() == RequestOutcome.COMPLETED)
        .forEach(r -> ttftByRecord.put(r.arrivalUs() * 1000 + r.ttftUs() * 1000, r.id()));
    for (JsonNode a : api) {
      List<String> names = new ArrayList<>();
      a.path("events").forEach(e -> names.add(e.path("name").asText()));
      assertThat(names).containsExactly("ARRIVED", "HANDOFF_TO_CORE", "FIRST_RESPONSE", "DEPARTED");
      long firstResponse = Long.parseLong(a.path("events").get(2).path("timeUnixNano").asText());
      assertThat(ttftByRecord).containsKey(firstResponse);
    }
    for (JsonNode c : core) {
      List<String> names = new ArrayList<>();
      long t = -1;
      for (JsonNode e : c.path("events")) {
        names.add(e.path("name").asText());
        long at = Long.parseLong(e.path("timeUnixNano").asText());
        assertThat(at).isGreaterThanOrEqualTo(t);
        t = at;
      }
      assertThat(names.get(0)).isEqualTo("QUEUED");
      assertThat(names).contains("SCHEDULED", "FIRST_TOKEN").endsWith("FINISHED");
      assertThat(names.stream().filter(n -> n.equals("PREEMPTED")).count())
          .isEqualTo(names.stream().filter(n -> n.equals("SCHEDULED")).count() - 1);
    }
    assertThat(res.engine().preemptions()).as("the small cache preempts, so RESUME is exercised").isPositive();
  }

  @Test
  void journeyEventsCarryTheStepsAndProgressVllmRecords(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("run.jsonl");
    run(file, 1.0, false);
    int cachedStarts = 0;
    for (JsonNode c : spans(file)) {
      if (!c.path("_scope").asText().equals("vllm.scheduler")) {
        continue;
      }
      long firstToken = -1;
      for (JsonNode e : c.path("events")) {
        String name = e.path("name").asText();
        Map<String, JsonNode> a = attrs(e);
        if (name.equals("FIRST_TOKEN")) {
          firstToken = intAttr(e, "scheduler.step");
          assertThat(intAttr(e, "prefill_done_tokens")).isEqualTo(intAttr(e, "prefill_total_tokens"));
        }
        if (name.equals("SCHEDULED") && a.get("schedule.kind").path("stringValue").asText().equals("FIRST")
            && intAttr(e, "prefill_done_tokens") > 0) {
          cachedStarts++; // the shared 64-token prefix found in the prefix cache
        }
        if (name.equals("FINISHED")) {
          // the step whose output ended it: the last of its decode steps, one token each
          assertThat(a).containsKey("scheduler.step");
          if (intAttr(e, "num_preemptions") == 0) {
            assertThat(intAttr(e, "scheduler.step") - firstToken + 1)
                .isEqualTo(intAttr(e, "decode_done_tokens"));
          }
        }
      }
    }
    assertThat(cachedStarts).isPositive();
  }

  @Test
  void journeySamplingKeepsBothSpansOfAboutTheRateOfRequests(@TempDir Path dir) throws Exception {
    Path a = dir.resolve("a.jsonl");
    Path b = dir.resolve("b.jsonl");
    RequestSource src = SyntheticWorkload.poissonGaussian(300, 1000,
        new LengthSpec(400, 200, 16, 1500), new LengthSpec(60, 30, 1, 200), 64, 7);
    for (Path p : List.of(a, b)) {
      try (OtlpTraceWriter w = new OtlpTraceWriter(p, 1.0, 0.5, false, 42);
          RequestSource s = SyntheticWorkload.poissonGaussian(300, 1000,
              new LengthSpec(400, 200, 16, 1500), new LengthSpec(60, 30, 1, 200), 64, 7)) {
        Simulation.builder().latencyModel(MODEL).limits(new EngineLimits(32, 512, 0, 0))
            .totalKvBlocks(250).source(s).listener(w).build().run();
      }
    }
    src.close();
    Map<String, Integer> spansPerRequest = new HashMap<>();
    long steps = 0;
    for (JsonNode s : spans(a)) {
      if (s.path("_scope").asText().equals("vllm.scheduler.step")) {
        steps++;
      } else {
        spansPerRequest.merge(s.path("attributes").get(0).path("value").path("stringValue").asText(),
            1, Integer::sum);
      }
    }
    assertThat(spansPerRequest.values()).containsOnly(2); // both spans of a request, or neither
    assertThat(spansPerRequest.size()).isBetween(400, 600); // 1000 x 0.5, 6 sigma
    assertThat(steps).isPositive(); // steps are all kept
    assertThat(Files.readAllBytes(a)).isEqualTo(Files.readAllBytes(b));
  }

  @Test
  void stepSamplingKeepsAboutTheRateAndIsDeterministic(@TempDir Path dir) throws Exception {
    Path a = dir.resolve("a.jsonl.gz");
    Path b = dir.resolve("b.jsonl.gz");
    SimulationResult res = run(a, 0.1, false);
    run(b, 0.1, false);
    long steps = spans(a).stream().filter(s -> s.path("_scope").asText().equals("vllm.scheduler.step")).count();
    double expected = 0.1 * res.engine().steps();
    double sigma = Math.sqrt(expected * 0.9);
    assertThat((double) steps).isBetween(expected - 4 * sigma, expected + 4 * sigma);
    assertThat(Files.readAllBytes(a)).isEqualTo(Files.readAllBytes(b));
  }
}
