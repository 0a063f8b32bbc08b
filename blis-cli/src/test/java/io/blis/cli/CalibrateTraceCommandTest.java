package io.blis.cli;

import static io.blis.cli.BlisCliTest.JSON;
import static io.blis.cli.BlisCliTest.blis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.blis.workload.trace.TraceV2Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code blis calibrate --trace-header/--trace-data/--sim-results}: Go BLIS's comparison of an
 * observed TraceV2 with a replay of it, and its report.
 */
class CalibrateTraceCommandTest {

  @TempDir Path dir;

  /** Epoch microseconds, as Go BLIS's observe writes them: latencies are differences, so they do not matter. */
  static final long EPOCH = 1_700_000_000_000_000L;

  static String row(long id, int input, int output, long send, long first, long last, String status) {
    return id + ",c1,,standard,,0,,0,true," + input + "," + output + "," + input + ",0,0,0,0,,0,0," + send + ","
        + send + "," + first + "," + last + "," + output + "," + status + ",,stop";
  }

  /** A row sent at EPOCH + at whose first and last chunks came ttft and e2e later. */
  static String timed(long id, int input, int output, long at, long ttft, long e2e) {
    return row(id, input, output, EPOCH + at, EPOCH + at + ttft, EPOCH + at + e2e, "ok");
  }

  private Path write(String name, String text) throws Exception {
    Path p = dir.resolve(name);
    Files.writeString(p, text);
    return p;
  }

  private Path[] observed() throws Exception {
    Path header = write("trace.yaml", """
        trace_version: 2
        time_unit: us
        mode: real
        warm_up_requests: 1
        network:
          measured_rtt_ms: 0.5
        observed_kv_metrics:
          source: tiered
          hit_rate: 0.7
          block_hits: 70
          block_queries: 100
        """);
    Path data = write("trace.csv", String.join(",", TraceV2Reader.COLUMNS) + "\n"
        + String.join("\n",
            timed(0, 100, 10, 0, 5_000, 50_000), // warm-up
            timed(1, 100, 11, 100_000, 10_000, 60_000),
            timed(2, 200, 21, 200_000, 20_000, 80_000),
            timed(3, 300, 31, 300_000, 40_000, 120_000),
            row(4, 50, 5, EPOCH + 400_000, 0, 0, "error"), // no chunk: no usable times
            timed(5, 60, 6, 500_000, 1_000, 2_000)) // not in the simulation
        + "\n");
    return new Path[] {header, data};
  }

  /** Go BLIS's replay --results-path: an array of {request_id, ttft_us, e2e_us, input_tokens, output_tokens}. */
  private Path goSimResults() throws Exception {
    return write("results.json", """
        [
          {"request_id": 0, "ttft_us": 4000, "e2e_us": 40000, "input_tokens": 100, "output_tokens": 10},
          {"request_id": 1, "ttft_us": 10500, "e2e_us": 59000, "input_tokens": 100, "output_tokens": 11},
          {"request_id": 2, "ttft_us": 17500, "e2e_us": 82000, "input_tokens": 200, "output_tokens": 21},
          {"request_id": 3, "ttft_us": 39500, "e2e_us": 118000, "input_tokens": 300, "output_tokens": 30},
          {"request_id": 4, "ttft_us": 5000, "e2e_us": 20000, "input_tokens": 50, "output_tokens": 5},
          {"request_id": 9, "ttft_us": 5000, "e2e_us": 20000, "input_tokens": 50, "output_tokens": 5}
        ]
        """);
  }

  private Path itl() throws Exception {
    long t = EPOCH + 1_000_000;
    return write("trace.itl.csv", "request_id,chunk_index,timestamp_us\n"
        + "1,0," + t + "\n1,1," + (t + 1000) + "\n1,2," + (t + 3000) + "\n"
        // out of order in the file: sorted by chunk index, gaps 1000 and 3000
        + "2,2," + (t + 4000) + "\n2,0," + t + "\n2,1," + (t + 1000) + "\n"
        // every gap negative (clock skew): dropped
        + "3,0," + (t + 5000) + "\n3,1," + t + "\n");
  }

  private static void close(JsonNode n, String key, double expected) {
    assertThat(n.path(key).isNumber()).as(key + " in " + n).isTrue();
    assertThat(n.path(key).asDouble()).as(key).isCloseTo(expected, within(1e-6));
  }

  @Test
  void goBlisResultsGiveHandComputedErrorsCountsItlAndHitRate() throws Exception {
    Path[] t = observed();
    Path simAgg = write("simagg.json", "{\"completed_requests\": 5, \"cache_hit_rate\": 0.68}");
    Path report = dir.resolve("calibration.json");
    BlisCliTest.Outcome o = blis("calibrate", "--trace-header", t[0].toString(), "--trace-data", t[1].toString(),
        "--sim-results", goSimResults().toString(), "--itl-data", itl().toString(), "--sim-metrics",
        simAgg.toString(), "--hit-rate-tolerance-pp", "5", "--ttft-mape-threshold", "0.15", "--report",
        report.toString());
    assertThat(o.code()).as(o.err()).isZero();
    assertThat(o.out()).contains("Calibration report written to " + report)
        .contains("Matched pairs: 3 (warm-up excluded: 1, unmatched real: 2, unmatched sim: 2)");
    assertThat(o.err()).contains("1 matched request(s) without usable times");
    JsonNode r = JSON.readTree(report.toFile());
    JsonNode info = r.path("trace_info");
    assertThat(info.path("num_requests").asInt()).isEqualTo(6);
    assertThat(info.path("warm_up_excluded").asInt()).isEqualTo(1);
    assertThat(info.path("matched_pairs").asInt()).isEqualTo(3);
    assertThat(info.path("token_mismatches").asInt()).isEqualTo(1); // request 3: 31 output tokens observed, 30 simulated
    assertThat(info.path("itl_dropped").asInt()).isEqualTo(1);
    assertThat(info.path("unmatched_real").asInt()).isEqualTo(2); // 4 (no chunk) and 5 (not simulated)
    assertThat(info.path("unmatched_sim").asInt()).isEqualTo(2); // 0 (warm-up) and 9 (not in the trace)
    assertThat(r.path("metrics").fieldNames()).toIterable().containsExactly("e2e", "itl", "ttft");

    // TTFT: real 10000, 20000, 40000; simulated 10500, 17500, 39500 plus the header's RTT of 500 us
    JsonNode ttft = r.path("metrics").path("ttft");
    assertThat(ttft.path("count").asInt()).isEqualTo(3);
    JsonNode w = ttft.path("workload_level");
    close(w, "real_mean", 70_000 / 3.0);
    close(w, "sim_mean", 23_000);
    close(w, "mean_error", 23_000 - 70_000 / 3.0);
    close(w, "mean_percent_error", (70_000 / 3.0 - 23_000) / (70_000 / 3.0));
    close(w, "real_median", 20_000);
    close(w, "sim_median", 18_000);
    close(w, "median_error", -2_000);
    close(w, "median_percent_error", 0.1);
    close(w, "real_p90", 36_000); // rank 0.9 * 2 = 1.8: 20000 + 0.8 * 20000
    close(w, "sim_p90", 35_600); // 18000 + 0.8 * 22000
    close(w, "p90_error", -400);
    close(w, "p90_percent_error", 400 / 36_000.0);
    close(w, "real_p95", 38_000);
    close(w, "sim_p95", 37_800);
    close(w, "real_p99", 39_600);
    close(w, "sim_p99", 39_560);
    JsonNode q = ttft.path("request_level");
    close(q, "mape", (0.1 + 0.1 + 0) / 3);
    close(q, "pearson_r", 0.9949968416580751);
    assertThat(q.path("bias_direction").asText()).isEqualTo("under-predict");
    assertThat(q.path("quality").asText()).isEqualTo("excellent");

    // E2E: real 60000, 80000, 120000; simulated 59000, 82000, 118000 plus 500
    JsonNode e2e = r.path("metrics").path("e2e");
    close(e2e.path("workload_level"), "real_mean", 260_000 / 3.0);
    close(e2e.path("workload_level"), "sim_mean", 260_500 / 3.0);
    close(e2e.path("workload_level"), "sim_p50", 82_500);
    close(e2e.path("request_level"), "mape", (500 / 60_000.0 + 2_500 / 80_000.0 + 1_500 / 120_000.0) / 3);
    assertThat(e2e.path("request_level").path("bias_direction").asText()).isEqualTo("over-predict");

    // ITL: real means of the chunk gaps 1500 (1), 2000 (2); simulated (E2E - TTFT) / (output - 1), no RTT
    JsonNode itl = r.path("metrics").path("itl");
    assertThat(itl.path("count").asInt()).isEqualTo(2);
    close(itl.path("workload_level"), "real_mean", 1_750);
    close(itl.path("workload_level"), "sim_mean", ((59_000 - 10_500) / 10.0 + (82_000 - 17_500) / 20.0) / 2);
    close(itl.path("request_level"), "mape", ((4_850 - 1_500) / 1_500.0 + (3_225 - 2_000) / 2_000.0) / 2);
    close(itl.path("request_level"), "pearson_r", 0); // fewer than 3 pairs
    assertThat(itl.path("request_level").path("quality").asText()).isEqualTo("poor");

    JsonNode hit = r.path("hit_rate");
    close(hit, "real_hit_rate", 0.7);
    close(hit, "sim_hit_rate", 0.68);
    close(hit, "abs_error_pp", 2);
    close(hit, "tolerance_pp", 5);
    assertThat(hit.path("within").asBoolean()).isTrue();
    assertThat(hit.path("source").asText()).isEqualTo("tiered");
    close(r.path("ttft_tolerance"), "mape", 0.2 / 3);
    close(r.path("ttft_tolerance"), "threshold", 0.15);
    assertThat(r.path("ttft_tolerance").path("within").asBoolean()).isTrue();
    assertThat(r.path("config_match").isObject()).isTrue();
    assertThat(r.path("known_limitations").size()).isEqualTo(4);

    // --warmup-requests 0 and --network-rtt-us 0 override the header: request 0 is compared, no RTT added
    Path report2 = dir.resolve("c2.json");
    BlisCliTest.Outcome o2 = blis("calibrate", "--trace-header", t[0].toString(), "--trace-data", t[1].toString(),
        "--sim-results", goSimResults().toString(), "--warmup-requests", "0", "--network-rtt-us", "0",
        "--report", report2.toString());
    assertThat(o2.code()).as(o2.err()).isZero();
    JsonNode r2 = JSON.readTree(report2.toFile());
    assertThat(r2.path("trace_info").path("matched_pairs").asInt()).isEqualTo(4);
    assertThat(r2.path("trace_info").path("warm_up_excluded").asInt()).isZero();
    assertThat(r2.path("trace_info").has("itl_dropped")).isFalse();
    assertThat(r2.path("metrics").fieldNames()).toIterable().containsExactly("e2e", "ttft");
    close(r2.path("metrics").path("ttft").path("workload_level"), "sim_mean", (4_000 + 10_500 + 17_500 + 39_500) / 4.0);
    // the header's observed hit rate, compared with --sim-results' (a Go array has none): skipped with a note
    assertThat(r2.has("hit_rate")).isFalse();
    assertThat(o2.err()).contains("the hit-rate comparison is skipped");
    // with a bandwidth, 4 bytes a token: 100 Mbps is 0.32 us a token
    Path report3 = dir.resolve("c3.json");
    assertThat(blis("calibrate", "--trace-header", t[0].toString(), "--trace-data", t[1].toString(),
        "--sim-results", goSimResults().toString(), "--network-rtt-us", "0", "--network-bandwidth-mbps", "100",
        "--report", report3.toString()).code()).isZero();
    JsonNode r3 = JSON.readTree(report3.toFile());
    close(r3.path("metrics").path("ttft").path("workload_level"), "sim_mean", (10_500 + 17_500 + 39_500 + 0.32 * 600) / 3);
    close(r3.path("metrics").path("e2e").path("workload_level"), "sim_mean",
        (59_000 + 82_000 + 118_000 + 0.32 * (600 + 62)) / 3);
  }

  @Test
  void replayThenCalibrateAsGoBlisWritesThemComparesTheReplaysRecords() throws Exception {
    Path[] t = observed();
    Path results = dir.resolve("results.json");
    // Go BLIS's pipeline as written: replay --results-path, then calibrate --sim-results
    BlisCliTest.Outcome replay = blis("replay", "--trace-header", t[0].toString(), "--trace-data", t[1].toString(),
        "--results-path", results.toString());
    assertThat(replay.code()).as(replay.err()).isZero();
    JsonNode result = JSON.readTree(results.toFile());
    assertThat(result.path("requests").size()).isEqualTo(6);
    Map<Long, double[]> sim = new HashMap<>();
    for (JsonNode q : result.path("requests")) {
      assertThat(q.path("outcome").asText()).isEqualTo("completed");
      sim.put(q.path("id").asLong(), new double[] {Math.round(q.path("ttft_ms").asDouble() * 1000),
          Math.round(q.path("e2e_ms").asDouble() * 1000), q.path("output_tokens").asInt()});
    }
    Path report = dir.resolve("calibration.json");
    BlisCliTest.Outcome o = blis("calibrate", "--trace-header", t[0].toString(), "--trace-data", t[1].toString(),
        "--sim-results", results.toString(), "--itl-data", itl().toString(), "--report", report.toString());
    assertThat(o.code()).as(o.err()).isZero();
    JsonNode r = JSON.readTree(report.toFile());
    // requests 1, 2, 3 compared; 4 was simulated but has no observed chunk; 5 was simulated too
    assertThat(r.path("trace_info").path("matched_pairs").asInt()).isEqualTo(4);
    assertThat(r.path("trace_info").path("unmatched_real").asInt()).isEqualTo(1);
    assertThat(r.path("trace_info").path("unmatched_sim").asInt()).isEqualTo(1); // the warm-up request
    assertThat(r.path("trace_info").path("token_mismatches").asInt()).isZero();
    long[] ids = {1, 2, 3, 5};
    double[] realTtft = {10_000, 20_000, 40_000, 1_000};
    double[] realE2e = {60_000, 80_000, 120_000, 2_000};
    List<Double> simTtft = new ArrayList<>();
    double mape = 0;
    double e2eSim = 0;
    for (int i = 0; i < ids.length; i++) {
      double s = sim.get(ids[i])[0] + 500; // the header's RTT
      simTtft.add(s);
      mape += Math.abs(realTtft[i] - s) / realTtft[i] / ids.length;
      e2eSim += (sim.get(ids[i])[1] + 500) / ids.length;
    }
    JsonNode ttft = r.path("metrics").path("ttft");
    close(ttft.path("workload_level"), "sim_mean", simTtft.stream().mapToDouble(d -> d).sum() / 4);
    close(ttft.path("workload_level"), "real_mean", 71_000 / 4.0);
    close(ttft.path("request_level"), "mape", mape);
    close(r.path("metrics").path("e2e").path("workload_level"), "sim_mean", e2eSim);
    close(r.path("metrics").path("e2e").path("workload_level"), "real_mean", 262_000 / 4.0);
    // ITL: the simulated one from the replay's TTFT and E2E
    double itl1 = (sim.get(1L)[1] - sim.get(1L)[0]) / (sim.get(1L)[2] - 1);
    double itl2 = (sim.get(2L)[1] - sim.get(2L)[0]) / (sim.get(2L)[2] - 1);
    close(r.path("metrics").path("itl").path("workload_level"), "sim_mean", (itl1 + itl2) / 2);
    // the replay's own hit rate (engine.kv_token_hit_rate) against the header's observed 0.7
    close(r.path("hit_rate"), "sim_hit_rate", result.path("engine").path("kv_token_hit_rate").asDouble());
    close(r.path("hit_rate"), "real_hit_rate", 0.7);

    // a replay without per-request records cannot be compared: one line says which flag adds them
    Path bare = write("bare.json", blis("replay", "--trace-header", t[0].toString(), "--trace-data",
        t[1].toString()).out());
    BlisCliTest.Outcome bad = blis("calibrate", "--trace-header", t[0].toString(), "--trace-data", t[1].toString(),
        "--sim-results", bare.toString(), "--report", report.toString());
    assertThat(bad.code()).isEqualTo(2);
    assertThat(bad.err().lines()).singleElement().asString().contains("has no per-request records")
        .contains("--per-request");
    // only requests completed in the simulation count
    ObjectNode edited = (ObjectNode) result.deepCopy();
    ArrayNode reqs = (ArrayNode) edited.path("requests");
    ((ObjectNode) reqs.get(0)).put("outcome", "timed_out");
    Path partial = write("partial.json", edited.toString());
    Path report2 = dir.resolve("c2.json");
    assertThat(blis("calibrate", "--trace-header", t[0].toString(), "--trace-data", t[1].toString(),
        "--sim-results", partial.toString(), "--report", report2.toString()).code()).isZero();
    assertThat(JSON.readTree(report2.toFile()).path("trace_info").path("unmatched_real").asInt())
        .isEqualTo(reqs.get(0).path("id").asLong() == 0 ? 1 : 2);
  }

  @Test
  void theKvOffloadLineComparesTheHitRateOfReplaysMetricsPath() throws Exception {
    Path[] t = observed();
    Path sim = dir.resolve("sim.json");
    Path agg = dir.resolve("simagg.json");
    // docs/guide/kv-cache.md's offload.yaml: a CPU tier with an NVMe drive behind it
    Path offload = Path.of(CalibrateTraceCommandTest.class.getResource("goblis/offload.yaml").toURI());
    BlisCliTest.Outcome replay = blis("replay", "--trace-header", t[0].toString(), "--trace-data", t[1].toString(),
        "--kv-offload-config", offload.toString(), "--results-path", sim.toString(), "--metrics-path", agg.toString());
    assertThat(replay.code()).as(replay.err()).isZero();
    Path report = dir.resolve("calibration.json");
    // docs/guide/kv-offload-calibration.md's line
    BlisCliTest.Outcome o = blis("calibrate", "--trace-header", t[0].toString(), "--trace-data", t[1].toString(),
        "--sim-results", sim.toString(), "--sim-metrics", agg.toString(), "--hit-rate-tolerance-pp", "5",
        "--ttft-mape-threshold", "0.15", "--report", report.toString());
    assertThat(o.code()).as(o.err()).isZero();
    JsonNode r = JSON.readTree(report.toFile());
    double simRate = JSON.readTree(agg.toFile()).path("cache_hit_rate").asDouble();
    close(r.path("hit_rate"), "sim_hit_rate", simRate);
    close(r.path("hit_rate"), "abs_error_pp", Math.abs(simRate - 0.7) * 100);
    assertThat(r.path("hit_rate").path("within").asBoolean()).isEqualTo(Math.abs(simRate - 0.7) * 100 <= 5);
    assertThat(o.out()).contains("KV hit rate (source=tiered)");
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "|Missing required option: '--experiments=FILE' (to fit coefficients; or Go BLIS's --trace-header",
      "--itl-data x|--itl-data applies only to comparing an observed trace with its replay",
      "--trace-header H --trace-data D|--sim-results is required with --trace-header/--trace-data",
      "--trace-header H --trace-data D --sim-results S|--report is required with --trace-header",
      "--sim-results S --report R|--trace-header and --trace-data are required with --sim-results",
      "--trace-header H --trace-data D --sim-results S --report R --experiments E|give --experiments (fit"
          + " coefficients) or --trace-header/--trace-data/--sim-results (compare an observed trace with its replay),"
          + " not both",
      "--trace-header H --trace-data D --sim-results S --report R --budget 2|--budget applies only to fitting",
      "--trace-header H --trace-data D --sim-results S --report R --network-rtt-us -2|--network-rtt-us must be >= 0",
      "--trace-header H --trace-data D --sim-results S --report R --warmup-requests -3|--warmup-requests must be >= 0",
      "--trace-header H --trace-data D --sim-results S --report R --hit-rate-tolerance-pp -1|--hit-rate-tolerance-pp"
          + " must be a finite number >= 0",
      "--trace-header H --trace-data D --sim-results S --report R --ttft-mape-threshold NaN|--ttft-mape-threshold"
          + " must be a finite number >= 0",
      "--trace-header H --trace-data D --sim-results S --report R --network-bandwidth-mbps -1|--network-bandwidth-mbps"
          + " must be a finite number >= 0",
      "--trace-header H --trace-data D --sim-results S --report R --slo-ttft critical=100ms|--slo-ttft: Go BLIS's"
          + " goodput comparison in calibrate is not available here",
      "--adapter-reference x --sim-metrics S --report R|--adapter-reference: Go BLIS's comparison with its Digital"
          + " Twin",
      "--trace-header H --trace-data D --sim-results NONE --report R|--sim-results: no such file",
      "--trace-header H --trace-data D --sim-results EMPTY --report R|no sim results (an empty array)",
      "--trace-header H --trace-data D --sim-results OTHER --report R|no request id of",
      "--trace-header H --trace-data D --sim-results AGG --report R|an aggregate result (--output-format go-blis)",
      "--trace-header H --trace-data D --sim-results S --report R --itl-data BADITL|expected the ITL columns"})
  void badCombinationsGiveOneLine(String args, String message) throws Exception {
    Path[] t = observed();
    Map<String, String> files = Map.of("H", t[0].toString(), "D", t[1].toString(), "S", goSimResults().toString(),
        "R", dir.resolve("r.json").toString(), "E", dir.resolve("e.json").toString(), "NONE",
        dir.resolve("none.json").toString(), "EMPTY", write("empty.json", "[]").toString(), "OTHER",
        write("other.json", "[{\"request_id\": 77, \"ttft_us\": 1, \"e2e_us\": 2, \"input_tokens\": 1,"
            + " \"output_tokens\": 1}]").toString(), "AGG",
        write("agg.json", "{\"completed_requests\": 3, \"cache_hit_rate\": 0.5}").toString(), "BADITL",
        write("bad.itl.csv", "request_id,timestamp_us\n1,2\n").toString());
    List<String> argv = new ArrayList<>(List.of("calibrate"));
    if (args != null) {
      for (String a : args.split(" ")) {
        argv.add(files.getOrDefault(a, a));
      }
    }
    BlisCliTest.Outcome o = blis(argv.toArray(String[]::new));
    assertThat(o.code()).as(o.out()).isEqualTo(2);
    assertThat(o.err().lines()).as(o.err()).singleElement().asString().contains(message);
    assertThat(o.out()).isEmpty();
    assertThat(dir.resolve("r.json")).doesNotExist();
  }

  @Test
  void theHeaderAloneFindsItsDataAndTheHelpNamesBothModes() throws Exception {
    Path[] t = observed();
    Path report = dir.resolve("c.json");
    BlisCliTest.Outcome o = blis("calibrate", "--trace-header", t[0].toString(), "--sim-results",
        goSimResults().toString(), "--report", report.toString());
    assertThat(o.code()).as(o.err()).isZero();
    assertThat(JSON.readTree(report.toFile()).path("trace_info").path("matched_pairs").asInt()).isEqualTo(3);
    String help = blis("calibrate", "--help").out();
    assertThat(help).contains("--experiments", "--trace-header", "--sim-results", "--itl-data", "--report")
        .doesNotContain("--slo-ttft");
  }
}
