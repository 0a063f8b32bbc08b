package io.blis.cli.serve;

import io.blis.engine.EngineLimits;
import io.blis.engine.Simulation;
import io.blis.latency.LatencyModels;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * Runs the server's request path before the real server opens its port, as vLLM warms up before it
 * reports ready: a throwaway server on a free loopback port, with a trivial latency model, answers
 * {@code requests} requests of every kind a client sends (completions and chat, streamed and not),
 * {@value #CONCURRENT} at a time. The JIT compiler then has the HTTP, JSON and streaming code
 * compiled before the first real request arrives.
 *
 * <p>Without it, a freshly started JVM reads and parses a burst of requests several times slower
 * than a warm one (interpreted code, and compiler threads competing for the cores): the requests
 * reach the simulation tens to hundreds of milliseconds after their clients sent them, time the
 * clients count in their TTFT and the server's metrics cannot (measured: a burst of 200 on a cold
 * server, client mean TTFT 545 ms against 473 ms in {@code vllm:time_to_first_token_seconds}; with
 * the warm-up, 3-9 ms apart; see
 * ServeBurstTest). Nothing of the warm-up reaches the real server: it has its own simulation,
 * metrics and port, closed before the real one opens.
 */
public final class ServeWarmUp {

  /** Requests in flight at once during the warm-up. */
  static final int CONCURRENT = 100;
  /** The default number of warm-up requests ({@code blis serve --warm-up-requests}). */
  public static final int DEFAULT_REQUESTS = 5000;
  private static final int PROMPT_TOKENS = 64;
  private static final int OUTPUT_TOKENS = 4;

  private ServeWarmUp() {}

  /**
   * Answers {@code requests} requests on a throwaway server configured as {@code config} (its
   * served model name and I/O threads; any free loopback port) and closes it.
   *
   * @return how long it took
   * @throws IllegalStateException when a warm-up request is not answered 200 or not within a minute
   */
  public static Duration run(ServeConfig config, int requests) {
    long start = System.nanoTime();
    if (requests <= 0) {
      return Duration.ZERO;
    }
    // 200 us steps: the warm-up exercises the server, not a latency model
    Simulation.Builder deployment = Simulation.builder().latencyModel(LatencyModels.constantStep(200))
        .totalKvBlocks(CONCURRENT * 16).limits(new EngineLimits(CONCURRENT, 8192, 0, 1024));
    String model;
    try {
      model = OpenAiProtocol.JSON.writeValueAsString(config.servedModelNames().get(0)); // quoted
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
    ServeConfig loopback = new ServeConfig("127.0.0.1", 0, config.servedModelNames(), config.ioThreads(),
        ServeConfig.Limits.defaults(), config.routeByModel(), config.loraModules());
    try (SimulatedServer server = SimulatedServer.start(deployment, loopback);
        Selector selector = Selector.open()) {
      InetSocketAddress address = new InetSocketAddress("127.0.0.1", server.port());
      long deadline = System.nanoTime() + 60_000_000_000L;
      int sent = 0;
      int answered = 0;
      int open = 0;
      ByteBuffer buffer = ByteBuffer.allocate(64 * 1024);
      while (answered < requests) {
        while (open < CONCURRENT && sent < requests) {
          SocketChannel c = SocketChannel.open(address);
          c.setOption(StandardSocketOptions.TCP_NODELAY, true);
          ByteBuffer request = ByteBuffer.wrap(request(sent, model));
          while (request.hasRemaining()) {
            c.write(request);
          }
          c.configureBlocking(false);
          c.register(selector, SelectionKey.OP_READ, new StringBuilder());
          sent++;
          open++;
        }
        if (System.nanoTime() - deadline > 0) {
          throw new IllegalStateException("the warm-up did not finish within a minute: " + answered + " of "
              + requests + " requests answered");
        }
        selector.select(1000);
        for (SelectionKey key : selector.selectedKeys()) {
          SocketChannel c = (SocketChannel) key.channel();
          StringBuilder read = (StringBuilder) key.attachment();
          buffer.clear();
          int n = c.read(buffer);
          if (n > 0) {
            if (read.length() < 16) {
              read.append(new String(buffer.array(), 0, Math.min(n, 16), StandardCharsets.US_ASCII));
            }
          } else if (n < 0) {
            key.cancel();
            c.close();
            open--;
            answered++;
            if (!read.toString().startsWith("HTTP/1.1 200")) {
              throw new IllegalStateException("a warm-up request was answered '" + read + "'");
            }
          }
        }
        selector.selectedKeys().clear();
      }
    } catch (IOException e) {
      throw new UncheckedIOException("the warm-up's loopback connection failed: " + e.getMessage(), e);
    }
    return Duration.ofNanos(System.nanoTime() - start);
  }

  /**
   * Warm-up request {@code i}: in turn a streamed completion, a streamed chat, a completion and a
   * chat, each with a prompt of its own; the connection closes after the answer.
   */
  private static byte[] request(int i, String model) {
    StringBuilder prompt = new StringBuilder();
    String path;
    String body;
    boolean stream = i % 4 < 2;
    if (i % 2 == 0) {
      prompt.append('[');
      for (int t = 0; t < PROMPT_TOKENS; t++) {
        prompt.append(t == 0 ? "" : ",").append(1 + (i * PROMPT_TOKENS + t) % 30_000);
      }
      prompt.append(']');
      path = "/v1/completions";
      body = "{\"model\":" + model + ",\"prompt\":" + prompt + ",\"max_tokens\":" + OUTPUT_TOKENS
          + ",\"stream\":" + stream + (stream ? ",\"stream_options\":{\"include_usage\":true}" : "") + "}";
    } else {
      for (int w = 0; w < PROMPT_TOKENS / 2; w++) {
        prompt.append(w == 0 ? "" : " ").append("word").append(i).append('x').append(w);
      }
      path = "/v1/chat/completions";
      body = "{\"model\":" + model + ",\"messages\":[{\"role\":\"user\",\"content\":\"" + prompt
          + "\"}],\"max_tokens\":" + OUTPUT_TOKENS + ",\"stream\":" + stream + "}";
    }
    byte[] b = body.getBytes(StandardCharsets.UTF_8);
    String head = "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        + "Connection: close\r\nContent-Length: " + b.length + "\r\n\r\n";
    byte[] h = head.getBytes(StandardCharsets.US_ASCII);
    byte[] out = new byte[h.length + b.length];
    System.arraycopy(h, 0, out, 0, h.length);
    System.arraycopy(b, 0, out, h.length, b.length);
    return out;
  }
}
