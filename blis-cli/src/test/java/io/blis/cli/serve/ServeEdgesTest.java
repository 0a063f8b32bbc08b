package io.blis.cli.serve;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.blis.engine.EngineLimits;
import io.blis.engine.LinearTestModel;
import io.blis.engine.Simulation;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code blis serve} given what is not an HTTP request of JSON: a NaN in a body, a TLS handshake
 * on the plain port, a request line of one word. Each is a 400 whose message says what was
 * expected in the client's terms, never the parser's, and comes at once (over plain sockets on the
 * loopback address; outcomes are asserted, not durations).
 */
class ServeEdgesTest {

  private SimulatedServer server;

  @AfterEach
  void stop() {
    if (server != null) {
      server.stop();
    }
  }

  // ------------------------------------------------------------------ 10. NaN in a body

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "{\"prompt\":\"hi\",\"temperature\": NaN}|line 1, column 34: not valid JSON: 'temperature' is NaN, which is not a"
          + " JSON number (JSON has no NaN or Infinity): give a finite number",
      "{\"prompt\":\"hi\",\"top_p\": -Infinity}|'top_p' is -Infinity, which is not a JSON number",
      "{\"prompt\":\"hi\",\"logit_bias\": {\"5\": Infinity}}|'5' is Infinity, which is not a JSON number",
      "{\"prompt\":[1, NaN]}|'prompt' is NaN, which is not a JSON number"})
  void aNonFiniteNumberIsNotJsonAndSaysSoInTheClientsTerms(String body, String expected) {
    assertThatThrownBy(() -> OpenAiProtocol.parse(body.getBytes(StandardCharsets.UTF_8), false))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("request body, line 1, column ")
        .hasMessageContaining(expected)
        .message().doesNotContain("ALLOW_").doesNotContain("JsonReadFeature").doesNotContain("Non-standard");
  }

  @ParameterizedTest
  @ValueSource(strings = {"{\"prompt\":\"hi\",\"max_tokens\":+1}", "{\"prompt\":\"hi\" /* a comment */}"})
  void otherNonStandardJsonNamesNoParserSwitch(String body) {
    assertThatThrownBy(() -> OpenAiProtocol.parse(body.getBytes(StandardCharsets.UTF_8), false))
        .hasMessageContaining("not valid JSON")
        .message().doesNotContain("enable").doesNotContain("Feature").doesNotContain("JsonReadFeature");
  }

  @Test
  void overHttpTheNaNIsA400SayingTheBodyIsNotJson() throws Exception {
    start(Duration.ofSeconds(30));
    String body = "{\"model\":\"m\",\"prompt\":\"hi\",\"max_tokens\":2,\"temperature\": NaN}";
    String answer = exchange(("POST /v1/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type:"
        + " application/json\r\nContent-Length: " + body.length() + "\r\n\r\n" + body).getBytes(StandardCharsets.UTF_8));
    assertThat(answer).startsWith("HTTP/1.1 400 ");
    JsonNode error = OpenAiProtocol.JSON.readTree(answer.substring(answer.indexOf("\r\n\r\n") + 4)).get("error");
    assertThat(error.get("message").asText()).isEqualTo("request body, line 1, column 61: not valid JSON:"
        + " 'temperature' is NaN, which is not a JSON number (JSON has no NaN or Infinity): give a finite number");
  }

  // ------------------------------------------------------------------ 11. TLS on the plain port

  /**
   * The first bytes of a TLS 1.2/1.3 ClientHello, which has no line end: without looking at them
   * the server would wait for a request line until its read timeout (here 60 s, past the client's
   * 8 s), so an answer at all shows it was not waited for.
   */
  @Test
  void aTlsHandshakeIsAnswered400AtOnceAndClosed() throws Exception {
    start(Duration.ofSeconds(60));
    byte[] hello = new byte[64];
    byte[] head = {0x16, 0x03, 0x01, 0x00, (byte) 0xa5, 0x01, 0x00, 0x00, (byte) 0xa1, 0x03, 0x03};
    System.arraycopy(head, 0, hello, 0, head.length);
    String answer = exchange(hello);
    assertThat(answer).startsWith("HTTP/1.1 400 ");
    assertThat(answer.toLowerCase(java.util.Locale.ROOT)).contains("connection: close");
    JsonNode error = OpenAiProtocol.JSON.readTree(answer.substring(answer.indexOf("\r\n\r\n") + 4)).get("error");
    assertThat(error.get("message").asText()).isEqualTo("this server speaks plain HTTP, not TLS: use http://, not https://");
    assertThat(error.get("code").asInt()).isEqualTo(400);
    // the server goes on: a plain request on a new connection is answered
    assertThat(exchange("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        .getBytes(StandardCharsets.US_ASCII))).startsWith("HTTP/1.1 200 ");
  }

  // ------------------------------------------------------------------ 12. a request line of one word

  @ParameterizedTest
  @ValueSource(strings = {"GARBAGE\r\n\r\n", "GET /health\r\nHost: x\r\n\r\n", "GET / HTTP/1.1 extra\r\n\r\n"})
  void aRequestLineThatIsNotMethodPathVersionSaysWhatWasExpected(String request) throws Exception {
    start(Duration.ofSeconds(30));
    String answer = exchange(request.getBytes(StandardCharsets.US_ASCII));
    assertThat(answer).startsWith("HTTP/1.1 400 ");
    JsonNode error = OpenAiProtocol.JSON.readTree(answer.substring(answer.indexOf("\r\n\r\n") + 4)).get("error");
    assertThat(error.get("message").asText()).isEqualTo("malformed HTTP request: malformed request line; expected"
        + " METHOD PATH HTTP/1.x, such as GET /health HTTP/1.1");
  }

  @Test
  void aHeaderLineWithoutAColonKeepsItsOwnReason() throws Exception {
    start(Duration.ofSeconds(30));
    String answer = exchange("GET /health HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
    JsonNode error = OpenAiProtocol.JSON.readTree(answer.substring(answer.indexOf("\r\n\r\n") + 4)).get("error");
    assertThat(error.get("message").asText()).startsWith("malformed HTTP request:").doesNotContain("request line");
  }

  // ------------------------------------------------------------------ helpers

  private void start(Duration readTimeout) {
    server = SimulatedServer.start(Simulation.builder().latencyModel(new LinearTestModel(4000, 10, 0, 1000, 0, 0))
            .totalKvBlocks(2000).limits(new EngineLimits(64, 2048, 0, 1024)),
        ServeConfig.loopback(0, "m").withLimits(ServeConfig.Limits.defaults().withRequestReadTimeout(readTimeout)));
  }

  /** Writes {@code request} on a new connection and reads until the server closes (or 8 s pass). */
  private String exchange(byte[] request) throws IOException {
    try (Socket s = new Socket(InetAddress.getLoopbackAddress(), server.port())) {
      s.setSoTimeout(8000);
      s.getOutputStream().write(request);
      s.getOutputStream().flush();
      ByteArrayOutputStream got = new ByteArrayOutputStream();
      InputStream in = s.getInputStream();
      byte[] buf = new byte[8192];
      try {
        for (int n = in.read(buf); n >= 0; n = in.read(buf)) {
          got.write(buf, 0, n);
        }
      } catch (SocketTimeoutException | SocketException stillOpenOrReset) {
        // what came is what there is
      }
      return got.toString(StandardCharsets.ISO_8859_1);
    }
  }
}
