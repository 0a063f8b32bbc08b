package io.blis.cli;

import static io.blis.cli.BlisCliTest.blis;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ServeCommandTest {

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "--port,70000|--port must be in 0..65535, got 70000",
      "--duration-s,0|--duration-s must be a positive number of seconds",
      "--io-threads,0|--io-threads must be in 1..64",
      "--otel-out,/tmp/x.jsonl|--otel-out is not available with serve",
      "--per-request|--per-request is not available with serve",
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

  @Test
  void aPortInUseIsOneLine() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
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
        String.valueOf(port), "--duration-s", "4", "--served-model-name", "a,b", "--max-num-seqs", "8"));
    HttpClient http = HttpClient.newHttpClient();
    HttpResponse<String> answer = null;
    for (int attempt = 0; attempt < 60 && answer == null; attempt++) {
      try {
        answer = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/completions"))
            .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"b\",\"prompt\":[1,2,3,4,5],\"max_tokens\":7}")).build(),
            HttpResponse.BodyHandlers.ofString());
      } catch (java.net.ConnectException notYet) {
        Thread.sleep(50);
      }
    }
    assertThat(answer).isNotNull();
    assertThat(answer.statusCode()).isEqualTo(200);
    BlisCliTest.Outcome o = run.get();
    assertThat(o.code()).isZero();
    assertThat(o.err()).contains("blis serve: http://127.0.0.1:" + port + "/v1 for model a, b (1 instance(s))")
        .contains("delivery lateness");
    JsonNode result = BlisCliTest.JSON.readTree(o.out());
    assertThat(result.at("/overall/completed_requests").asInt()).isEqualTo(1);
    assertThat(result.at("/overall/total_output_tokens").asInt()).isEqualTo(7);
    assertThat(result.at("/overall/total_input_tokens").asInt()).isEqualTo(5);
  }
}
