package io.blis.cli.observe;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.util.Locale;

/**
 * What the client saw of one request. Times are microseconds since the start of the run, -1 when
 * the event did not happen.
 *
 * @param seq send order: 0 for the first request sent, 1 for the next, ...
 * @param id the workload's request id
 * @param stage load stage
 * @param sessionId session id, -1 outside a session
 * @param round session round (0 for the first round or outside a session)
 * @param scheduledUs when the workload asked for it to be sent
 * @param sendUs when it was sent
 * @param firstTokenUs arrival of the first chunk carrying output text
 * @param lastTokenUs arrival of the last chunk carrying output text
 * @param endUs end of the response: its last byte, the error, the timeout or the stop
 * @param chunks chunks carrying output text (one per token when the server streams token by
 *     token, as vLLM does by default)
 * @param promptTokensSent prompt tokens the client meant to send (ids sent, or words plus the
 *     measured template tokens for text prompts)
 * @param promptTokensUsage the server's {@code usage.prompt_tokens}, -1 when not given or not a
 *     count that can be right (see {@link SseRecorder})
 * @param completionTokensUsage the server's {@code usage.completion_tokens}, -1 when not given or
 *     not a count that can be right (below the chunks received, for one)
 * @param maxTokens output tokens asked for
 * @param httpStatus HTTP status, 0 when no response arrived
 * @param status {@link #OK} or the class of the failure ({@link #TIMEOUT}, {@link #HTTP_ERROR},
 *     {@link #STREAM_CUT}, {@link #MALFORMED}, {@link #ERROR_EVENT}, {@link #CONNECTION}, {@link
 *     #STOPPED}, {@link #NO_OUTPUT})
 * @param reason what went wrong, in words ("" when ok)
 * @param tokenTimesUs arrival of every chunk carrying text, microseconds since the send (empty
 *     unless token times were asked for)
 * @param finishReason the server's last {@code finish_reason} ({@code length}, {@code stop},
 *     {@code abort}, ...; {@code unknown} for one outside {@link ServerChecks#FINISH_REASONS}), ""
 *     when it gave none
 */
public record Observation(long seq, long id, int stage, long sessionId, int round, long scheduledUs,
    long sendUs, long firstTokenUs, long lastTokenUs, long endUs, int chunks, int promptTokensSent,
    int promptTokensUsage, int completionTokensUsage, int maxTokens, int httpStatus, String status,
    String reason, long[] tokenTimesUs, String finishReason) {

  public Observation {
    finishReason = finishReason == null ? "" : finishReason;
  }

  /** An observation without a finish reason. */
  public Observation(long seq, long id, int stage, long sessionId, int round, long scheduledUs,
      long sendUs, long firstTokenUs, long lastTokenUs, long endUs, int chunks, int promptTokensSent,
      int promptTokensUsage, int completionTokensUsage, int maxTokens, int httpStatus, String status,
      String reason, long[] tokenTimesUs) {
    this(seq, id, stage, sessionId, round, scheduledUs, sendUs, firstTokenUs, lastTokenUs, endUs, chunks,
        promptTokensSent, promptTokensUsage, completionTokensUsage, maxTokens, httpStatus, status, reason,
        tokenTimesUs, "");
  }

  /** The whole answer arrived. */
  public static final String OK = "ok";
  /** The client's timeout elapsed first. */
  public static final String TIMEOUT = "timeout";
  /** The server answered with a status other than 200 (429, 5xx, 4xx). */
  public static final String HTTP_ERROR = "http_error";
  /** The stream ended (cleanly or not) before its {@code [DONE]} line. */
  public static final String STREAM_CUT = "stream_cut";
  /** A line of the stream or the body was not what the protocol allows. */
  public static final String MALFORMED = "malformed";
  /** The server sent an error event inside the stream. */
  public static final String ERROR_EVENT = "error_event";
  /** The connection could not be made or broke. */
  public static final String CONNECTION = "connection";
  /** The client was stopped (Ctrl-C) while the request was in flight. */
  public static final String STOPPED = "stopped";
  /** The stream ended properly but carried no output text. */
  public static final String NO_OUTPUT = "no_output";

  /** Whether the request got its whole answer. */
  public boolean ok() {
    return status.equals(OK);
  }

  /** Output tokens: the server's count when it gave one, else the chunks received. */
  public int outputTokens() {
    return completionTokensUsage >= 0 ? completionTokensUsage : chunks;
  }

  /** Prompt tokens: the server's count when it gave one, else what was sent. */
  public int inputTokens() {
    return promptTokensUsage >= 0 ? promptTokensUsage : promptTokensSent;
  }

  /** Time to first token, microseconds, or -1. */
  public long ttftUs() {
    return firstTokenUs < 0 ? -1 : firstTokenUs - sendUs;
  }

  /** Send to the end (the last token of a complete answer), microseconds. */
  public long e2eUs() {
    return (ok() && lastTokenUs >= 0 ? lastTokenUs : endUs) - sendUs;
  }

  /** How late it was sent against the workload's time, microseconds. */
  public long latenessUs() {
    return sendUs - scheduledUs;
  }

  /** Writes this as one JSON object (a line of {@code observations.jsonl}). */
  void write(JsonGenerator g) throws IOException {
    g.writeStartObject();
    g.writeNumberField("seq", seq);
    g.writeNumberField("id", id);
    g.writeNumberField("stage", stage);
    g.writeNumberField("session_id", sessionId);
    g.writeNumberField("round", round);
    g.writeNumberField("scheduled_us", scheduledUs);
    g.writeNumberField("send_us", sendUs);
    g.writeNumberField("first_token_us", firstTokenUs);
    g.writeNumberField("last_token_us", lastTokenUs);
    g.writeNumberField("end_us", endUs);
    g.writeNumberField("chunks", chunks);
    g.writeNumberField("prompt_tokens_sent", promptTokensSent);
    g.writeNumberField("prompt_tokens_usage", promptTokensUsage);
    g.writeNumberField("completion_tokens_usage", completionTokensUsage);
    g.writeNumberField("max_tokens", maxTokens);
    g.writeNumberField("http_status", httpStatus);
    g.writeStringField("status", status);
    g.writeStringField("reason", reason);
    if (!finishReason.isEmpty()) {
      g.writeStringField("finish_reason", finishReason);
    }
    g.writeArrayFieldStart("token_times_us");
    for (long t : tokenTimesUs) {
      g.writeNumber(t);
    }
    g.writeEndArray();
    g.writeEndObject();
  }

  /**
   * Reads one line of {@code observations.jsonl}.
   *
   * @throws IllegalArgumentException naming {@code where} and the field when one is missing
   */
  static Observation read(JsonNode n, String where) {
    if (n == null || !n.isObject()) {
      throw new IllegalArgumentException(where + ": expected a JSON object");
    }
    JsonNode times = n.get("token_times_us");
    long[] tt = new long[times == null || !times.isArray() ? 0 : times.size()];
    for (int i = 0; i < tt.length; i++) {
      tt[i] = times.get(i).asLong();
    }
    return new Observation(longField(n, "seq", where), longField(n, "id", where), (int) longField(n, "stage", where),
        longField(n, "session_id", where), (int) longField(n, "round", where),
        longField(n, "scheduled_us", where), longField(n, "send_us", where),
        longField(n, "first_token_us", where), longField(n, "last_token_us", where),
        longField(n, "end_us", where), (int) longField(n, "chunks", where),
        (int) longField(n, "prompt_tokens_sent", where), (int) longField(n, "prompt_tokens_usage", where),
        (int) longField(n, "completion_tokens_usage", where), (int) longField(n, "max_tokens", where),
        (int) longField(n, "http_status", where), textField(n, "status", where),
        textField(n, "reason", where), tt, n.path("finish_reason").asText(""));
  }

  private static long longField(JsonNode n, String field, String where) {
    JsonNode v = n.get(field);
    if (v == null || !v.isIntegralNumber()) {
      throw new IllegalArgumentException(where + ": field '" + field + "': expected an integer, got "
          + (v == null ? "nothing" : v.toString()));
    }
    return v.asLong();
  }

  private static String textField(JsonNode n, String field, String where) {
    JsonNode v = n.get(field);
    if (v == null || !v.isTextual()) {
      throw new IllegalArgumentException(where + ": field '" + field + "': expected a string");
    }
    return v.asText();
  }

  @Override
  public String toString() {
    return String.format(Locale.ROOT, "Observation[id=%d, status=%s, ttft=%d us, e2e=%d us, chunks=%d%s]",
        id, status, ttftUs(), e2eUs(), chunks, reason.isEmpty() ? "" : ", " + reason);
  }
}
