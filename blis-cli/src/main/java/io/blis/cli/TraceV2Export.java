package io.blis.cli;

import io.blis.engine.result.RequestRecord;
import io.blis.engine.result.SimulationResult;
import io.blis.workload.RequestOutcome;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import io.blis.workload.trace.TraceV2Writer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Go BLIS's {@code run --trace-output PREFIX}: the run's requests as a TraceV2 pair, {@code
 * PREFIX.yaml} (header, mode {@code generated}) and {@code PREFIX.csv} (one row per request that
 * arrived, in arrival order, with its simulated first- and last-token times), which {@code blis
 * replay} and {@code blis calibrate} read. The header records the KV offload configuration the run
 * simulated, which a replay then applies.
 */
final class TraceV2Export {

  /** What a row needs of a request beyond its record: the spec without its prompt tokens. */
  private record Meta(String tenant, String prefixGroup, int prefixLength, long sessionId, int round,
      long timeoutUs, String model, String adapter) {}

  private final Path prefix;
  private final Map<Long, Meta> meta = new HashMap<>();

  TraceV2Export(Path prefix) {
    this.prefix = prefix;
  }

  /** The header file, {@code PREFIX.yaml}. */
  Path header() {
    return Path.of(prefix + ".yaml");
  }

  /** The data file, {@code PREFIX.csv}. */
  Path data() {
    return Path.of(prefix + ".csv");
  }

  /** {@code source}, noting what a row needs of each request it hands out. */
  RequestSource watching(RequestSource source) {
    return new SeeingSource(source) {
      @Override
      void seen(RequestSpec r) {
        note(r);
      }
    };
  }

  private void note(RequestSpec r) {
    meta.put(r.id(), new Meta(r.tenant(), r.prefixGroup(), r.prefixLength(), r.sessionId(), r.round(),
        r.timeoutUs(), r.model(), r.adapter()));
  }

  /**
   * Writes the pair from the run's per-request records.
   *
   * @param kvOffload the header's {@code kv_offload:} block, or null
   */
  void write(SimulationResult result, long seed, String kvOffload) {
    List<RequestRecord> records = new ArrayList<>(result.requests());
    records.sort((a, b) -> a.arrivalUs() != b.arrivalUs() ? Long.compare(a.arrivalUs(), b.arrivalUs())
        : Long.compare(a.id(), b.id()));
    List<TraceV2Writer.Row> rows = new ArrayList<>(records.size());
    for (RequestRecord r : records) {
      Meta m = meta.getOrDefault(r.id(), new Meta("", "", 0, -1, 0, 0, "", ""));
      int prefixLength = Math.min(m.prefixLength(), r.inputTokens());
      long first = r.ttftUs() >= 0 ? r.arrivalUs() + r.ttftUs() : 0;
      long last = r.ttftUs() >= 0 && r.e2eUs() >= 0 ? r.arrivalUs() + r.e2eUs() : 0;
      String status = switch (r.outcome()) {
        case COMPLETED -> "ok";
        case TIMED_OUT -> "timeout";
        default -> "incomplete";
      };
      rows.add(new TraceV2Writer.Row(r.id(), "", m.tenant(), r.sloClass(), m.sessionId() < 0 ? ""
          : "session_" + m.sessionId(), m.round(), m.prefixGroup(), prefixLength, false,
          r.inputTokens() - prefixLength, r.outputTokens(), m.model(),
          m.timeoutUs() > 0 ? r.arrivalUs() + m.timeoutUs() : 0, 0, r.arrivalUs(), r.arrivalUs(), first, last,
          r.outcome() == RequestOutcome.COMPLETED ? r.outputTokens() : 0, status, "", "", m.adapter()));
    }
    // each written to a temporary file beside it and moved into place when complete, as every output file
    Path dataTmp = io.blis.engine.result.OutputFiles.temporary(data());
    Path headerTmp = io.blis.engine.result.OutputFiles.temporary(header());
    TraceV2Writer.writeData(dataTmp, rows);
    TraceV2Writer.writeHeader(headerTmp, new TraceV2Writer.Header(3, "", "generated", 0, seed, null, null, null, 0,
        null, kvOffload));
    Cli.commit("--trace-output", dataTmp, data());
    Cli.commit("--trace-output", headerTmp, header());
  }
}
