package io.blis.cli.serve;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.blis.engine.EngineLimits;
import io.blis.engine.LinearTestModel;
import io.blis.engine.Simulation;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code blis serve}'s limits and its graceful shutdown, over plain sockets on the loopback
 * address: each limit answers its status code with the server's JSON error and closes; malformed
 * HTTP is 400; a drain lets a stream finish and refuses what is new. Outcomes, not durations, are
 * asserted (the machine is shared): every wait is a few seconds at most and bounded.
 */
class ServeLimitsTest {

  private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

  /** 4 ms per step plus 10 us per token. */
  private static Simulation.Builder deployment() {
    return Simulation.builder().latencyModel(new LinearTestModel(4000, 10, 0, 1000, 0, 0))
        .totalKvBlocks(2000).limits(new EngineLimits(64, 2048, 0, 1024));
  }

  private SimulatedServer server;

  private SimulatedServer start(UnaryOperator<ServeConfig.Limits> limits) {
    server = SimulatedServer.start(deployment(),
        ServeConfig.loopback(0, "m").withLimits(limits.apply(ServeConfig.Limits.defaults())));
    return server;
  }

  @AfterEach
  void stop() {
    if (server != null) {
      server.stop();
    }
  }

  /** What came back on a connection: the bytes until the server closed (or 8 s passed). */
  record Answer(String text, boolean closed) {
    int status() {
      assertThat(text).as("an answer").startsWith("HTTP/1.1 ");
      return Integer.parseInt(text.substring(9, 12));
    }

    String body() {
      return text.substring(text.indexOf("\r\n\r\n") + 4);
    }

    /** The answer is the server's one-line JSON error with {@code status}, and the connection closed. */
    JsonNode assertError(int status) throws IOException {
      assertThat(status()).as(text).isEqualTo(status);
      assertThat(text.toLowerCase(java.util.Locale.ROOT)).contains("connection: close");
      assertThat(body().strip().lines()).hasSize(1);
      JsonNode error = OpenAiProtocol.JSON.readTree(body()).get("error");
      assertThat(error.get("code").asInt()).isEqualTo(status);
      assertThat(closed).as("closed after " + status).isTrue();
      return error;
    }
  }

  private Socket connect() throws IOException {
    Socket s = new Socket(LOOPBACK, server.port());
    s.setSoTimeout(8000);
    return s;
  }

  /** Reads until the server closes, a reset, or 8 s without a byte. */
  private static Answer readToEnd(Socket s) throws IOException {
    ByteArrayOutputStream got = new ByteArrayOutputStream();
    InputStream in = s.getInputStream();
    byte[] buf = new byte[8192];
    boolean closed;
    try {
      for (int n = in.read(buf); ; n = in.read(buf)) {
        if (n < 0) {
          closed = true;
          break;
        }
        got.write(buf, 0, n);
      }
    } catch (SocketTimeoutException stillOpen) {
      closed = false;
    } catch (SocketException reset) {
      closed = true;
    }
    return new Answer(got.toString(StandardCharsets.ISO_8859_1), closed);
  }

  private Answer exchange(String request) throws IOException {
    try (Socket s = connect()) {
      s.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
      s.getOutputStream().flush();
      return readToEnd(s);
    }
  }

  /** Reads one answer with a content-length from a keep-alive connection. */
  private static String readOneAnswer(Socket s) throws IOException {
    InputStream in = s.getInputStream();
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    while (!head.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
      int b = in.read();
      if (b < 0) {
        throw new IOException("closed after " + head.toString(StandardCharsets.ISO_8859_1));
      }
      head.write(b);
    }
    String h = head.toString(StandardCharsets.ISO_8859_1);
    int length = 0;
    for (String line : h.split("\r\n")) {
      if (line.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
        length = Integer.parseInt(line.substring(15).strip());
      }
    }
    return h + new String(in.readNBytes(length), StandardCharsets.UTF_8);
  }

  private static String completion(int maxTokens, boolean stream) {
    String body = "{\"model\":\"m\",\"prompt\":[11,12,13,14,15],\"max_tokens\":" + maxTokens + ",\"stream\":" + stream + "}";
    return "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
        + body.length() + "\r\n\r\n" + body;
  }

  // ------------------------------------------------------------------ sizes

  @Test
  void aBodyDeclaredOverTheLimitIs413() throws Exception {
    start(l -> l.withMaxBodyBytes(1024));
    JsonNode error = exchange("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        + "Content-Length: 5000\r\n\r\n").assertError(413);
    assertThat(error.get("message").asText()).contains("1024 bytes (--max-body-bytes)");
    // within the limit, the same server answers
    assertThat(exchange(completion(3, false).replace("Host: x", "Host: x\r\nConnection: close")).status()).isEqualTo(200);
  }

  @Test
  void aChunkedBodyOverTheLimitIs413() throws Exception {
    start(l -> l.withMaxBodyBytes(1024));
    String chunk = "a".repeat(800);
    String chunkText = Integer.toHexString(chunk.length()) + "\r\n" + chunk + "\r\n";
    exchange("POST /v1/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + chunkText + chunkText
        + "0\r\n\r\n").assertError(413);
  }

  @Test
  void aRequestLineOverTheLimitIs414() throws Exception {
    start(l -> l.withMaxRequestLineBytes(256));
    JsonNode error = exchange("GET /health?x=" + "a".repeat(1000) + " HTTP/1.1\r\nHost: x\r\n\r\n").assertError(414);
    assertThat(error.get("message").asText()).contains("--max-request-line-bytes");
    assertThat(exchange("GET /health?x=" + "a".repeat(100) + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .status()).isEqualTo(200);
  }

  @Test
  void headersOverTheLimitAre431() throws Exception {
    start(l -> l.withMaxHeaderBytes(512));
    JsonNode error = exchange("GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + "b".repeat(2000) + "\r\n\r\n")
        .assertError(431);
    assertThat(error.get("message").asText()).contains("--max-header-bytes");
    // many small headers add up
    exchange("GET /health HTTP/1.1\r\nHost: x\r\n" + "X-A: 0123456789\r\n".repeat(60) + "\r\n").assertError(431);
  }

  // ------------------------------------------------------------------ malformed

  @ParameterizedTest
  @ValueSource(strings = {
      "\u0000\u0001\u0002\u00ff\u00fe garbage \u0007\r\n\r\n",
      "hello\r\n\r\n",
      "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", // HTTP/2's preface
      "GET / HTTP/1.1 extra\r\nHost: x\r\n\r\n",
      "GET /health\r\nHost: x\r\n\r\n",
      "GET /health HTTP/9.9\r\nHost: x\r\n\r\n",
      "GET /health HTTP/2.0\r\nHost: x\r\n\r\n",
      "GET /health HTTX/1.1\r\nHost: x\r\n\r\n",
      "GET /health HTTP/1.1\r\nHost: x\r\nthis line has no colon\r\n\r\n",
      "GET health HTTP/1.1\r\nHost: x\r\n\r\n",
      "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
      "POST /v1/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"})
  void malformedHttpIs400AndClosed(String request) throws Exception {
    start(l -> l);
    JsonNode error = exchange(request).assertError(400);
    assertThat(error.get("message").asText()).startsWith("malformed HTTP request");
  }

  // ------------------------------------------------------------------ time

  @Test
  void aBodyShorterThanItsContentLengthIs408() throws Exception {
    start(l -> l.withRequestReadTimeout(Duration.ofSeconds(1)));
    JsonNode error = exchange("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"model\":")
        .assertError(408);
    assertThat(error.get("message").asText()).contains("1 s (--request-read-timeout-s)");
  }

  @Test
  void trickledHeadersAre408() throws Exception {
    start(l -> l.withRequestReadTimeout(Duration.ofSeconds(1)));
    try (Socket s = connect()) {
      OutputStream out = s.getOutputStream();
      out.write("GET /health HTTP/1.1\r\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      CompletableFuture<Void> trickle = CompletableFuture.runAsync(() -> {
        try {
          for (int i = 0; i < 40; i++) { // at most 12 s, a header line every 300 ms, never the end
            Thread.sleep(300);
            out.write(("X-Slow-" + i + ": 1\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
          }
        } catch (IOException | InterruptedException closedByTheServer) {
          // expected
        }
      });
      readToEnd(s).assertError(408);
      trickle.get(15, TimeUnit.SECONDS);
    }
  }

  @Test
  void anIdleKeepAliveConnectionIsClosed() throws Exception {
    start(l -> l.withIdleTimeout(Duration.ofSeconds(1)));
    try (Socket s = connect()) {
      s.getOutputStream().write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      assertThat(readOneAnswer(s)).startsWith("HTTP/1.1 200");
      Answer after = readToEnd(s);
      assertThat(after.closed()).as("closed when idle").isTrue();
      assertThat(after.text()).isEmpty();
    }
    try (Socket silent = connect()) { // one that never sends a byte
      Answer after = readToEnd(silent);
      assertThat(after.closed()).isTrue();
      assertThat(after.text()).isEmpty();
    }
  }

  @Test
  void aStreamLongerThanTheTimeoutsIsNotCut() throws Exception {
    start(l -> l.withIdleTimeout(Duration.ofSeconds(1)).withRequestReadTimeout(Duration.ofSeconds(1)));
    // 600 tokens of at least 4 ms each: longer than both timeouts
    Answer a = exchange(completion(600, true).replace("Host: x", "Host: x\r\nConnection: close"));
    assertThat(a.status()).isEqualTo(200);
    assertThat(a.text()).contains("data: [DONE]");
    assertThat(a.text().split("\"text\":", -1)).hasSize(601);
  }

  // ------------------------------------------------------------------ connections

  @Test
  void connectionsOverTheCapAre503AndCounted() throws Exception {
    start(l -> l.withMaxConnections(2));
    try (Socket a = connect(); Socket b = connect()) {
      for (Socket s : new Socket[] {a, b}) {
        s.getOutputStream().write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        assertThat(readOneAnswer(s)).startsWith("HTTP/1.1 200");
      }
      try (Socket c = connect()) {
        JsonNode error = readToEnd(c).assertError(503);
        assertThat(error.get("message").asText()).contains("--max-connections");
      }
      assertThat(server.refusedConnections()).isEqualTo(1);
    }
    // both closed: a new one is served (the server notices the closes soon; bounded wait)
    for (int i = 0; i < 100 && server.openConnections() > 0; i++) {
      Thread.sleep(50);
    }
    assertThat(exchange("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").status()).isEqualTo(200);
  }

  // ------------------------------------------------------------------ shutdown

  @Test
  void aDrainLetsTheStreamFinishAndRefusesWhatIsNew() throws Exception {
    start(l -> l);
    try (Socket streaming = connect(); Socket idle = connect()) {
      idle.getOutputStream().write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      assertThat(readOneAnswer(idle)).startsWith("HTTP/1.1 200");
      // at least 600 x 4 ms = 2.4 s of tokens
      streaming.getOutputStream().write(completion(600, true).getBytes(StandardCharsets.US_ASCII));
      InputStream in = streaming.getInputStream();
      ByteArrayOutputStream got = new ByteArrayOutputStream();
      byte[] buf = new byte[8192];
      while (!got.toString(StandardCharsets.UTF_8).contains("data: {")) {
        int n = in.read(buf);
        assertThat(n).as("the stream started").isPositive();
        got.write(buf, 0, n);
      }
      assertThat(server.answersInFlight()).isEqualTo(1);
      CompletableFuture<Boolean> drain = CompletableFuture.supplyAsync(() -> server.drain(Duration.ofSeconds(30)));
      boolean refused = false;
      for (int i = 0; i < 200 && !refused; i++) {
        try (Socket late = new Socket(LOOPBACK, server.port())) {
          Thread.sleep(10);
        } catch (ConnectException e) {
          refused = true;
        }
      }
      assertThat(refused).as("a new connection is refused once the shutdown began").isTrue();
      // a new request on an open keep-alive connection: 503, closed
      idle.getOutputStream().write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      readToEnd(idle).assertError(503);
      // the stream in progress finishes, then its connection closes
      Answer rest = readToEnd(streaming);
      String all = got.toString(StandardCharsets.UTF_8) + rest.text();
      assertThat(all).endsWith("data: [DONE]\n\n\r\n0\r\n\r\n"); // the last chunk: the response is complete
      assertThat(all).contains("data: [DONE]");
      assertThat(all.split("\"text\":", -1)).hasSize(601);
      assertThat(rest.closed()).isTrue();
      assertThat(drain.get(40, TimeUnit.SECONDS)).isTrue();
      assertThat(server.answersInFlight()).isZero();
    }
  }

  /**
   * A request whose head was read before the shutdown began is the server's to answer, even when
   * its body is still arriving: the drain waits for it rather than ending with it half read.
   */
  @Test
  void aDrainWaitsForARequestWhoseBodyIsStillArriving() throws Exception {
    start(l -> l);
    try (Socket slow = connect()) {
      String request = completion(20, true);
      int split = request.length() - 10;
      slow.getOutputStream().write(request.substring(0, split).getBytes(StandardCharsets.US_ASCII));
      for (int i = 0; i < 200 && server.answersInFlight() == 0; i++) {
        Thread.sleep(5);
      }
      assertThat(server.answersInFlight()).as("a request whose head was read is in progress").isEqualTo(1);
      CompletableFuture<Boolean> drain = CompletableFuture.supplyAsync(() -> server.drain(Duration.ofSeconds(30)));
      Thread.sleep(300);
      assertThat(drain).as("the drain waits for the request being read").isNotDone();
      slow.getOutputStream().write(request.substring(split).getBytes(StandardCharsets.US_ASCII));
      Answer answer = readToEnd(slow);
      assertThat(answer.text()).startsWith("HTTP/1.1 200").contains("data: [DONE]");
      assertThat(answer.text().split("\"text\":", -1)).hasSize(21);
      assertThat(drain.get(40, TimeUnit.SECONDS)).isTrue();
      assertThat(server.answersInFlight()).isZero();
    }
  }

  @Test
  void aDrainTimesOutOnAStreamTooLong() throws Exception {
    start(l -> l);
    try (Socket streaming = connect()) {
      streaming.getOutputStream().write(completion(1000, true).getBytes(StandardCharsets.US_ASCII));
      InputStream in = streaming.getInputStream();
      assertThat(in.read()).as("the stream started").isPositive();
      // 1000 tokens take at least 4 s; the drain gives up at 0.3 s
      assertThat(server.drain(Duration.ofMillis(300))).isFalse();
      assertThat(server.answersInFlight()).isEqualTo(1);
      server.stop();
      assertThat(readToEnd(streaming).closed()).isTrue();
    }
  }

  @Test
  void closeIsAGracefulShutdown() throws Exception {
    start(l -> l.withShutdownTimeout(Duration.ofSeconds(30)));
    try (Socket streaming = connect()) {
      streaming.getOutputStream().write(completion(300, true).replace("Host: x", "Host: x\r\nConnection: close")
          .getBytes(StandardCharsets.US_ASCII));
      InputStream in = streaming.getInputStream();
      assertThat(in.read()).as("the stream started").isPositive();
      CompletableFuture<Void> closing = CompletableFuture.runAsync(server::close);
      Answer rest = readToEnd(streaming);
      assertThat(rest.text()).contains("data: [DONE]");
      closing.get(40, TimeUnit.SECONDS);
    }
  }
}
