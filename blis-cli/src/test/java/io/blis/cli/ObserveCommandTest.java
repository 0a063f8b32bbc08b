package io.blis.cli;

import static io.blis.cli.BlisCliTest.blis;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.blis.engine.EngineLimits;
import io.blis.engine.LinearTestModel;
import io.blis.engine.Simulation;
import io.blis.cli.serve.ServeConfig;
import io.blis.cli.serve.SimulatedServer;
import io.blis.engine.validate.ExperimentsFile;
import io.blis.workload.trace.GroundTruthTrace;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ObserveCommandTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  /** A port nothing listens on. */
  private static int closedPort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "--served-model,m,--out,OUT|--endpoint URL is required",
      "--endpoint,http://127.0.0.1:9/v1,--out,OUT|--served-model NAME is needed: ",
      "--endpoint,http://127.0.0.1:9/v1,--served-model,' ',--out,OUT|--served-model must name the model",
      "--endpoint,http://127.0.0.1:9/v1,--served-model,m|--out DIR is required",
      "--endpoint,ftp://host/v1,--served-model,m,--out,OUT|--endpoint must be an http:// or https:// URL",
      "--endpoint,http://,--served-model,m,--out,OUT|--endpoint: not a URL: 'http://'",
      "--endpoint,http://127.0.0.1:9/v1,--served-model,m,--out,OUT,--api,grpc|--api: expected completions or chat, got 'grpc'",
      "--endpoint,http://127.0.0.1:9/v1,--served-model,m,--out,OUT,--api,chat,--prompt-format,token-ids|--api chat takes text prompts",
      "--endpoint,http://127.0.0.1:9/v1,--served-model,m,--out,OUT,--prompt-format,bytes|--prompt-format: expected token-ids or text",
      "--endpoint,http://127.0.0.1:9/v1,--served-model,m,--out,OUT,--max-concurrency,-1|--max-concurrency must be >= 0",
      "--endpoint,http://127.0.0.1:9/v1,--served-model,m,--out,OUT,--timeout-s,0|--timeout-s must be a positive number",
      "--endpoint,http://127.0.0.1:9/v1,--served-model,m,--out,OUT,--metrics-interval-s,0|--metrics-interval-s must be at least 0.05",
      "--endpoint,http://127.0.0.1:9/v1,--served-model,m,--out,OUT,--no-metrics,--metrics-url,http://h/metrics|give --metrics-url or --no-metrics, not both",
      "--endpoint,http://127.0.0.1:9/v1,--served-model,m,--out,OUT,--workload,chatbot,--workload-spec,x.yaml|give at most one workload kind",
      "--endpoint,http://127.0.0.1:9/v1,--served-model,m,--out,OUT,--trace,/no/such/trace.csv|--trace: no such file '/no/such/trace.csv'",
      "--endpoint,http://127.0.0.1:9/v1,--served-model,m,--out,OUT,--model,no-such-model|--model: unknown model 'no-such-model'",
      "--endpoint,http://127.0.0.1:9/v1,--served-model,m,--out,OUT,--gpu,no-such-gpu|--gpu: ",
      "--endpoint,http://127.0.0.1:9/v1,--served-model,m,--out,OUT,--tp,0|--tp must be at least 1",
      "--finish,OUT,--endpoint,http://127.0.0.1:9/v1|--finish DIR rebuilds a run's summary from its files: give it alone",
      "--finish,OUT|run.json: missing (not the folder of an observed run?)"})
  void badFlagsAreOneLineAndExitTwo(String flags, String message, @TempDir Path dir) {
    String out = dir.resolve("out").toString();
    List<String> args = new ArrayList<>(List.of("observe"));
    for (String f : flags.split(",")) {
      args.add(f.equals("OUT") ? out : f.equals("' '") ? " " : f);
    }
    BlisCliTest.Outcome o = blis(args.toArray(String[]::new));
    assertThat(o.code()).as(o.err()).isEqualTo(2);
    assertThat(o.err().strip().lines()).as(o.err()).hasSize(1);
    assertThat(o.err()).contains(message);
    assertThat(Files.exists(dir.resolve("out").resolve("run.json"))).isFalse();
  }

  @Test
  void aTraceThatIsNotABlisTraceIsOneLine(@TempDir Path dir) throws IOException {
    Path csv = Files.writeString(dir.resolve("gt.csv"), String.join(",", GroundTruthTrace.COLUMNS) + "\n");
    BlisCliTest.Outcome o = blis("observe", "--endpoint", "http://127.0.0.1:9/v1", "--served-model", "m",
        "--out", dir.resolve("out").toString(), "--trace", csv.toString());
    assertThat(o.code()).isEqualTo(2);
    assertThat(o.err()).contains("is not a BLIS trace").contains("workload.csv of an earlier run");
  }

  @Test
  void anUnreachableEndpointIsOneLineAndWritesNothing(@TempDir Path dir) throws IOException {
    int port = closedPort();
    BlisCliTest.Outcome o = blis("observe", "--endpoint", "http://127.0.0.1:" + port + "/v1", "--served-model", "m",
        "--out", dir.resolve("out").toString(), "--connect-timeout-s", "2");
    assertThat(o.code()).isEqualTo(2);
    assertThat(o.err().strip().lines()).hasSize(1);
    assertThat(o.err()).startsWith("blis observe: --endpoint: GET http://127.0.0.1:" + port + "/v1/models: cannot connect");
    assertThat(Files.exists(dir.resolve("out"))).isFalse();
  }

  @Test
  void aFolderHoldingARunIsRefusedBeforeAnythingIsSent(@TempDir Path dir) throws IOException {
    Files.writeString(dir.resolve("run.json"), "{}");
    BlisCliTest.Outcome o = blis("observe", "--endpoint", "http://127.0.0.1:9/v1", "--served-model", "m",
        "--out", dir.toString());
    assertThat(o.code()).isEqualTo(2);
    assertThat(o.err()).contains("already holds an observed run (run.json)");
  }

  /** A simulated server slow enough that requests are in flight when the client is stopped. */
  private static SimulatedServer slowServer() {
    return SimulatedServer.start(Simulation.builder().latencyModel(new LinearTestModel(4000, 10, 0, 0, 0, 0))
        .totalKvBlocks(20_000).limits(new EngineLimits(256, 4096, 0, 8192)), ServeConfig.loopback(0, "m"));
  }

  /** A server of many models, asked for another: a few names and a count, never the whole list. */
  @Test
  void aModelTheServerDoesNotServeNamesAFewOfItsModels(@TempDir Path dir) {
    List<String> names = java.util.stream.IntStream.range(0, 40).mapToObj(i -> "model-" + i).toList();
    try (SimulatedServer server = SimulatedServer.start(Simulation.builder()
        .latencyModel(new LinearTestModel(4000, 10, 0, 0, 0, 0)).totalKvBlocks(20_000)
        .limits(new EngineLimits(256, 4096, 0, 8192)), new ServeConfig("127.0.0.1", 0, names, 1))) {
      BlisCliTest.Outcome o = blis("observe", "--endpoint", server.baseUrl(), "--served-model", "other",
          "--model", "llama-2-7b", "--out", dir.resolve("a").toString(), "--num-requests", "1");
      assertThat(o.code()).isEqualTo(2);
      assertThat(o.err().strip()).isEqualTo("blis observe: --served-model: the server at " + server.baseUrl()
          + " serves model-0, model-1, model-2, model-3, model-4 and 35 more, not 'other'");
    }
  }

  /**
   * Without {@code --served-model}, observe takes the one model the server lists (README's serve
   * and observe blocks work together as written); a server listing several is one line naming a few.
   */
  @Test
  void withoutServedModelTheServersOnlyModelIsTaken(@TempDir Path dir) {
    Simulation.Builder deployment = Simulation.builder().latencyModel(new LinearTestModel(4000, 10, 0, 0, 0, 0))
        .totalKvBlocks(20_000).limits(new EngineLimits(256, 4096, 0, 8192));
    try (SimulatedServer one = SimulatedServer.start(deployment, ServeConfig.loopback(0, "llama-2-7b"))) {
      BlisCliTest.Outcome o = blis("observe", "--endpoint", one.baseUrl(), "--out", dir.resolve("a").toString(),
          "--num-requests", "2", "--rate", "20", "--progress-interval-s", "0");
      assertThat(o.code()).as(o.err()).isZero();
      assertThat(o.err()).contains("blis observe: note: --served-model not given: the server serves one model, llama-2-7b");
      assertThat(Files.exists(dir.resolve("a").resolve("run.json"))).isTrue();
    }
    List<String> names = List.of("a", "b", "c", "d", "e", "f", "g");
    try (SimulatedServer several = SimulatedServer.start(deployment, new ServeConfig("127.0.0.1", 0, names, 1))) {
      BlisCliTest.Outcome o = blis("observe", "--endpoint", several.baseUrl(), "--out", dir.resolve("b").toString(),
          "--num-requests", "1");
      assertThat(o.code()).isEqualTo(2);
      assertThat(o.err().strip()).startsWith("blis observe: --served-model NAME is needed: the server at "
          + several.baseUrl() + " serves a, b, c, d, e and 2 more");
      assertThat(o.err().strip().lines()).hasSize(1);
      assertThat(Files.exists(dir.resolve("b"))).isFalse();
    }
  }

  /**
   * A server that is not OpenAI-compatible (HTML everywhere): observe notes that its model list is
   * none, and when every request fails it says so and exits 1, the run kept on disk.
   */
  @Test
  void aServerThatIsNotOpenAiCompatibleIsNamedAndTheRunFails(@TempDir Path dir) throws Exception {
    com.sun.net.httpserver.HttpServer html = com.sun.net.httpserver.HttpServer.create(
        new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
    html.createContext("/", exchange -> {
      byte[] page = "<html><body>a web page</body></html>".getBytes(java.nio.charset.StandardCharsets.UTF_8);
      exchange.getRequestBody().readAllBytes();
      exchange.getResponseHeaders().set("content-type", "text/html");
      exchange.sendResponseHeaders(exchange.getRequestURI().getPath().endsWith("/models") ? 200 : 404, page.length);
      exchange.getResponseBody().write(page);
      exchange.close();
    });
    html.start();
    try {
      String url = "http://127.0.0.1:" + html.getAddress().getPort() + "/v1";
      Path out = dir.resolve("run");
      BlisCliTest.Outcome o = blis("observe", "--endpoint", url, "--served-model", "m", "--model", "llama-2-7b",
          "--out", out.toString(), "--num-requests", "3", "--rate", "50", "--progress-interval-s", "0");
      assertThat(o.code()).as(o.err()).isEqualTo(1);
      assertThat(o.err()).contains("answered HTTP 200 but not an OpenAI model list")
          .contains("got '<html><body>a web page</body></html>'")
          .contains("blis observe: no request succeeded: all 3 sent failed, the first with http_error (HTTP 404);"
              + " is " + url + " an OpenAI-compatible endpoint serving 'm'?");
      assertThat(Files.exists(out.resolve("run.json"))).isTrue();
    } finally {
      html.stop(0);
    }
  }

  /** {@code blis observe} in its own JVM (the test's class path), as a user starts it. */
  private static Process observeProcess(String baseUrl, Path out, Path log) throws IOException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    return new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"), BlisCli.class.getName(),
        "observe", "--endpoint", baseUrl, "--served-model", "m", "--model", "llama-2-7b", "--out", out.toString(),
        "--rate", "20", "--num-requests", "400", "--output-tokens", "120", "--output-tokens-stdev", "80",
        "--prompt-tokens", "100", "--prompt-tokens-stdev", "20", "--progress-interval-s", "0")
        .redirectErrorStream(true).redirectOutput(log.toFile()).start();
  }

  private static long lines(Path file) throws IOException {
    try (var s = Files.lines(file)) {
      return s.filter(l -> !l.isBlank()).count();
    }
  }

  /** Waits until the run's observations file has at least {@code n} lines. */
  private static void awaitObservations(Path out, int n, Process p) throws Exception {
    Path obs = out.resolve("observations.jsonl");
    for (int i = 0; i < 300 && p.isAlive(); i++) {
      if (Files.exists(obs) && lines(obs) >= n) {
        return;
      }
      Thread.sleep(50);
    }
    throw new AssertionError("no " + n + " observations in " + out);
  }

  @Test
  @Timeout(90)
  void stoppingTheClientKeepsEveryRequestAndWritesTheSummary(@TempDir Path dir) throws Exception {
    Path out = dir.resolve("run");
    Path log = dir.resolve("log.txt");
    try (SimulatedServer server = slowServer()) {
      Process p = observeProcess(server.baseUrl(), out, log);
      awaitObservations(out, 20, p);
      p.destroy(); // SIGTERM, as Ctrl-C: the shutdown hook stops the run and the files are finished
      assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    }
    String printed = Files.readString(log, StandardCharsets.UTF_8);
    assertThat(printed).contains("blis observe: stopped:");
    long sent = lines(out.resolve("workload.csv")) - 2; // header lines
    assertThat(sent).isBetween(20L, 399L);
    assertThat(lines(out.resolve("observations.jsonl"))).as("every request sent has its observation").isEqualTo(sent);
    JsonNode entry = JSON.readTree(out.resolve("experiments.json").toFile()).get("experiments").get(0);
    assertThat(entry.get("status").get("complete").asBoolean()).isFalse();
    assertThat(entry.get("status").get("note").asText()).startsWith("stopped before the workload ended");
    assertThat(entry.get("observed").get("overall").get("count_sent").asLong()).isEqualTo(sent);
    assertThat(entry.get("observed").get("overall").get("failures").path("stopped").asLong()).isPositive();
    assertThat(GroundTruthTrace.read(out.resolve("requests.csv"))).hasSize((int) sent);
    assertThat(ExperimentsFile.read(out.resolve("experiments.json"))).hasSize(1);
  }

  @Test
  @Timeout(90)
  void aKilledClientLeavesItsFinishedRequestsAndFinishRebuildsTheSummary(@TempDir Path dir) throws Exception {
    Path out = dir.resolve("run");
    try (SimulatedServer server = slowServer()) {
      Process p = observeProcess(server.baseUrl(), out, dir.resolve("log.txt"));
      awaitObservations(out, 20, p);
      p.destroyForcibly(); // SIGKILL: no hook runs
      assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    }
    assertThat(Files.exists(out.resolve("experiments.json"))).isFalse();
    long observed = lines(out.resolve("observations.jsonl"));
    assertThat(observed).isGreaterThanOrEqualTo(20);
    BlisCliTest.Outcome o = blis("observe", "--finish", out.toString());
    assertThat(o.code()).as(o.err()).isZero();
    assertThat(o.out()).contains("ok, ").contains("experiments.json");
    JsonNode entry = JSON.readTree(out.resolve("experiments.json").toFile()).get("experiments").get(0);
    assertThat(entry.get("status").get("complete").asBoolean()).isFalse();
    assertThat(entry.get("status").get("note").asText()).contains("did not end normally");
    // a line cut short by the kill is left out and counted, never guessed at
    long truncated = entry.get("client").path("truncated_lines_skipped").asLong(0);
    assertThat(entry.get("observed").get("overall").get("count_sent").asLong()).isEqualTo(observed - truncated);
    assertThat(ExperimentsFile.read(out.resolve("experiments.json"))).hasSize(1);
  }

  @Test
  @Timeout(60)
  void aShortRunPrintsProgressAndTheSummaryAndResendsItsOwnTrace(@TempDir Path dir) throws Exception {
    try (SimulatedServer server = slowServer()) {
      BlisCliTest.Outcome o = blis("observe", "--endpoint", server.baseUrl(), "--served-model", "m",
          "--model", "llama-2-7b", "--out", dir.resolve("a").toString(), "--workload", "chatbot", "--rate", "10",
          "--num-requests", "25", "--progress-interval-s", "0.5");
      assertThat(o.code()).as(o.err()).isZero();
      assertThat(o.err()).containsPattern("blis observe: \\d+ s, sent \\d+, in flight \\d+, done \\d+, failed 0, late \\d+");
      assertThat(o.out()).contains("observed 25 request(s): 25 ok, 0 failed")
          .contains("stage    ok  E2E mean").contains("blis validate --experiments");
      // the requests as sent, sent again at their recorded times
      BlisCliTest.Outcome again = blis("observe", "--endpoint", server.baseUrl(), "--served-model", "m",
          "--model", "llama-2-7b", "--out", dir.resolve("b").toString(), "--trace",
          dir.resolve("a").resolve("workload.csv").toString(), "--progress-interval-s", "0");
      assertThat(again.code()).as(again.err()).isZero();
      assertThat(again.out()).contains("observed 25 request(s): 25 ok, 0 failed");
      List<GroundTruthTrace.Row> first = GroundTruthTrace.read(dir.resolve("a").resolve("requests.csv"));
      List<GroundTruthTrace.Row> second = GroundTruthTrace.read(dir.resolve("b").resolve("requests.csv"));
      assertThat(second).extracting(GroundTruthTrace.Row::inputTokens)
          .containsExactlyElementsOf(first.stream().map(GroundTruthTrace.Row::inputTokens).toList());
      // each send within 250 ms of its recorded time (a loaded 2-core machine stalls a thread for
      // tens of ms now and then), and half of them within 15 ms: sending all at once, or on a
      // schedule of its own, fails both (the 25 sends span about 2.5 s)
      double[] off = new double[first.size()];
      for (int i = 0; i < first.size(); i++) {
        off[i] = Math.abs(second.get(i).arrivalMs() - first.get(i).arrivalMs());
        assertThat(off[i]).as("send time of request %d", i).isLessThan(250.0);
      }
      java.util.Arrays.sort(off);
      assertThat(off[off.length / 2]).as("median send-time difference, ms").isLessThan(15.0);
    }
  }
}
