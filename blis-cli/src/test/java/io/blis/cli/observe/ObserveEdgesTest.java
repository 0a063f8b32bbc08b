package io.blis.cli.observe;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.blis.cli.BlisCli;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code blis observe} against a server whose answers are wrong in ways a protocol parser lets
 * through: interim responses, usage counts and finish reasons that cannot be right, more chunks
 * than asked, a model list and a version of the wrong shape or size, metrics that are not finite.
 * Nothing such a server says reaches the run's files unchecked: it is refused in one line, or
 * recorded as not given (or {@code unknown}) and counted in one warning line per kind.
 */
class ObserveEdgesTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String MODEL = "m";
  private static final String MODELS = "{\"object\":\"list\",\"data\":[{\"id\":\"m\",\"object\":\"model\",\"max_model_len\":4096}]}";

  private FakeServer server;
  private Observer observer;

  @AfterEach
  void tearDown() {
    if (observer != null) {
      observer.close();
    }
    if (server != null) {
      server.close();
    }
  }

  // ------------------------------------------------------------------ 1. interim responses

  /**
   * A few interim responses before the answer are skipped; a flood of them fails the request with
   * its reason, and nothing of Netty's reaches stderr. max_tokens 1: three 100 Continue then the
   * answer; 2: 5000 of them, then the answer; 3: a switch of protocols nobody asked for.
   */
  @Test
  @Timeout(30)
  void interimResponsesAreSkippedUpToABoundAndAFloodFailsTheRequest() throws Exception {
    server = new FakeServer(r -> {
      if (!r.isCompletion()) {
        return r.info(MODELS);
      }
      if (r.body().path("max_tokens").asInt() == 3) {
        return ascii("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n");
      }
      int n = r.body().path("max_tokens").asInt() == 1 ? 3 : 5000;
      return concat(ascii("HTTP/1.1 100 Continue\r\n\r\n".repeat(n)), stream(tok(0, null), tok(1, "length"),
          usage(4, 2), "[DONE]"));
    });
    observer = Observer.create(config(server.port()));
    observer.probe();
    List<Observation> seen = new ArrayList<>();
    ByteArrayOutputStream stderr = new ByteArrayOutputStream();
    PrintStream before = System.err;
    System.setErr(new PrintStream(stderr, true, StandardCharsets.UTF_8));
    try {
      observer.run(RequestSource.of(List.of(RequestSpec.simple(0, 0, new int[] {11, 12, 13}, 1),
          RequestSpec.simple(1, 20_000, new int[] {11, 12, 13}, 2),
          RequestSpec.simple(2, 40_000, new int[] {11, 12, 13}, 3))), new ObservationListener() {
            @Override
            public void onObservation(Observation o) {
              seen.add(o);
            }
          });
    } finally {
      System.setErr(before);
    }
    seen.sort(java.util.Comparator.comparingLong(Observation::id));
    assertThat(seen).hasSize(3);
    Observation few = seen.get(0);
    assertThat(few.status()).as(few.toString()).isEqualTo(Observation.OK);
    assertThat(few.httpStatus()).isEqualTo(200);
    assertThat(few.chunks()).isEqualTo(2);
    Observation flood = seen.get(1);
    assertThat(flood.status()).as(flood.toString()).isEqualTo(Observation.CONNECTION);
    assertThat(flood.httpStatus()).as("an interim status is not the answer's").isZero();
    assertThat(flood.reason()).contains("more than " + NettyClient.MAX_INTERIM_RESPONSES
        + " interim (1xx) responses (HTTP 100) and no answer");
    Observation upgraded = seen.get(2);
    assertThat(upgraded.status()).as(upgraded.toString()).isEqualTo(Observation.CONNECTION);
    assertThat(upgraded.reason()).contains("the server switched protocols (HTTP 101), which this client did not ask for");
    assertThat(stderr.toString(StandardCharsets.UTF_8)).as("nothing of Netty's on stderr").isEmpty();
  }

  /**
   * A server that resets a keep-alive connection after its answer, while the connection waits in
   * the client's pool: the connection is dropped, and nothing of Netty's reaches stderr (it used to
   * log "An exceptionCaught() event was fired, and it reached at the tail of the pipeline").
   */
  @Test
  @Timeout(30)
  void aConnectionResetWhileIdleIsDroppedWithoutAWordOnStderr() throws Exception {
    server = new FakeServer(r -> r.isCompletion() ? stream(tok(0, null), tok(1, "length"), usage(3, 2), "[DONE]")
        : r.info(MODELS), r -> r.isCompletion() && r.body().path("max_tokens").asInt() == 1);
    observer = Observer.create(config(server.port()));
    observer.probe();
    List<Observation> seen = new ArrayList<>();
    ByteArrayOutputStream stderr = new ByteArrayOutputStream();
    PrintStream before = System.err;
    System.setErr(new PrintStream(stderr, true, StandardCharsets.UTF_8));
    try {
      observer.run(RequestSource.of(List.of(RequestSpec.simple(0, 0, new int[] {11, 12, 13}, 1),
          RequestSpec.simple(1, 600_000, new int[] {11, 12, 13}, 2))), new ObservationListener() {
            @Override
            public void onObservation(Observation o) {
              seen.add(o);
            }
          });
    } finally {
      System.setErr(before);
    }
    assertThat(seen).hasSize(2).allSatisfy(o -> assertThat(o.status()).as(o.toString()).isEqualTo(Observation.OK));
    assertThat(stderr.toString(StandardCharsets.UTF_8)).as("nothing of Netty's on stderr").isEmpty();
  }

  /** A stream line longer than the client reads ends the request as cut, its memory bounded. */
  @Test
  @Timeout(60)
  void aLineLongerThanTheClientReadsFailsTheRequest() {
    int size = NettyClient.MAX_LINE_BYTES + 1024;
    server = new FakeServer(r -> {
      if (!r.isCompletion()) {
        return r.info(MODELS);
      }
      byte[] head = ascii("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
          + Integer.toHexString(size) + "\r\n");
      byte[] out = java.util.Arrays.copyOf(head, head.length + size + 2);
      java.util.Arrays.fill(out, head.length, head.length + size, (byte) 'x');
      out[out.length - 2] = '\r';
      out[out.length - 1] = '\n';
      return out; // one line with no end, and no end of the body
    });
    observer = Observer.create(config(server.port()));
    observer.probe();
    List<Observation> seen = new ArrayList<>();
    observer.run(RequestSource.of(List.of(RequestSpec.simple(0, 0, new int[] {11, 12, 13}, 1))),
        new ObservationListener() {
          @Override
          public void onObservation(Observation o) {
            seen.add(o);
          }
        });
    assertThat(seen).singleElement().satisfies(o -> {
      assertThat(o.status()).isEqualTo(Observation.STREAM_CUT);
      assertThat(o.reason()).contains("a line of the answer is longer than " + NettyClient.MAX_LINE_BYTES + " bytes");
    });
  }

  // ------------------------------------------------------------------ 2, 3, 7. the answers' values

  /**
   * max_tokens 1: usage prompt_tokens -5 and completion_tokens 10^12; 2: completion_tokens 2.5
   * (not an integer); 3: 50 chunks for max_tokens 3 with completion_tokens 3; 4: an unknown
   * finish_reason of 10,000 characters; 5: a proper answer.
   */
  @Test
  @Timeout(30)
  void usageThatCannotBeRightMoreChunksThanAskedAndUnknownFinishReasonsAreCheckedAndCounted(@TempDir Path dir)
      throws Exception {
    server = new FakeServer(r -> {
      if (!r.isCompletion()) {
        return r.info(MODELS);
      }
      return switch (r.body().path("max_tokens").asInt()) {
        case 1 -> stream(tok(0, "length"), "{\"choices\":[],\"usage\":{\"prompt_tokens\":-5,\"completion_tokens\":"
            + "1000000000000}}", "[DONE]");
        case 2 -> stream(tok(0, null), tok(1, "length"), "{\"choices\":[],\"usage\":{\"prompt_tokens\":3,"
            + "\"completion_tokens\":2.5}}", "[DONE]");
        case 3 -> {
          String[] events = new String[52];
          for (int i = 0; i < 50; i++) {
            events[i] = tok(i, i == 49 ? "length" : null);
          }
          events[50] = usage(3, 3);
          events[51] = "[DONE]";
          yield stream(events);
        }
        case 4 -> stream(tok(0, null), tok(1, "x".repeat(10_000)), usage(3, 4), "[DONE]");
        default -> stream(tok(0, null), tok(1, null), tok(2, null), tok(3, null), tok(4, "length"), usage(3, 5),
            "[DONE]");
      };
    });
    observer = Observer.create(config(server.port()));
    ServerInfo info = observer.probe();
    List<RequestSpec> requests = new ArrayList<>();
    for (int i = 1; i <= 5; i++) {
      requests.add(RequestSpec.simple(i, i * 5_000L, new int[] {11, 12, 13}, i));
    }
    Path run = dir.resolve("run");
    ObservedRun result;
    try (RunDirectory files = RunDirectory.create(run, "edges", ServerDeployment.resolve(
        ServerDeployment.Declared.none(), info, MODEL), config(server.port()), info, "edges", "edges", 1)) {
      result = observer.run(RequestSource.of(requests), files);
    }
    RunReport report = RunDirectory.finish(run, result);
    Map<Long, Observation> byId = new LinkedHashMap<>();
    report.observations().forEach(o -> byId.put(o.id(), o));
    assertThat(byId.values()).allSatisfy(o -> assertThat(o.status()).isEqualTo(Observation.OK));

    Observation absurd = byId.get(1L);
    assertThat(absurd.promptTokensUsage()).isEqualTo(-1);
    assertThat(absurd.completionTokensUsage()).isEqualTo(-1);
    assertThat(absurd.inputTokens()).as("the prompt sent stands in").isEqualTo(3);
    assertThat(absurd.outputTokens()).as("the chunks received stand in").isEqualTo(1);

    Observation fraction = byId.get(2L);
    assertThat(fraction.promptTokensUsage()).isEqualTo(3);
    assertThat(fraction.completionTokensUsage()).isEqualTo(-1);
    assertThat(fraction.outputTokens()).isEqualTo(2);

    // 50 chunks seen: the trace records 50 output tokens, not the server's 3
    Observation longer = byId.get(3L);
    assertThat(longer.chunks()).isEqualTo(50);
    assertThat(longer.completionTokensUsage()).isEqualTo(-1);
    assertThat(longer.outputTokens()).isEqualTo(50);
    List<String> rows = Files.readAllLines(run.resolve(RunDirectory.REQUESTS));
    assertThat(rows.get((int) longer.seq() + 1).split(",")[5]).as("output_tokens_client of request 3").isEqualTo("50");

    Observation odd = byId.get(4L);
    assertThat(odd.finishReason()).isEqualTo("unknown");
    assertThat(odd.completionTokensUsage()).as("4 tokens in 2 chunks for max_tokens 4: possible").isEqualTo(4);
    assertThat(byId.get(5L).finishReason()).isEqualTo("length");
    assertThat(byId.get(5L).completionTokensUsage()).isEqualTo(5);
    assertThat(Files.readString(run.resolve(RunDirectory.OBSERVATIONS))).doesNotContain("xxxxxxxxxx");

    assertThat(observer.checks().counts()).containsEntry(ServerChecks.Kind.USAGE, 3L)
        .containsEntry(ServerChecks.Kind.LONGER_THAN_ASKED, 1L).containsEntry(ServerChecks.Kind.FINISH_REASON, 1L)
        .doesNotContainKey(ServerChecks.Kind.METRIC_VALUE);
    List<String> warnings = observer.checks().warnings();
    assertThat(warnings).hasSize(3).allSatisfy(w -> assertThat(w).startsWith("warning: ").doesNotContain("\n"));
    assertThat(warnings.get(0)).isEqualTo("warning: 3 answer(s) gave a usage count that cannot be right (the first:"
        + " prompt_tokens -5, negative): recorded as not given (-1); the client's own counts (the prompt sent, the"
        + " text chunks received) stand in");
    assertThat(warnings.get(1)).isEqualTo("warning: 1 answer(s) were longer than the max_tokens asked"
        + " (the first: 50 tokens for max_tokens 3): recorded as seen");
    assertThat(warnings.get(2)).startsWith("warning: 1 answer(s) gave a finish_reason other than stop, length,"
        + " abort, tool_calls, content_filter, function_call, error (the first: 'xxxx").endsWith("...'):"
        + " recorded as 'unknown'").hasSizeLessThan(300);
    JsonNode client = JSON.readTree(run.resolve(RunDirectory.EXPERIMENTS).toFile()).get("experiments").get(0)
        .get("client").get("server_values_not_recorded");
    assertThat(client.get("usage").asLong()).isEqualTo(3);
    assertThat(client.get("longer_than_max_tokens").asLong()).isEqualTo(1);
    assertThat(client.get("unknown_finish_reason").asLong()).isEqualTo(1);
  }

  /** The CLI prints each kind's warning once, after the run, and the run goes on. */
  @Test
  @Timeout(60)
  void theCommandPrintsOneWarningLinePerKind(@TempDir Path dir) throws Exception {
    server = new FakeServer(r -> r.isCompletion()
        ? stream(tok(0, null), tok(1, "weird"), "{\"choices\":[],\"usage\":{\"prompt_tokens\":-5,"
            + "\"completion_tokens\":2}}", "[DONE]")
        : r.info(MODELS));
    Outcome o = observe(dir.resolve("run"), "--no-metrics", "--num-requests", "3");
    assertThat(o.code()).as(o.err()).isZero();
    List<String> warnings = o.err().lines().filter(l -> l.startsWith("warning: ")).toList();
    assertThat(warnings).containsExactly(
        "warning: 3 answer(s) gave a usage count that cannot be right (the first: prompt_tokens -5, negative):"
            + " recorded as not given (-1); the client's own counts (the prompt sent, the text chunks received)"
            + " stand in",
        "warning: 3 answer(s) gave a finish_reason other than stop, length, abort, tool_calls, content_filter,"
            + " function_call, error (the first: 'weird'): recorded as 'unknown'");
    assertThat(o.out()).contains("observed 3 request(s): 3 ok, 0 failed");
  }

  // ------------------------------------------------------------------ 4, 5. the server's description

  @Test
  @Timeout(30)
  void aModelListOfTheWrongShapeIsIgnoredFieldByFieldWithAWarning() {
    server = new FakeServer(r -> r.info("{\"data\":[{\"id\":5},{\"id\":\"m\",\"max_model_len\":-1},"
        + "{\"id\":\"bad\\nname\"},\"just a string\"]}"));
    observer = Observer.create(config(server.port()));
    ServerInfo info = observer.probe();
    String uri = "http://127.0.0.1:" + server.port() + "/v1/models";
    assertThat(info.models()).containsExactly("m");
    assertThat(info.maxModelLen()).isEqualTo(-1);
    assertThat(info.warnings()).containsExactly(
        "warning: GET " + uri + ": max_model_len of 'm' must be a positive integer, got -1: ignored (max_model_len"
            + " is unknown)",
        "warning: GET " + uri + ": 3 entries of 'data' without an 'id' string (of at most 1024 characters, no"
            + " control characters), the first {\"id\":5}: ignored");

    server.close();
    server = new FakeServer(r -> r.info("{\"data\":[{\"id\":\"m\",\"max_model_len\":1000000000000}]}"));
    observer.close();
    observer = Observer.create(config(server.port()));
    info = observer.probe();
    assertThat(info.maxModelLen()).isEqualTo(-1);
    assertThat(info.warnings()).singleElement().asString().contains("max_model_len of 'm' must be a positive integer,"
        + " got 1000000000000");

    server.close();
    server = new FakeServer(r -> r.info("{\"data\":{\"id\":\"m\"}}"));
    observer.close();
    observer = Observer.create(config(server.port()));
    info = observer.probe();
    assertThat(info.models()).isEmpty();
    assertThat(info.warnings()).containsExactly("warning: GET http://127.0.0.1:" + server.port() + "/v1/models:"
        + " 'data' must be a list of models, got {\"id\":\"m\"}: ignored (the served models and max_model_len are"
        + " unknown)");
  }

  /** A version body of 10 MB, one of 300 characters and a number are each recorded as unknown, with a warning. */
  @Test
  @Timeout(60)
  void aVersionThatIsNotAShortStringIsRecordedAsUnknown(@TempDir Path dir) throws Exception {
    for (String body : List.of("{\"version\":\"" + "9".repeat(10_000_000) + "\"}", "{\"version\":\"" + "v".repeat(300)
        + "\"}", "{\"version\":12}")) {
      if (server != null) {
        server.close();
      }
      server = new FakeServer(r -> r.path().equals("/version") ? json(200, body) : r.isCompletion()
          ? stream(tok(0, "length"), usage(3, 1), "[DONE]") : r.info(MODELS));
      Path run = dir.resolve("run-" + body.length());
      Outcome o = observe(run, "--no-metrics", "--num-requests", "1");
      assertThat(o.code()).as(o.err()).isZero();
      String uri = "http://127.0.0.1:" + server.port() + "/version";
      List<String> warnings = o.err().lines().filter(l -> l.startsWith("warning: ")).toList();
      assertThat(warnings).singleElement().asString().startsWith("warning: GET " + uri + ": ")
          .endsWith("the version is recorded as unknown").hasSizeLessThan(300);
      assertThat(Files.size(run.resolve(RunDirectory.RUN))).isLessThan(20_000);
      assertThat(Files.size(run.resolve(RunDirectory.EXPERIMENTS))).isLessThan(20_000);
      JsonNode entry = JSON.readTree(run.resolve(RunDirectory.RUN).toFile());
      assertThat(entry.get("server").has("version")).isFalse();
      assertThat(entry.get("deployment_sources").get("version").asText()).isEqualTo("unknown");
      assertThat(entry.get("server").get("warnings")).hasSize(1);
    }
  }

  /**
   * The probe of a text prompt's tokens takes the server's usage.prompt_tokens only as a count: a
   * negative one is none (a note); 4000 tokens for 80 words is no tokenizer's (refused in one line).
   */
  @Test
  @Timeout(30)
  void theTextProbesTakeOnlyPossibleCounts() {
    for (boolean negative : new boolean[] {true, false}) {
      if (server != null) {
        server.close();
        observer.close();
      }
      server = new FakeServer(r -> {
        if (!r.isCompletion()) {
          return r.info(MODELS);
        }
        int words = r.body().path("prompt").asText().strip().split("\\s+").length;
        int count = negative ? -5 : words < 20 ? 20 : 4000;
        return json(200, "{\"choices\":[{\"index\":0,\"text\":\"x\",\"finish_reason\":\"length\"}],"
            + "\"usage\":{\"prompt_tokens\":" + count + ",\"completion_tokens\":1}}");
      });
      observer = Observer.create(config(server.port()).toBuilder()
          .api(ObserveConfig.Api.COMPLETIONS, ObserveConfig.PromptFormat.TEXT).build());
      if (negative) {
        ServerInfo info = observer.probe();
        assertThat(info.notes()).anySatisfy(n -> assertThat(n).startsWith("the server gives no usage.prompt_tokens"));
        assertThat(info.tokensPerWord()).isEqualTo(1.0);
        assertThat(info.textOverheadTokens()).isZero();
      } else {
        org.assertj.core.api.Assertions.assertThatThrownBy(observer::probe)
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessage("the server counted 20 prompt tokens for 16 words and 4000 for 80: text prompts cannot be sized");
      }
    }
  }

  /** Labels of vllm:cache_config_info are recorded only when short and on one line. */
  @Test
  @Timeout(30)
  void longCacheConfigLabelsAreLeftOutWithAWarning() {
    String metrics = "vllm:num_requests_running{engine=\"0\"} 0\nvllm:cache_config_info{block_size=\"16\","
        + "engine=\"0\",junk=\"" + "j".repeat(300) + "\"} 1\n";
    server = new FakeServer(r -> r.path().equals("/metrics") ? json(200, metrics) : r.info(MODELS));
    URI metricsUri = URI.create("http://127.0.0.1:" + server.port() + "/metrics");
    observer = Observer.create(config(server.port()).toBuilder().metrics(metricsUri, 1_000_000).build());
    ServerInfo info = observer.probe();
    assertThat(info.metrics()).isTrue();
    assertThat(info.cacheConfig()).containsOnlyKeys("block_size", "engine");
    assertThat(info.warnings()).containsExactly("warning: GET " + metricsUri + ": 1 label(s) of"
        + " vllm:cache_config_info left out (at most 64 are recorded, each value at most 200 characters without"
        + " control characters), the first junk");
  }

  /** What vllm:cache_config_info says is recorded only as whole numbers in range and short labels. */
  @Test
  void cacheConfigValuesOutOfRangeAreNotTakenAsTheDeployments() {
    ServerInfo odd = new ServerInfo(List.of(MODEL), 4096, null, Map.of("block_size", "Infinity",
        "num_gpu_blocks", "1e300", "gpu_memory_utilization", "NaN"), true, 0, 1.0, List.of());
    ServerDeployment d = ServerDeployment.resolve(ServerDeployment.Declared.none(), odd, MODEL);
    assertThat(d.blockSize()).isEqualTo(ServerDeployment.DEFAULT_BLOCK_SIZE);
    assertThat(d.kvBlocksGpu()).isEqualTo(-1);
    assertThat(d.gpuMemoryUtilization()).isEqualTo(ServerDeployment.DEFAULT_GPU_MEMORY_UTILIZATION);
    ServerInfo fractional = new ServerInfo(List.of(MODEL), 4096, null, Map.of("block_size", "16.5",
        "num_gpu_blocks", "1000"), true, 0, 1.0, List.of());
    ServerDeployment f = ServerDeployment.resolve(ServerDeployment.Declared.none(), fractional, MODEL);
    assertThat(f.blockSize()).isEqualTo(ServerDeployment.DEFAULT_BLOCK_SIZE);
    assertThat(f.kvBlocksGpu()).isEqualTo(1000);
  }

  // ------------------------------------------------------------------ 6. metrics

  /**
   * A server's /metrics with NaN, +Inf, -Inf and a value past the largest double: metrics.csv has
   * an empty cell for each metric with no finite value, never "NaN" or "Infinity", and one
   * warning line counts them.
   */
  @Test
  @Timeout(60)
  void metricsThatAreNotFiniteAreEmptyCellsAndCounted(@TempDir Path dir) throws Exception {
    AtomicInteger scrapes = new AtomicInteger();
    java.util.function.IntFunction<String> metrics = k -> """
        vllm:num_requests_running{engine="0"} 2
        vllm:num_requests_running{engine="1"} NaN
        vllm:num_requests_waiting{engine="0"} +Inf
        vllm:kv_cache_usage_perc{engine="0"} -Inf
        vllm:prompt_tokens_total{engine="0"} 1e400
        vllm:generation_tokens_total{engine="0"} 7
        vllm:prefix_cache_queries_total{engine="0"} %d
        vllm:prefix_cache_hits_total{engine="0"} %d
        """.formatted(10 * k, 25 * k);
    // each answer takes half a second, so that the run sees several scrapes (one every 50 ms)
    server = new FakeServer(r -> r.path().equals("/metrics") ? json(200, metrics.apply(scrapes.incrementAndGet()))
        : r.isCompletion() ? slowly(500, stream(tok(0, "length"), usage(3, 1), "[DONE]")) : r.info(MODELS));
    Path run = dir.resolve("run");
    Outcome o = observe(run, "--num-requests", "3", "--metrics-interval-s", "0.05");
    assertThat(o.code()).as(o.err()).isZero();
    List<String> rows = Files.readAllLines(run.resolve(RunDirectory.METRICS));
    assertThat(rows.size()).isGreaterThan(1);
    for (String row : rows.subList(1, rows.size())) {
      String[] f = row.split(",", -1);
      assertThat(f).hasSize(10);
      assertThat(row).doesNotContainIgnoringCase("nan").doesNotContainIgnoringCase("inf");
      assertThat(f[1]).as("running: the finite engine only").isEqualTo("2");
      assertThat(f[2]).as("waiting").isEmpty();
      assertThat(f[3]).as("kv_cache_usage").isEmpty();
      assertThat(f[5]).as("prompt_tokens_total").isEmpty();
      assertThat(f[6]).as("generation_tokens_total").isEqualTo("7");
    }
    List<String> warnings = o.err().lines().filter(l -> l.startsWith("warning: ")).toList();
    assertThat(warnings).singleElement().asString().matches("warning: \\d+ metric value\\(s\\) the server's /metrics"
        + " gave were not finite numbers \\(NaN, \\+Inf, -Inf\\) \\(the first: at [0-9.]+ s,"
        + " vllm:num_requests_running NaN\\): left out: a metric with no finite value is an empty cell of"
        + " metrics.csv");
    String experiments = Files.readString(run.resolve(RunDirectory.EXPERIMENTS));
    assertThat(experiments).doesNotContain("NaN").doesNotContain("Infinity");
    JsonNode entry = JSON.readTree(experiments).get("experiments").get(0);
    assertThat(entry.get("server_metrics").get("scrapes").asInt()).isGreaterThan(1);
    assertThat(entry.get("server_metrics").has("prefix_cache_hit_rate")).as("25 hits per 10 queries: no rate").isFalse();
    assertThat(entry.get("client").get("server_values_not_recorded").get("non_finite_metric_values").asLong())
        .isPositive();
  }

  // ------------------------------------------------------------------ helpers

  private static ObserveConfig config(int port) {
    return ObserveConfig.builder(URI.create("http://127.0.0.1:" + port + "/v1"), MODEL)
        .timeoutUs(10_000_000).connectTimeoutUs(2_000_000).metrics(null, 1_000_000).build();
  }

  record Outcome(int code, String out, String err) {}

  private Outcome observe(Path out, String... more) {
    List<String> args = new ArrayList<>(List.of("observe", "--endpoint", "http://127.0.0.1:" + server.port() + "/v1",
        "--served-model", MODEL, "--model", "llama-2-7b", "--out", out.toString(), "--rate", "20",
        "--prompt-tokens", "8", "--prompt-tokens-stdev", "0", "--output-tokens", "5", "--output-tokens-stdev", "0",
        "--progress-interval-s", "0", "--timeout-s", "10"));
    args.addAll(List.of(more));
    StringWriter o = new StringWriter();
    StringWriter e = new StringWriter();
    int code = BlisCli.execute(args.toArray(String[]::new), new PrintWriter(o), new PrintWriter(e));
    return new Outcome(code, o.toString(), e.toString());
  }

  /** {@code answer}, after {@code ms} milliseconds. */
  private static byte[] slowly(long ms, byte[] answer) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return answer;
  }

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] out = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  private static byte[] json(int status, String body) {
    byte[] b = ascii(body);
    return concat(ascii("HTTP/1.1 " + status + " X\r\nContent-Type: application/json\r\nContent-Length: " + b.length
        + "\r\n\r\n"), b);
  }

  /** A streamed answer: each event a chunk of {@code data: EVENT}, then the body's end. */
  private static byte[] stream(String... events) {
    StringBuilder b = new StringBuilder("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
        + "Transfer-Encoding: chunked\r\n\r\n");
    for (String e : events) {
      String data = "data: " + e + "\n\n";
      b.append(Integer.toHexString(data.getBytes(StandardCharsets.UTF_8).length)).append("\r\n").append(data)
          .append("\r\n");
    }
    return ascii(b.append("0\r\n\r\n").toString());
  }

  private static String tok(int i, String finish) {
    return "{\"choices\":[{\"index\":0,\"text\":\"t" + i + "\",\"finish_reason\":"
        + (finish == null ? "null" : "\"" + finish + "\"") + "}]}";
  }

  private static String usage(int prompt, int completion) {
    return "{\"choices\":[],\"usage\":{\"prompt_tokens\":" + prompt + ",\"completion_tokens\":" + completion + "}}";
  }

  /**
   * A raw HTTP/1.1 server on loopback: each request (keep-alive) is answered with the bytes {@code
   * answer} gives, written as they are. Every loop is bounded; {@link #close()} closes every socket.
   */
  private static final class FakeServer implements AutoCloseable {
    private static final int MAX_CONNECTIONS = 100;
    private static final int MAX_REQUESTS_PER_CONNECTION = 100;
    private static final int MAX_LINE_BYTES = 16 * 1024;

    record Request(String method, String path, JsonNode body) {
      boolean isCompletion() {
        return method.equals("POST");
      }

      /** GET /v1/models answered with {@code models}; anything else 404. */
      byte[] info(String models) {
        return path.equals("/v1/models") ? json(200, models) : json(404, "{\"detail\":\"Not Found\"}");
      }
    }

    interface Answer {
      byte[] apply(Request r);
    }

    private final ServerSocket socket;
    private final Answer answer;
    private final java.util.function.Predicate<Request> reset;
    private final ExecutorService threads;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();

    FakeServer(Answer answer) {
      this(answer, r -> false);
    }

    /** As {@link #FakeServer(Answer)}; after an answer to a request {@code reset} takes, waits 0.2 s and resets the connection. */
    FakeServer(Answer answer, java.util.function.Predicate<Request> reset) {
      this.answer = answer;
      this.reset = reset;
      try {
        socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
      } catch (IOException e) {
        throw new IllegalStateException(e);
      }
      AtomicInteger n = new AtomicInteger();
      threads = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "fake-server-" + n.incrementAndGet());
        t.setDaemon(true);
        return t;
      });
      threads.execute(this::accept);
    }

    int port() {
      return socket.getLocalPort();
    }

    private void accept() {
      for (int i = 0; i < MAX_CONNECTIONS; i++) {
        Socket s;
        try {
          s = socket.accept();
        } catch (IOException closed) {
          return;
        }
        open.add(s);
        try {
          threads.execute(() -> serve(s));
        } catch (java.util.concurrent.RejectedExecutionException closed) {
          return;
        }
      }
    }

    private void serve(Socket s) {
      try (s) {
        s.setSoTimeout(15_000);
        InputStream in = new BufferedInputStream(s.getInputStream());
        OutputStream out = s.getOutputStream();
        for (int i = 0; i < MAX_REQUESTS_PER_CONNECTION; i++) {
          String line = readLine(in);
          if (line == null) {
            return;
          }
          String[] parts = line.split(" ");
          Map<String, String> headers = new LinkedHashMap<>();
          for (int h = 0; h < 100; h++) {
            String header = readLine(in);
            if (header == null) {
              return;
            }
            if (header.isEmpty()) {
              break;
            }
            int colon = header.indexOf(':');
            if (colon > 0) {
              headers.put(header.substring(0, colon).strip().toLowerCase(Locale.ROOT), header.substring(colon + 1).strip());
            }
          }
          byte[] body = in.readNBytes(Integer.parseInt(headers.getOrDefault("content-length", "0")));
          JsonNode json = body.length == 0 ? JSON.missingNode() : JSON.readTree(body);
          Request request = new Request(parts[0], parts[1], json);
          out.write(answer.apply(request));
          out.flush();
          if (reset.test(request)) {
            Thread.sleep(200); // the client has read the answer and keeps the connection for the next
            s.setSoLinger(true, 0);
            return; // closed with a reset
          }
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (IOException | RuntimeException gone) {
        // the client closed, or close()
      } finally {
        open.remove(s);
      }
    }

    private static String readLine(InputStream in) throws IOException {
      ByteArrayOutputStream b = new ByteArrayOutputStream();
      for (int i = 0; i < MAX_LINE_BYTES; i++) {
        int c = in.read();
        if (c < 0) {
          return null;
        }
        if (c == '\n') {
          String s = b.toString(StandardCharsets.ISO_8859_1);
          return s.endsWith("\r") ? s.substring(0, s.length() - 1) : s;
        }
        b.write(c);
      }
      throw new IOException("line too long");
    }

    @Override
    public void close() {
      try {
        socket.close();
      } catch (IOException ignored) {
        // closing
      }
      for (Socket s : open) {
        try {
          s.close();
        } catch (IOException ignored) {
          // closing
        }
      }
      threads.shutdownNow();
      try {
        threads.awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
