package io.blis.cli;

import static io.blis.cli.BlisCliTest.blis;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ServeCommandTest {

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "--port,70000|--port must be in 0..65535, got 70000",
      "--duration-s,0|--duration-s must be a positive number of seconds",
      "--io-threads,0|--io-threads must be in 1..64",
      "--otel-out,/tmp/x.jsonl|--otel-out is not available with serve",
      "--per-request|--per-request is not available with serve (its memory would grow with every request)",
      "--trace-level,decisions|--trace-level is not available with serve",
      "--horizon-s,5|--horizon-s is not available with serve (a server runs until it is stopped; --duration-s",
      "--horizon,5000|--horizon is not available with serve",
      "--otel-step-sample-rate,0.5|--otel-step-sample-rate is not available with serve",
      "--warm-up-requests,-1|--warm-up-requests must be in 0..1000000, got -1",
      "--model,no-such-model|unknown model 'no-such-model'",
      "--served-model-name,' '|--served-model-name: at least one non-blank name",
      "--max-body-bytes,0|--max-body-bytes must be at least 1, got 0",
      "--max-request-line-bytes,-5|--max-request-line-bytes must be at least 1, got -5",
      "--max-header-bytes,0|--max-header-bytes must be at least 1, got 0",
      "--max-connections,0|--max-connections must be at least 1, got 0",
      "--idle-timeout-s,-1|--idle-timeout-s must be a number of seconds, 0 or more, got -1.0",
      "--request-read-timeout-s,NaN|--request-read-timeout-s must be a number of seconds, 0 or more, got NaN",
      "--shutdown-timeout-s,Infinity|--shutdown-timeout-s must be a number of seconds, 0 or more, got Infinity",
      "--max-body-bytes,lots|--max-body-bytes"})
  void badFlagsAreOneLineAndExitTwo(String flags, String message) {
    // every case also gets a free port and a duration, so that a flag wrongly accepted cannot hang
    java.util.List<String> args = new java.util.ArrayList<>(java.util.List.of("serve"));
    args.addAll(java.util.List.of(flags.split(",")));
    for (String[] safety : new String[][] {{"--port", "0"}, {"--duration-s", "1"}}) {
      if (!args.contains(safety[0])) {
        args.addAll(java.util.List.of(safety));
      }
    }
    BlisCliTest.Outcome o = blis(args.stream().map(a -> a.equals("' '") ? " " : a).toArray(String[]::new));
    assertThat(o.code()).isEqualTo(2);
    assertThat(o.err().strip().lines()).hasSize(1);
    assertThat(o.err()).contains(message);
  }

  /** The flags serve refuses are not offered by its help; they are still answered by why. */
  @Test
  void helpLeavesOutTheFlagsServeRefuses() {
    BlisCliTest.Outcome help = blis("serve", "--help");
    assertThat(help.code()).isZero();
    assertThat(help.out()).contains("--warm-up-requests").contains("--shutdown-timeout-s").contains("--max-num-seqs");
    for (String refused : ServeCommand.UNAVAILABLE.keySet()) {
      assertThat(BlisCliTest.listsOption(help.out(), refused)).as(refused).isFalse();
    }
    assertThat(BlisCliTest.listsOption(help.out(), "--warm-up-requests")).isTrue();
    // run's help still lists them
    assertThat(blis("run", "--help").out()).contains("--per-request").contains("--otel-out").contains("--horizon-s");
  }

  @Test
  void aPortInUseIsOneLine() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      BlisCliTest.Outcome o = blis("serve", "--port", String.valueOf(taken.getLocalPort()), "--duration-s", "1");
      assertThat(o.code()).isEqualTo(2);
      assertThat(o.err()).startsWith("blis serve: --host/--port: cannot listen on 127.0.0.1:" + taken.getLocalPort());
      assertThat(o.err().strip().lines()).hasSize(1);
    }
  }

  @Test
  void emptyServedModelNamesAreRefused() {
    for (String names : new String[] {",,", "a,,b", " "}) {
      BlisCliTest.Outcome o = blis("serve", "--served-model-name", names, "--duration-s", "1");
      assertThat(o.code()).as(names).isEqualTo(2);
      assertThat(o.err()).as(names).contains("--served-model-name: at least one non-blank name is needed (names separated by commas, none empty)");
    }
  }

  @Test
  void anAddressThatIsNoneIsOneLineNamingTheFlag() {
    for (String host : new String[] {"999.1.1.1", "no-such-host.invalid"}) {
      BlisCliTest.Outcome o = blis("serve", "--host", host, "--duration-s", "1");
      assertThat(o.code()).as(host).isEqualTo(2);
      assertThat(o.err().strip()).as(host).isEqualTo("blis serve: --host: '" + host
          + "' is not an address of this machine or a name that resolves to one");
    }
  }

  @Test
  void servesForItsDurationThenPrintsTheRunsResult() throws Exception {
    int port;
    try (ServerSocket free = new ServerSocket(0)) {
      port = free.getLocalPort();
    }
    CompletableFuture<BlisCliTest.Outcome> run = CompletableFuture.supplyAsync(() -> blis("serve", "--port",
        String.valueOf(port), "--duration-s", "4", "--served-model-name", "a,b", "--max-num-seqs", "8",
        "--warm-up-requests", "100"));
    HttpClient http = HttpClient.newHttpClient();
    HttpResponse<String> answer = null;
    for (int attempt = 0; attempt < 60 && answer == null; attempt++) {
      try {
        answer = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/completions"))
            .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"b\",\"prompt\":[1,2,3,4,5],\"max_tokens\":7}")).build(),
            HttpResponse.BodyHandlers.ofString());
      } catch (ConnectException notYet) {
        Thread.sleep(50);
      }
    }
    assertThat(answer).isNotNull();
    assertThat(answer.statusCode()).isEqualTo(200);
    // token ids are checked against the served model's vocabulary (Llama-2-7B: 32,000), as vLLM does
    HttpResponse<String> outside = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
        + "/v1/completions")).POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"b\",\"prompt\":[1,32000]}"))
        .build(), HttpResponse.BodyHandlers.ofString());
    assertThat(outside.statusCode()).isEqualTo(400);
    assertThat(outside.body()).contains("32000");
    BlisCliTest.Outcome o = run.get();
    assertThat(o.code()).isZero();
    assertThat(o.err()).contains("blis serve: warmed up with 100 requests in ")
        .contains("blis serve: http://127.0.0.1:" + port + "/v1 for model a, b (1 instance(s))")
        .contains("delivery lateness");
    JsonNode result = BlisCliTest.JSON.readTree(o.out());
    assertThat(result.at("/overall/completed_requests").asInt()).isEqualTo(1);
    assertThat(result.at("/overall/total_output_tokens").asInt()).isEqualTo(7);
    assertThat(result.at("/overall/total_input_tokens").asInt()).isEqualTo(5);
  }

  /**
   * SIGTERM to a {@code blis serve} in its own JVM takes the drain path: the stream in progress
   * finishes ({@code data: [DONE]}), then the server prints its result and exits 0.
   */
  @Test
  @Timeout(120)
  void sigtermDrainsTheStreamsInProgress(@TempDir Path dir) throws Exception {
    int port;
    try (ServerSocket free = new ServerSocket(0)) {
      port = free.getLocalPort();
    }
    Path log = dir.resolve("log.txt");
    String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process p = new ProcessBuilder(javaBin, "-cp", System.getProperty("java.class.path"), BlisCli.class.getName(),
        "serve", "--port", String.valueOf(port), "--served-model-name", "m", "--shutdown-timeout-s", "60")
        .redirectErrorStream(true).redirectOutput(log.toFile()).start();
    try {
      Socket s = null;
      for (int attempt = 0; attempt < 600 && s == null && p.isAlive(); attempt++) {
        try {
          s = new Socket(InetAddress.getLoopbackAddress(), port);
        } catch (ConnectException notYet) {
          Thread.sleep(50);
        }
      }
      assertThat(s).as("the server listens").isNotNull();
      try (Socket stream = s) {
        stream.setSoTimeout(60_000);
        String body = "{\"model\":\"m\",\"prompt\":[11,12,13,14,15],\"max_tokens\":300,\"stream\":true}";
        stream.getOutputStream().write(("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            + "Content-Length: " + body.length() + "\r\n\r\n" + body).getBytes(StandardCharsets.US_ASCII));
        InputStream in = stream.getInputStream();
        assertThat(in.read()).as("the stream started").isPositive();
        p.destroy(); // SIGTERM
        String rest = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        assertThat(rest).contains("data: [DONE]").endsWith("\r\n0\r\n\r\n");
      }
      assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(p.exitValue()).isIn(0, 143);
      String printed = Files.readString(log);
      assertThat(printed).contains("blis serve: shutting down: waiting up to 60.0 s for 1 answer(s) in progress")
          .doesNotContain("cut off").contains("delivery lateness").contains("\"completed_requests\" : 1");
    } finally {
      p.destroyForcibly();
    }
  }
}
