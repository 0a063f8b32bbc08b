package io.blis.cli.observe;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.blis.workload.RequestSpec;
import java.io.IOException;
import java.net.ConnectException;
import java.util.Arrays;
import java.util.Locale;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Reads one answer as it arrives, line by line: a server-sent-events stream (the {@code data:}
 * lines of an OpenAI streaming answer, ending with {@code data: [DONE]}) or, when the status is
 * not 200, the error body. Timestamps every event that carries output text and ends in exactly one
 * {@link Observation}, whichever comes first: the stream's end, a broken connection, the client's
 * timeout or a stop. Signals arrive from the HTTP client's I/O thread and from the timer's, so
 * every method that touches the state holds the recorder's lock.
 *
 * <p>The request's send time is taken on the I/O thread when its bytes have been written ({@link
 * #onWritten()}), not when the run handed it over: the hand-over's delay (a thread's wake-up) and
 * the write itself are the client's, and count as the send's lateness, not as the server's
 * latency. A request that never
 * got written (no connection; timed out or stopped while connecting) takes its send time when it
 * ends.
 *
 * <p>The server's values are checked before they are recorded ({@link ServerChecks}): a usage
 * count that is not an integer, is negative, exceeds the server's context ({@code max_model_len}
 * when it gave one, else the largest int) or counts fewer output tokens than the text chunks that
 * arrived (each carries at least one) is recorded as not given (-1), so that the chunks stand for
 * the output; a {@code finish_reason} outside {@link ServerChecks#FINISH_REASONS} is recorded as
 * {@code unknown}; an answer longer than the {@code max_tokens} asked is recorded as seen. Each is
 * counted.
 */
final class SseRecorder implements NettyClient.Lines {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int MAX_REASON = 300;
  private static final int MAX_ERROR_BODY = 1 << 16;
  private static final int MAX_BODY = 64 << 20;

  private final long key;
  private final SendOrder order;
  private final RequestSpec request;
  private final long scheduledUs;
  private final int promptTokensSent;
  private final boolean keepTokenTimes;
  private final boolean streaming;
  private final LongSupplier clockUs;
  private final Consumer<Observation> done;
  private final int maxTokensSent;
  private final int maxModelLen;
  private final ServerChecks checks;

  private NettyClient.Exchange exchange;
  private boolean sent;
  private long seq = -1;
  private long sendUs = -1;
  private boolean finished;
  private int httpStatus;
  private long firstTokenUs = -1;
  private long lastTokenUs = -1;
  private int chunks;
  /** The server's usage counts as given, checked when the answer ends; null when not given. */
  private JsonNode promptUsage;
  private JsonNode completionUsage;
  private boolean sawDone;
  private String failureStatus;
  private String failure;
  private final StringBuilder errorBody = new StringBuilder();
  private long[] tokenTimes = new long[0];
  private String finishReason = "";
  /** Without streaming: the answer's body, and when its first line arrived (-1: not yet). */
  private final StringBuilder body = new StringBuilder();
  private long bodyStartUs = -1;

  /**
   * @param key the run's key of the request
   * @param order gives the send order and time as the request leaves
   * @param request what is sent
   * @param scheduledUs when the workload wanted it sent
   * @param promptTokensSent prompt tokens meant
   * @param keepTokenTimes whether to keep every chunk's arrival time
   * @param streaming whether the answer streams; if not, it is one JSON body, read whole
   * @param clockUs the run's clock, microseconds
   * @param maxTokensSent the {@code max_tokens} the request asked for, 0 when it asked none
   * @param maxModelLen the server's context length as it gave it, -1 when it did not
   * @param checks counts the server's values that are not recorded as given
   * @param done receives the one observation
   */
  SseRecorder(long key, SendOrder order, RequestSpec request, long scheduledUs, int promptTokensSent,
      boolean keepTokenTimes, boolean streaming, LongSupplier clockUs, int maxTokensSent, int maxModelLen,
      ServerChecks checks, Consumer<Observation> done) {
    this.key = key;
    this.order = order;
    this.request = request;
    this.scheduledUs = scheduledUs;
    this.promptTokensSent = promptTokensSent;
    this.keepTokenTimes = keepTokenTimes;
    this.streaming = streaming;
    this.clockUs = clockUs;
    this.maxTokensSent = maxTokensSent;
    this.maxModelLen = maxModelLen;
    this.checks = checks;
    this.done = done;
  }

  /** The exchange carrying the answer, cancelled when the client gives up on it. */
  void exchange(NettyClient.Exchange e) {
    boolean cancel;
    synchronized (this) {
      exchange = e;
      cancel = finished;
    }
    if (cancel) {
      e.cancel();
    }
  }

  @Override
  public synchronized void onWritten() {
    markSent();
  }

  private void markSent() {
    if (!sent) {
      sent = true;
      SendOrder.Sent s = order.take(key);
      seq = s.seq();
      sendUs = s.sendUs();
    }
  }

  @Override
  public synchronized void onStatus(int status) {
    httpStatus = status;
  }

  @Override
  public synchronized void onLine(String line) {
    long now = clockUs.getAsLong();
    if (finished) {
      return;
    }
    if (httpStatus != 200) {
      if (errorBody.length() < MAX_ERROR_BODY) {
        errorBody.append(line).append('\n');
      }
      return;
    }
    if (!streaming) {
      if (bodyStartUs < 0) {
        bodyStartUs = now;
      }
      if (body.length() < MAX_BODY) {
        body.append(line).append('\n');
      }
      return;
    }
    if (failure != null || line.isEmpty() || line.startsWith(":")) {
      return; // after a failure the rest is drained; blank lines end events; ':' is a comment
    }
    if (!line.startsWith("data:")) {
      if (!line.startsWith("event:") && !line.startsWith("id:") && !line.startsWith("retry:")) {
        fail(Observation.MALFORMED, "malformed SSE line after " + chunks + " chunks: " + clip(line));
      }
      return;
    }
    String data = line.substring(5).strip();
    if (data.equals("[DONE]")) {
      sawDone = true;
      return;
    }
    JsonNode n;
    try {
      n = JSON.readTree(data);
    } catch (IOException e) {
      n = null;
    }
    if (n == null || !n.isObject()) {
      fail(Observation.MALFORMED, "malformed SSE data at chunk " + (chunks + 1) + ": " + clip(data));
      return;
    }
    if (n.has("error")) {
      fail(Observation.ERROR_EVENT, "error event after " + chunks + " chunks: " + clip(n.get("error").toString()));
      return;
    }
    usage(n.get("usage"));
    finishReason(n);
    if (carriesText(n)) {
      if (firstTokenUs < 0) {
        firstTokenUs = now;
      }
      lastTokenUs = now;
      chunks++;
      if (keepTokenTimes) {
        if (chunks > tokenTimes.length) {
          tokenTimes = Arrays.copyOf(tokenTimes, Math.max(16, tokenTimes.length * 2));
        }
        tokenTimes[chunks - 1] = now - sendUs;
      }
    }
  }

  private void fail(String status, String reason) {
    failureStatus = status;
    failure = reason;
  }

  /**
   * The last non-empty {@code finish_reason} of a chunk's (or a body's) choices: one of {@link
   * ServerChecks#FINISH_REASONS}, else {@code unknown} (counted when the answer ends).
   */
  private void finishReason(JsonNode n) {
    JsonNode choices = n.get("choices");
    if (choices != null && choices.isArray()) {
      for (JsonNode c : choices) {
        JsonNode f = c.get("finish_reason");
        if (f != null && !f.isNull() && !(f.isTextual() && f.asText().isEmpty())) {
          if (f.isTextual() && ServerChecks.FINISH_REASONS.contains(f.asText())) {
            finishReason = f.asText();
            unknownFinishReason = null;
          } else {
            finishReason = ServerChecks.UNKNOWN_FINISH_REASON;
            unknownFinishReason = f.isTextual() ? "'" + clip(f.asText(), 60) + "'" : clip(f.toString(), 60);
          }
        }
      }
    }
  }

  /** The server's finish reason as it gave it when it is not a known one (quoted, clipped), else null. */
  private String unknownFinishReason;

  /**
   * Whether a chunk carries output text (a completion's {@code text}, a chat delta's {@code
   * content}, or, in a whole answer, a chat message's).
   */
  private static boolean carriesText(JsonNode n) {
    JsonNode choices = n.get("choices");
    if (choices == null || !choices.isArray()) {
      return false;
    }
    for (JsonNode c : choices) {
      JsonNode t = c.has("delta") ? c.get("delta").get("content")
          : c.has("message") ? c.get("message").get("content") : c.get("text");
      if (t != null && t.isTextual() && !t.asText().isEmpty()) {
        return true;
      }
    }
    return false;
  }

  /** Keeps the counts of a {@code usage} object (the last given wins); they are checked at the end. */
  private void usage(JsonNode u) {
    if (u != null && u.isObject()) {
      JsonNode p = u.get("prompt_tokens");
      if (p != null && !p.isNull()) {
        promptUsage = p;
      }
      JsonNode c = u.get("completion_tokens");
      if (c != null && !c.isNull()) {
        completionUsage = c;
      }
    }
  }

  /**
   * A usage count checked: the integer when it lies in [0, {@code max}] and, for the output, is at
   * least the text chunks received; -1 when not given; -1 and counted when it cannot be right.
   */
  private int checkedUsage(String field, JsonNode v, long max, String bound, int atLeast) {
    if (v == null) {
      return -1;
    }
    String why;
    if (!v.isIntegralNumber()) {
      why = "not an integer";
    } else if (v.bigIntegerValue().signum() < 0) {
      why = "negative";
    } else if (!v.canConvertToLong() || v.asLong() > max) {
      why = "above " + bound;
    } else if (v.asLong() < atLeast) {
      why = "fewer than the " + atLeast + " text chunks received";
    } else {
      return (int) v.asLong();
    }
    badUsage = badUsage != null ? badUsage : field + " " + clip(v.toString(), 40) + ", " + why;
    return -1;
  }

  /** The first usage count of this answer that could not be right, or null. */
  private String badUsage;

  @Override
  public synchronized void onFailure(Throwable t, boolean answered) {
    if (!answered) {
      finish(Observation.CONNECTION, (t instanceof ConnectException ? "cannot connect: " : "request failed: ")
          + describe(t));
    } else if (httpStatus == 200 && failure != null) {
      // what went wrong first is the request's failure; the broken connection only follows it
      finish(failureStatus, failure + "; then the connection broke: " + describe(t));
    } else if (httpStatus == 200 && streaming && sawDone) {
      onEnd(); // the answer was whole ([DONE] came) before the connection broke
    } else if (httpStatus == 200) {
      finish(Observation.STREAM_CUT, "connection broken after " + (streaming ? chunks + " chunks" : "part of the body")
          + ": " + describe(t));
    } else {
      finish(Observation.HTTP_ERROR, "HTTP " + httpStatus + ", then the connection broke: " + describe(t));
    }
  }

  @Override
  public synchronized void onEnd() {
    if (httpStatus != 200) {
      finish(Observation.HTTP_ERROR, "HTTP " + httpStatus + ": " + clip(errorBody.toString().strip()));
    } else if (!streaming) {
      endBody();
    } else if (failure != null) {
      finish(failureStatus, failure);
    } else if (!sawDone) {
      finish(Observation.STREAM_CUT, "stream closed after " + chunks + " chunks without [DONE]");
    } else if (chunks == 0) {
      finish(Observation.NO_OUTPUT, "stream ended with no output text");
    } else {
      finish(Observation.OK, "");
    }
  }

  /**
   * The end of an answer that did not stream: one JSON body, its usage and finish reason read as
   * a stream's; the whole answer is one chunk, first when its first line arrived, last now.
   */
  private void endBody() {
    long now = clockUs.getAsLong();
    JsonNode n;
    try {
      n = JSON.readTree(body.toString());
    } catch (IOException e) {
      n = null;
    }
    if (n == null || !n.isObject()) {
      finish(Observation.MALFORMED, "the answer is not a JSON object: " + clip(body.toString().strip()));
      return;
    }
    if (n.has("error")) {
      finish(Observation.ERROR_EVENT, "error in the answer: " + clip(n.get("error").toString()));
      return;
    }
    usage(n.get("usage"));
    finishReason(n);
    if (!carriesText(n)) {
      finish(Observation.NO_OUTPUT, "the answer carries no output text");
      return;
    }
    chunks = 1;
    firstTokenUs = bodyStartUs >= 0 ? bodyStartUs : now;
    lastTokenUs = now;
    if (keepTokenTimes) {
      tokenTimes = new long[] {now - sendUs};
    }
    finish(Observation.OK, "");
  }

  /**
   * The client gave up after {@code seconds}: the request ends as timed out and its stream is
   * cancelled. Returns whether this ended the request (false if it had already ended).
   */
  boolean timeout(double seconds) {
    return end(Observation.TIMEOUT, String.format(Locale.ROOT, "no complete answer within %.1f s (%d chunks)",
        seconds, chunks));
  }

  /** The client stops: a request in flight ends as stopped. Returns whether this ended it. */
  boolean stop() {
    return end(Observation.STOPPED, "client stopped after " + chunks + " chunks");
  }

  /** Ends the request from the client's side and drops its connection. */
  private boolean end(String status, String reason) {
    NettyClient.Exchange e;
    synchronized (this) {
      if (!finish(status, reason)) {
        return false;
      }
      e = exchange;
    }
    if (e != null) {
      e.cancel();
    }
    return true;
  }

  private static String describe(Throwable t) {
    String m = t.getMessage();
    return t.getClass().getSimpleName() + (m == null || m.isBlank() ? "" : ": " + clip(m));
  }

  private boolean finish(String status, String reason) {
    if (finished) {
      return false;
    }
    finished = true;
    markSent();
    long end = clockUs.getAsLong();
    long[] times = keepTokenTimes ? Arrays.copyOf(tokenTimes, chunks) : new long[0];
    long context = maxModelLen > 0 ? maxModelLen : Integer.MAX_VALUE;
    int prompt = checkedUsage("prompt_tokens", promptUsage, context,
        maxModelLen > 0 ? "the server's max_model_len " + maxModelLen : "the largest int", 0);
    int completion = checkedUsage("completion_tokens", completionUsage, context,
        maxModelLen > 0 ? "the server's max_model_len " + maxModelLen : "the largest int", streaming ? chunks : 0);
    if (badUsage != null) {
      checks.add(ServerChecks.Kind.USAGE, 1, badUsage);
    }
    int output = completion >= 0 ? completion : streaming ? chunks : 0;
    if (maxTokensSent > 0 && output > maxTokensSent) {
      checks.add(ServerChecks.Kind.LONGER_THAN_ASKED, 1, output + " tokens for max_tokens " + maxTokensSent);
    }
    if (unknownFinishReason != null) {
      checks.add(ServerChecks.Kind.FINISH_REASON, 1, unknownFinishReason);
    }
    done.accept(new Observation(seq, request.id(), request.stage(), request.sessionId(), request.round(),
        scheduledUs, sendUs, firstTokenUs, lastTokenUs, end, chunks, promptTokensSent, prompt,
        completion, request.outputTokens(), httpStatus, status, reason, times, finishReason));
    return true;
  }

  private static String clip(String s) {
    return clip(s, MAX_REASON);
  }

  /** {@code s} on one line, at most {@code max} characters (then "..."). */
  private static String clip(String s, int max) {
    String one = s.replaceAll("\\s+", " ");
    return io.blis.latency.coeff.InputTrees.oneLine(one.length() <= max ? one : one.substring(0, max) + "...");
  }
}
