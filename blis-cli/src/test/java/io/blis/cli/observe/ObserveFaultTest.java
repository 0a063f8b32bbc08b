package io.blis.cli.observe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.blis.engine.validate.Experiment;
import io.blis.engine.validate.ExperimentsFile;
import io.blis.engine.validate.RunStats;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import io.blis.workload.trace.GroundTruthTrace;
import io.blis.workload.trace.TraceReader;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The observer against a deliberately bad server: every way an OpenAI-compatible server can fail a
 * streaming request (an HTTP error, a cut or malformed stream, an error event, silence, a stream
 * without its end marker or without text) ends that request in exactly one observation of the
 * right class, with its reason, and the run and its files account for every request.
 */
class ObserveFaultTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String MODEL = "bad-model";
  /** The client's timeout of every request: long enough for the slow server, short for the test. */
  private static final long CLIENT_TIMEOUT_US = 2_000_000;
  /** How long the slow server waits before its first byte, milliseconds. */
  private static final long SLOW_FIRST_BYTE_MS = 1_000;

  /** What the bad server does, chosen by the request's {@code max_tokens} (1, 2, ...). */
  private enum Behaviour {
    NORMAL(Observation.OK),
    HTTP_429(Observation.HTTP_ERROR),
    HTTP_500(Observation.HTTP_ERROR),
    CUT_MID_STREAM(Observation.STREAM_CUT),
    GARBAGE_LINE(Observation.MALFORMED),
    NEVER_ANSWERS(Observation.TIMEOUT),
    SLOW_FIRST_BYTE(Observation.OK),
    ERROR_EVENT(Observation.ERROR_EVENT),
    NO_DONE(Observation.STREAM_CUT),
    NO_TEXT(Observation.NO_OUTPUT),
    /** An error event, then the connection drops: the error event is the failure. */
    ERROR_THEN_CLOSE(Observation.ERROR_EVENT),
    /** The whole answer and [DONE], then the connection drops before the body's end: complete. */
    DONE_THEN_CLOSE(Observation.OK),
    /** A reply that is not HTTP at all (another protocol on the port): a failed request, no status. */
    NOT_HTTP(Observation.CONNECTION);

    final String expected;

    Behaviour(String expected) {
      this.expected = expected;
    }

    /** The {@code max_tokens} that asks for this behaviour. */
    int maxTokens() {
      return ordinal() + 1;
    }

    static Behaviour of(int maxTokens) {
      return maxTokens >= 1 && maxTokens <= values().length ? values()[maxTokens - 1] : NORMAL;
    }
  }

  /** Behaviours whose request completes. */
  private static final long OK_COUNT = java.util.Arrays.stream(Behaviour.values())
      .filter(b -> b.expected.equals(Observation.OK)).count();

  private BadServer server;
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

  // ------------------------------------------------------------------ the tests

  @Test
  @Timeout(20)
  void everyRequestEndsInExactlyOneObservationOfTheRightClass() {
    server = new BadServer(MODEL);
    observer = Observer.create(config(server.port()));
    ServerInfo info = observer.probe();
    assertThat(info.models()).containsExactly(MODEL);
    assertThat(info.maxModelLen()).isEqualTo(4096);
    assertThat(info.version()).isNull(); // GET /version answered 404

    List<RequestSpec> requests = workload();
    Map<Long, List<Observation>> byId = new HashMap<>();
    List<Long> sentSeqs = new ArrayList<>();
    long started = System.nanoTime();
    ObservedRun run = observer.run(RequestSource.of(requests), new ObservationListener() {
      @Override
      public void onSent(long seq, RequestSpec asSent, long scheduledUs) {
        sentSeqs.add(seq);
      }

      @Override
      public void onObservation(Observation o) {
        byId.computeIfAbsent(o.id(), k -> new ArrayList<>()).add(o);
      }
    });
    double elapsedS = (System.nanoTime() - started) / 1e9;

    // every request is accounted for, once
    assertThat(run.sent()).isEqualTo(requests.size());
    assertThat(run.ok() + run.failed()).isEqualTo(run.sent());
    assertThat(run.ok()).isEqualTo(OK_COUNT);
    assertThat(run.failed()).isEqualTo(Behaviour.values().length - OK_COUNT);
    assertThat(run.notSent()).isZero();
    assertThat(run.stopped()).isFalse();
    assertThat(sentSeqs).containsExactlyInAnyOrder(LongStream.range(0, Behaviour.values().length).boxed().toArray(Long[]::new));
    assertThat(byId.keySet()).containsExactlyInAnyOrder(LongStream.range(0, Behaviour.values().length).boxed().toArray(Long[]::new));
    assertThat(byId.values()).allSatisfy(list -> assertThat(list).hasSize(1));
    assertThat(byId.values().stream().map(l -> l.get(0).seq()).distinct().count()).isEqualTo(requests.size());
    // the run ends when the silent request times out, not much later
    assertThat(elapsedS).isLessThan(10.0);
    assertThat(run.durationUs()).isGreaterThanOrEqualTo(CLIENT_TIMEOUT_US);

    for (Behaviour b : Behaviour.values()) {
      Observation o = byId.get((long) b.ordinal()).get(0);
      assertThat(o.status()).as("%s: %s", b, o).isEqualTo(b.expected);
      assertThat(o.maxTokens()).isEqualTo(b.maxTokens());
      assertThat(o.sendUs()).as("%s sent", b).isGreaterThanOrEqualTo(0);
      assertThat(o.endUs()).as("%s ended after it was sent", b).isGreaterThanOrEqualTo(o.sendUs());
      if (o.ok()) {
        assertThat(o.reason()).isEmpty();
      } else {
        assertThat(o.reason()).as("%s reason", b).isNotBlank();
      }
    }

    Observation normal = observation(byId, Behaviour.NORMAL);
    assertThat(normal.chunks()).isEqualTo(3);
    assertThat(normal.httpStatus()).isEqualTo(200);
    assertThat(normal.completionTokensUsage()).isEqualTo(3);
    assertThat(normal.promptTokensUsage()).isEqualTo(4);
    assertThat(normal.ttftUs()).isPositive();

    Observation tooMany = observation(byId, Behaviour.HTTP_429);
    assertThat(tooMany.httpStatus()).isEqualTo(429);
    assertThat(tooMany.reason()).contains("429");
    assertThat(tooMany.chunks()).isZero();

    Observation serverError = observation(byId, Behaviour.HTTP_500);
    assertThat(serverError.httpStatus()).isEqualTo(500);
    assertThat(serverError.reason()).contains("500");

    Observation cut = observation(byId, Behaviour.CUT_MID_STREAM);
    assertThat(cut.httpStatus()).isEqualTo(200);
    assertThat(cut.chunks()).isEqualTo(2);

    Observation garbage = observation(byId, Behaviour.GARBAGE_LINE);
    assertThat(garbage.reason()).contains("xyz not sse");

    Observation silent = observation(byId, Behaviour.NEVER_ANSWERS);
    assertThat(silent.httpStatus()).isZero();
    assertThat(silent.chunks()).isZero();
    assertThat(silent.endUs() - silent.sendUs()).isGreaterThanOrEqualTo(CLIENT_TIMEOUT_US - 50_000);
    assertThat(silent.ttftUs()).isEqualTo(-1);

    Observation slow = observation(byId, Behaviour.SLOW_FIRST_BYTE);
    assertThat(slow.chunks()).isEqualTo(3);
    assertThat(slow.ttftUs()).isGreaterThanOrEqualTo(SLOW_FIRST_BYTE_MS * 1000);

    Observation errorEvent = observation(byId, Behaviour.ERROR_EVENT);
    assertThat(errorEvent.reason()).contains("boom");
    assertThat(errorEvent.chunks()).isEqualTo(1);

    Observation noDone = observation(byId, Behaviour.NO_DONE);
    assertThat(noDone.httpStatus()).isEqualTo(200);
    assertThat(noDone.chunks()).isEqualTo(3);
    assertThat(noDone.reason()).contains("[DONE]");

    Observation errorThenClose = observation(byId, Behaviour.ERROR_THEN_CLOSE);
    assertThat(errorThenClose.reason()).contains("boom").contains("then the connection broke");

    Observation doneThenClose = observation(byId, Behaviour.DONE_THEN_CLOSE);
    assertThat(doneThenClose.chunks()).isEqualTo(3);
    assertThat(doneThenClose.completionTokensUsage()).isEqualTo(3);

    Observation notHttp = observation(byId, Behaviour.NOT_HTTP);
    assertThat(notHttp.httpStatus()).as("no status of Netty's stand-in 999").isZero();
    assertThat(notHttp.reason()).contains("the server's reply is not HTTP");

    Observation noText = observation(byId, Behaviour.NO_TEXT);
    assertThat(noText.httpStatus()).isEqualTo(200);
    assertThat(noText.chunks()).isZero();

    // what the server received: one streaming completion per request, as documented
    List<JsonNode> bodies = server.completionBodies();
    assertThat(bodies).hasSize(requests.size());
    assertThat(bodies).extracting(n -> n.path("max_tokens").asInt())
        .containsExactlyInAnyOrder(IntStream.rangeClosed(1, Behaviour.values().length).boxed().toArray(Integer[]::new));
    assertThat(bodies).allSatisfy(n -> {
      assertThat(n.path("model").asText()).isEqualTo(MODEL);
      assertThat(n.path("stream").asBoolean()).isTrue();
      assertThat(n.path("ignore_eos").asBoolean()).isTrue();
      assertThat(n.path("stream_options").path("include_usage").asBoolean()).isTrue();
      assertThat(n.path("prompt").isArray()).isTrue();
      assertThat(n.path("prompt")).hasSize(4);
    });
  }

  @Test
  @Timeout(20)
  void theRunsFilesAreValidAndAgreeWithTheRun(@TempDir Path tmp) throws IOException {
    server = new BadServer(MODEL);
    ObserveConfig config = config(server.port());
    observer = Observer.create(config);
    ServerInfo info = observer.probe();
    ServerDeployment deployment = ServerDeployment.resolve(
        new ServerDeployment.Declared("llama-2-7b", null, null, null, null, null, null, null, null, null, null),
        info, MODEL);
    Path dir = tmp.resolve("run");
    List<RequestSpec> requests = workload();
    ObservedRun run;
    try (RunDirectory files = RunDirectory.create(dir, "fault-run", deployment, config, info, "faults",
        "one request of each fault of a bad server", 7L)) {
      run = observer.run(RequestSource.of(requests), files);
    }
    RunReport report = RunDirectory.finish(dir, run);
    assertThat(run.sent()).isEqualTo(requests.size());
    assertThat(report.observations()).hasSize(requests.size());

    // observations.jsonl: one line per request
    List<String> lines = Files.readAllLines(dir.resolve(RunDirectory.OBSERVATIONS)).stream()
        .filter(l -> !l.isBlank()).toList();
    assertThat(lines).hasSize(requests.size());
    Map<Long, String> statusById = new HashMap<>();
    Map<Long, Long> idBySeq = new HashMap<>();
    for (String line : lines) {
      JsonNode n = JSON.readTree(line);
      assertThat(statusById.put(n.get("id").asLong(), n.get("status").asText())).isNull();
      idBySeq.put(n.get("seq").asLong(), n.get("id").asLong());
    }
    for (Behaviour b : Behaviour.values()) {
      assertThat(statusById.get((long) b.ordinal())).as("%s", b).isEqualTo(b.expected);
    }
    assertThat(idBySeq.keySet()).containsExactlyInAnyOrder(LongStream.range(0, Behaviour.values().length).boxed().toArray(Long[]::new));

    // experiments.json: the observed counts are the run's
    List<Experiment> experiments = ExperimentsFile.read(dir.resolve(RunDirectory.EXPERIMENTS));
    assertThat(experiments).hasSize(1);
    Experiment e = experiments.get(0);
    assertThat(e.id()).isEqualTo("fault-run");
    assertThat(e.workloadTrace()).contains(dir.resolve(RunDirectory.WORKLOAD).normalize());
    assertThat(e.trace()).contains(dir.resolve(RunDirectory.REQUESTS).normalize());
    RunStats overall = e.observed().overall();
    assertThat(overall.countSuccess()).isEqualTo(run.ok()).isEqualTo(OK_COUNT);
    assertThat(overall.countFailed()).isEqualTo(run.failed()).isEqualTo(Behaviour.values().length - OK_COUNT);
    JsonNode entry = JSON.readTree(dir.resolve(RunDirectory.EXPERIMENTS).toFile()).get("experiments").get(0);
    JsonNode failures = entry.get("observed").get("overall").get("failures");
    assertThat(failures.path(Observation.HTTP_ERROR).asInt()).isEqualTo(2);
    assertThat(failures.path(Observation.STREAM_CUT).asInt()).isEqualTo(2);
    assertThat(failures.path(Observation.TIMEOUT).asInt()).isEqualTo(1);
    assertThat(failures.path(Observation.MALFORMED).asInt()).isEqualTo(1);
    assertThat(failures.path(Observation.ERROR_EVENT).asInt()).isEqualTo(2);
    assertThat(failures.path(Observation.NO_OUTPUT).asInt()).isEqualTo(1);
    assertThat(entry.get("status").get("complete").asBoolean()).isTrue();

    // requests.csv: one row per request, in send order
    List<GroundTruthTrace.Row> rows = GroundTruthTrace.read(dir.resolve(RunDirectory.REQUESTS));
    assertThat(rows).hasSize(requests.size());
    assertThat(rows).extracting(GroundTruthTrace.Row::req).containsExactly(LongStream.range(0, Behaviour.values().length).boxed().toArray(Long[]::new));
    for (GroundTruthTrace.Row row : rows) {
      Behaviour b = Behaviour.values()[(int) (long) idBySeq.get(row.req())];
      assertThat(row.ok()).as("row %d (%s)", row.req(), b).isEqualTo(b.expected.equals(Observation.OK));
    }

    // workload.csv: the requests as sent, ids in send order
    List<RequestSpec> sent = new ArrayList<>();
    try (RequestSource trace = TraceReader.open(dir.resolve(RunDirectory.WORKLOAD))) {
      RequestSpec r;
      for (int guard = 0; guard < 1000 && (r = trace.next()) != null; guard++) {
        sent.add(r);
      }
    }
    assertThat(sent).hasSize(requests.size());
    assertThat(sent).extracting(RequestSpec::id).containsExactly(LongStream.range(0, Behaviour.values().length).boxed().toArray(Long[]::new));
    for (RequestSpec r : sent) {
      RequestSpec original = requests.get((int) (long) idBySeq.get(r.id()));
      assertThat(r.outputTokens()).isEqualTo(original.outputTokens());
      assertThat(r.inputTokens()).isEqualTo(original.inputTokens());
      assertThat(r.timeoutUs()).isEqualTo(CLIENT_TIMEOUT_US);
    }
  }

  @Test
  @Timeout(20)
  void aServerThatRefusesConnectionsFailsTheProbe() throws IOException {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    observer = Observer.create(config(port));
    assertThatThrownBy(observer::probe)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("http://127.0.0.1:" + port + "/v1/models")
        .hasMessageContaining("cannot connect");
  }

  @Test
  @Timeout(20)
  void aServerOfAnotherModelFailsTheProbe() {
    server = new BadServer("some-other-model");
    observer = Observer.create(config(server.port()));
    assertThatThrownBy(observer::probe)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("some-other-model")
        .hasMessageContaining(MODEL);
  }

  // ------------------------------------------------------------------ helpers

  private static ObserveConfig config(int port) {
    return ObserveConfig.builder(URI.create("http://127.0.0.1:" + port + "/v1"), MODEL)
        .timeoutUs(CLIENT_TIMEOUT_US)
        .connectTimeoutUs(2_000_000)
        .metrics(null, 1_000_000)
        .build();
  }

  /** One request of each behaviour: id i asks for behaviour i (max_tokens i + 1), 5 ms apart. */
  private static List<RequestSpec> workload() {
    List<RequestSpec> out = new ArrayList<>();
    for (Behaviour b : Behaviour.values()) {
      int i = b.ordinal();
      out.add(RequestSpec.simple(i, i * 5_000L, new int[] {11, 12, 13, 100 + i}, b.maxTokens()));
    }
    return out;
  }

  private static Observation observation(Map<Long, List<Observation>> byId, Behaviour b) {
    return byId.get((long) b.ordinal()).get(0);
  }

  // ------------------------------------------------------------------ the bad server

  /**
   * A raw HTTP/1.1 server on loopback that misbehaves on purpose. Every connection gets a thread
   * that reads requests one after the other (keep-alive) and answers each as its {@code max_tokens}
   * asks. Every loop is bounded; {@link #close()} releases the silent answers and closes every
   * socket.
   */
  private static final class BadServer implements AutoCloseable {
    private static final int MAX_CONNECTIONS = 200;
    private static final int MAX_REQUESTS_PER_CONNECTION = 100;
    private static final int MAX_HEADER_LINES = 100;
    private static final int MAX_LINE_BYTES = 16 * 1024;
    private static final int MAX_BODY_BYTES = 1 << 20;
    private static final int READ_TIMEOUT_MS = 15_000;

    private final String servedModel;
    private final ServerSocket socket;
    private final ExecutorService threads;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private final CountDownLatch release = new CountDownLatch(1);
    private final List<JsonNode> completions = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    BadServer(String servedModel) {
      this.servedModel = servedModel;
      try {
        socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
      } catch (IOException e) {
        throw new IllegalStateException("cannot open the bad server's socket", e);
      }
      AtomicInteger n = new AtomicInteger();
      threads = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "bad-server-" + n.incrementAndGet());
        t.setDaemon(true);
        return t;
      });
      threads.execute(this::accept);
    }

    int port() {
      return socket.getLocalPort();
    }

    /** The JSON bodies of every POST to /v1/completions, in arrival order. */
    List<JsonNode> completionBodies() {
      return List.copyOf(completions);
    }

    private void accept() {
      for (int i = 0; i < MAX_CONNECTIONS && !closed; i++) {
        Socket s;
        try {
          s = socket.accept();
        } catch (IOException e) {
          return; // closed
        }
        open.add(s);
        try {
          threads.execute(() -> serve(s));
        } catch (java.util.concurrent.RejectedExecutionException e) {
          closeQuietly(s);
          return;
        }
      }
    }

    /** Answers the requests of one connection until it closes or an answer closes it. */
    private void serve(Socket s) {
      try (s) {
        s.setSoTimeout(READ_TIMEOUT_MS);
        s.setTcpNoDelay(true);
        InputStream in = new BufferedInputStream(s.getInputStream());
        OutputStream out = s.getOutputStream();
        for (int i = 0; i < MAX_REQUESTS_PER_CONNECTION && !closed; i++) {
          Request r = readRequest(in);
          if (r == null || !answer(r, s, out)) {
            return;
          }
        }
      } catch (IOException e) {
        // the client went away, or close(): nothing to do
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } finally {
        open.remove(s);
      }
    }

    private record Request(String method, String path, Map<String, String> headers, byte[] body) {}

    /** The next request on the connection, or null at its end. */
    private static Request readRequest(InputStream in) throws IOException {
      String requestLine = readLine(in);
      if (requestLine == null) {
        return null;
      }
      String[] parts = requestLine.split(" ");
      if (parts.length < 3) {
        throw new IOException("bad request line: " + requestLine);
      }
      Map<String, String> headers = new LinkedHashMap<>();
      for (int i = 0; ; i++) {
        if (i >= MAX_HEADER_LINES) {
          throw new IOException("too many header lines");
        }
        String line = readLine(in);
        if (line == null) {
          return null;
        }
        if (line.isEmpty()) {
          break;
        }
        int colon = line.indexOf(':');
        if (colon > 0) {
          headers.put(line.substring(0, colon).strip().toLowerCase(Locale.ROOT), line.substring(colon + 1).strip());
        }
      }
      int length = Integer.parseInt(headers.getOrDefault("content-length", "0"));
      if (length < 0 || length > MAX_BODY_BYTES) {
        throw new IOException("bad content-length " + length);
      }
      byte[] body = in.readNBytes(length);
      if (body.length < length) {
        return null;
      }
      return new Request(parts[0], parts[1], headers, body);
    }

    /** One line without its CRLF, null at the end of the stream. */
    private static String readLine(InputStream in) throws IOException {
      ByteArrayOutputStream b = new ByteArrayOutputStream(128);
      for (int i = 0; i < MAX_LINE_BYTES; i++) {
        int c = in.read();
        if (c < 0) {
          return null;
        }
        if (c == '\n') {
          byte[] line = b.toByteArray();
          int len = line.length > 0 && line[line.length - 1] == '\r' ? line.length - 1 : line.length;
          return new String(line, 0, len, StandardCharsets.ISO_8859_1);
        }
        b.write(c);
      }
      throw new IOException("line too long");
    }

    /** Answers {@code r}; returns whether the connection stays open for the next request. */
    private boolean answer(Request r, Socket s, OutputStream out) throws IOException, InterruptedException {
      if (r.method().equals("GET")) {
        if (r.path().equals("/v1/models")) {
          String body = "{\"object\":\"list\",\"data\":[{\"id\":\"" + servedModel
              + "\",\"object\":\"model\",\"max_model_len\":4096}]}";
          whole(out, 200, "OK", "application/json", body, false);
        } else {
          whole(out, 404, "Not Found", "application/json", "{\"detail\":\"Not Found\"}", false);
        }
        return true;
      }
      if (!r.method().equals("POST") || !r.path().equals("/v1/completions")) {
        whole(out, 404, "Not Found", "application/json", "{\"detail\":\"Not Found\"}", false);
        return true;
      }
      JsonNode request = JSON.readTree(r.body());
      completions.add(request);
      int prompt = request.path("prompt").size();
      switch (Behaviour.of(request.path("max_tokens").asInt())) {
        case NORMAL -> {
          wholeStream(out, prompt);
          return true;
        }
        case HTTP_429 -> {
          whole(out, 429, "Too Many Requests", "application/json",
              "{\"object\":\"error\",\"message\":\"rate limited\",\"type\":\"TooManyRequests\",\"code\":429}", false);
          return true;
        }
        case HTTP_500 -> {
          // no length: the body ends when the connection closes
          write(out, "HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n"
              + "Internal Server Error\n");
          return false;
        }
        case CUT_MID_STREAM -> {
          streamHead(out);
          tokens(out, 2);
          return false; // closed with the chunked body unfinished
        }
        case GARBAGE_LINE -> {
          streamHead(out);
          tokens(out, 1);
          chunk(out, "xyz not sse\n\n");
          tokens(out, 2);
          event(out, "[DONE]");
          endChunks(out);
          return true;
        }
        case NEVER_ANSWERS -> {
          // silent until the test ends (close() releases it), bounded anyway
          release.await(READ_TIMEOUT_MS, TimeUnit.MILLISECONDS);
          return false;
        }
        case SLOW_FIRST_BYTE -> {
          Thread.sleep(SLOW_FIRST_BYTE_MS);
          wholeStream(out, prompt);
          return true;
        }
        case ERROR_EVENT -> {
          streamHead(out);
          tokens(out, 1);
          event(out, "{\"error\":{\"message\":\"boom\",\"code\":500}}");
          event(out, "[DONE]");
          endChunks(out);
          return true;
        }
        case NO_DONE -> {
          streamHead(out);
          tokens(out, 3);
          event(out, usage(prompt, 3));
          endChunks(out); // a clean end of the body, without [DONE]
          return true;
        }
        case NO_TEXT -> {
          streamHead(out);
          event(out, usage(prompt, 0));
          event(out, "[DONE]");
          endChunks(out);
          return true;
        }
        case ERROR_THEN_CLOSE -> {
          streamHead(out);
          tokens(out, 1);
          event(out, "{\"error\":{\"message\":\"boom\",\"code\":500}}");
          return false; // closed without the body's end
        }
        case DONE_THEN_CLOSE -> {
          streamHead(out);
          tokens(out, 3);
          event(out, usage(prompt, 3));
          event(out, "[DONE]");
          return false; // closed without the body's end
        }
        case NOT_HTTP -> {
          write(out, "SSH-2.0-OpenSSH_9.6\r\n");
          return false;
        }
        default -> throw new IllegalStateException();
      }
    }

    /** A proper answer: 3 tokens, usage, [DONE], the body's end. */
    private static void wholeStream(OutputStream out, int prompt) throws IOException, InterruptedException {
      streamHead(out);
      tokens(out, 3);
      event(out, usage(prompt, 3));
      event(out, "[DONE]");
      endChunks(out);
    }

    private static String usage(int prompt, int completion) {
      return "{\"choices\":[],\"usage\":{\"prompt_tokens\":" + prompt + ",\"completion_tokens\":" + completion
          + ",\"total_tokens\":" + (prompt + completion) + "}}";
    }

    private static void whole(OutputStream out, int status, String phrase, String type, String body,
        boolean close) throws IOException {
      byte[] b = body.getBytes(StandardCharsets.UTF_8);
      write(out, "HTTP/1.1 " + status + " " + phrase + "\r\nContent-Type: " + type + "\r\nContent-Length: "
          + b.length + "\r\n" + (close ? "Connection: close\r\n" : "") + "\r\n" + body);
    }

    private static void streamHead(OutputStream out) throws IOException {
      write(out, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\n"
          + "Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n");
    }

    private static void tokens(OutputStream out, int n) throws IOException, InterruptedException {
      for (int i = 0; i < n; i++) {
        event(out, "{\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"choices\":[{\"text\":\"tok" + i
            + "\",\"index\":0,\"finish_reason\":null}]}");
        Thread.sleep(5);
      }
    }

    private static void event(OutputStream out, String data) throws IOException {
      chunk(out, "data: " + data + "\n\n");
    }

    private static void chunk(OutputStream out, String data) throws IOException {
      byte[] b = data.getBytes(StandardCharsets.UTF_8);
      out.write((Integer.toHexString(b.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
      out.write(b);
      out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
    }

    private static void endChunks(OutputStream out) throws IOException {
      write(out, "0\r\n\r\n");
    }

    private static void write(OutputStream out, String s) throws IOException {
      out.write(s.getBytes(StandardCharsets.UTF_8));
      out.flush();
    }

    private static void closeQuietly(Socket s) {
      try {
        s.close();
      } catch (IOException ignored) {
        // closing
      }
    }

    @Override
    public void close() {
      closed = true;
      release.countDown();
      try {
        socket.close();
      } catch (IOException ignored) {
        // closing
      }
      for (Socket s : open) {
        closeQuietly(s);
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
