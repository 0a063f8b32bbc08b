package io.blis.cli.observe;

import io.blis.workload.RequestSpec;
import io.blis.workload.trace.TraceV2Writer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Records a run as Go BLIS's {@code blis observe} does: a TraceV2 pair (header YAML, data CSV;
 * {@link TraceV2Writer}) and, with ITL recording, its per-chunk CSV. Written when the run has
 * ended ({@link #write}), rows in request order.
 *
 * <p>Column meaning, as Go's: {@code request_id} is the send order (0 for the first request sent);
 * the first {@code warmUpRequests} requests sent are left out (and counted in the header's {@code
 * warm_up_requests}); {@code arrival_time_us} is when the workload wanted the request sent,
 * microseconds since the run began; {@code send_time_us}, {@code first_chunk_time_us} and {@code
 * last_chunk_time_us} are wall-clock times, Unix epoch microseconds (0: no chunk came); {@code
 * num_chunks} counts the events that carried output text (one per token from vLLM; 1 for an answer
 * that did not stream); {@code input_tokens} is the prompt after its group's shared prefix ({@code
 * prefix_length}); {@code server_input_tokens} and {@code output_tokens} are the server's usage
 * counts as {@link SseRecorder} checked them (one that cannot be right is not given: 0 input
 * tokens, the chunks received as output); {@code status} is {@code ok}, {@code timeout} or {@code
 * error}, with this client's class of the failure and its reason in {@code error_message}; {@code
 * finish_reason} is the server's ({@code unknown} for one outside {@link
 * ServerChecks#FINISH_REASONS}). An ITL row is one chunk of a successful streamed request: {@code request_id}, {@code
 * chunk_index} from 0, {@code timestamp_us} in epoch microseconds.
 */
public final class TraceV2Recorder implements ObservationListener {

  private final int warmUpRequests;
  private final boolean recordItl;
  private final boolean streaming;
  private final long defaultTimeoutUs;
  private long epochUs;
  private final Map<Long, RequestSpec> sent = new HashMap<>();
  private final List<TraceV2Writer.Row> rows = new ArrayList<>();
  private final List<Observation> kept = new ArrayList<>();
  private final List<TraceV2Writer.ItlRow> itl = new ArrayList<>();

  /**
   * @param warmUpRequests the first requests sent that are left out of the trace
   * @param recordItl whether to keep every chunk's time for the ITL file
   * @param config the run's settings (streaming, the client's default timeout)
   */
  public TraceV2Recorder(int warmUpRequests, boolean recordItl, ObserveConfig config) {
    this.warmUpRequests = warmUpRequests;
    this.recordItl = recordItl;
    this.streaming = config.streaming();
    this.defaultTimeoutUs = config.timeoutUs();
  }

  @Override
  public void onStart(long epochUs) {
    this.epochUs = epochUs;
  }

  @Override
  public void onSent(long seq, RequestSpec asSent, long scheduledUs) {
    sent.put(seq, asSent);
  }

  @Override
  public void onObservation(Observation o) {
    RequestSpec r = sent.remove(o.seq());
    if (o.seq() < warmUpRequests) {
      return;
    }
    kept.add(o);
    rows.add(row(o, r));
    if (recordItl && o.ok() && o.tokenTimesUs().length == o.chunks()) {
      long[] t = o.tokenTimesUs();
      for (int i = 0; i < t.length; i++) {
        itl.add(new TraceV2Writer.ItlRow(o.seq(), i, epochUs + o.sendUs() + t[i]));
      }
    }
  }

  private TraceV2Writer.Row row(Observation o, RequestSpec r) {
    int input = r == null ? o.promptTokensSent() : r.inputTokens();
    String group = r == null ? "" : r.prefixGroup();
    int prefix = group.isEmpty() ? 0 : r.prefixLength();
    if (input - prefix < 0) {
      prefix = 0;
    } else {
      input -= prefix;
    }
    // a request's own timeout (a workload spec's timeout_s) is Go's deadline; the client's default is not
    long deadline = r != null && r.timeoutUs() > 0 && r.timeoutUs() != defaultTimeoutUs
        ? o.scheduledUs() + r.timeoutUs() : 0;
    int output = o.completionTokensUsage() >= 0 ? o.completionTokensUsage() : streaming ? o.chunks() : 0;
    String status = o.ok() ? "ok" : o.status().equals(Observation.TIMEOUT) ? "timeout" : "error";
    String error = o.ok() ? "" : o.status().equals(Observation.TIMEOUT) ? o.reason()
        : o.status() + ": " + o.reason();
    return new TraceV2Writer.Row(o.seq(), "", r == null ? "" : r.tenant(), r == null ? "" : r.sloClass(),
        r == null || r.sessionId() < 0 ? "" : Long.toString(r.sessionId()), r == null ? 0 : r.round(), group,
        prefix, streaming, input, output, r == null ? "" : r.model(), deadline, Math.max(0, o.promptTokensUsage()),
        o.scheduledUs(), epochUs + o.sendUs(), o.firstTokenUs() < 0 ? 0 : epochUs + o.firstTokenUs(),
        o.lastTokenUs() < 0 ? 0 : epochUs + o.lastTokenUs(), o.chunks(), status, error, o.finishReason(),
        r == null ? "" : r.adapter());
  }

  /** The observations the trace holds (the warm-up left out), in send order. */
  public List<Observation> observations() {
    List<Observation> out = new ArrayList<>(kept);
    out.sort(Comparator.comparingLong(Observation::seq));
    return out;
  }

  /** Rows in the trace so far. */
  public int rows() {
    return rows.size();
  }

  /** ITL rows so far. */
  public int itlRows() {
    return itl.size();
  }

  /**
   * Writes the pair and, when {@code itlFile} is not null, the ITL file.
   *
   * @throws java.io.UncheckedIOException naming a file that cannot be written
   */
  public void write(TraceV2Writer.Header header, Path headerFile, Path dataFile, Path itlFile) {
    List<TraceV2Writer.Row> sorted = new ArrayList<>(rows);
    sorted.sort(Comparator.comparingLong(TraceV2Writer.Row::requestId));
    TraceV2Writer.writeHeader(headerFile, header);
    TraceV2Writer.writeData(dataFile, sorted);
    if (itlFile != null) {
      List<TraceV2Writer.ItlRow> i = new ArrayList<>(itl);
      i.sort(Comparator.comparingLong(TraceV2Writer.ItlRow::requestId)
          .thenComparingInt(TraceV2Writer.ItlRow::chunkIndex));
      TraceV2Writer.writeItl(itlFile, i);
    }
  }
}
