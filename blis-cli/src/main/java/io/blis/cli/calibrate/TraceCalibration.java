package io.blis.cli.calibrate;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.blis.cli.calibrate.SimResults.SimResult;
import io.blis.workload.trace.TraceV2Reader.ItlChunk;
import io.blis.workload.trace.TraceV2Reader.RecordedRow;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Go BLIS's {@code blis calibrate} comparison: the latencies a real server showed (a TraceV2 pair
 * from {@code observe}) against a simulation of the same trace ({@code replay}), request by request
 * (matched by request id), and the calibration report JSON with Go BLIS's structure and key names.
 *
 * <p>Per matched request: real TTFT = first_chunk_time_us - send_time_us, real E2E =
 * last_chunk_time_us - send_time_us; simulated TTFT and E2E are the simulation's plus the network
 * the real client saw (the RTT, and with a bandwidth the upload of 4 bytes per prompt token, and for
 * E2E the download of 4 bytes per output token). With ITL chunks, real ITL is the mean of a
 * request's non-negative chunk-to-chunk gaps and simulated ITL is (E2E - TTFT) / (output tokens -
 * 1) of the simulation alone. Requests with an id below the warm-up count are left out.
 *
 * <p>Each metric gets workload-level statistics (means, medians and p50/p90/p95/p99 by linear
 * interpolation between closest ranks, errors sim - real and their absolute relative size) and
 * request-level ones (MAPE over requests with a non-zero real value, Pearson r from 3 requests,
 * bias direction from the summed signed errors, a quality rating).
 */
public final class TraceCalibration {

  /**
   * How the sides are put on the same footing.
   *
   * @param warmUpRequests requests with an id below this are left out
   * @param networkRttUs added to each simulated latency (the client's round trip)
   * @param bandwidthMbps client link bandwidth for upload/download delays; 0 = none
   */
  public record Config(int warmUpRequests, long networkRttUs, double bandwidthMbps) {}

  /** Real and simulated values of one metric, request by request. */
  record Vectors(double[] real, double[] sim) {}

  private final Map<String, Vectors> metrics = new LinkedHashMap<>();
  private int matched;
  private int warmUpExcluded;
  private int unmatchedReal;
  private int untimed;
  private int unmatchedSim;
  private int tokenMismatches;
  private int itlDropped;
  private int itlPairs;

  private TraceCalibration() {}

  /**
   * Matches {@code rows} (the observed trace) with {@code sims} (the completed simulated requests)
   * by request id and builds the comparison; {@code itl} may be null (no ITL metric).
   */
  public static TraceCalibration compare(List<RecordedRow> rows, List<SimResult> sims, List<ItlChunk> itl,
      Config config) {
    TraceCalibration c = new TraceCalibration();
    Map<Long, SimResult> simById = new HashMap<>();
    for (SimResult s : sims) {
      simById.put(s.requestId(), s);
    }
    Map<Long, List<ItlChunk>> chunks = new HashMap<>();
    if (itl != null) {
      for (ItlChunk ch : itl) {
        chunks.computeIfAbsent(ch.requestId(), k -> new ArrayList<>()).add(ch);
      }
    }
    Set<Long> used = new HashSet<>();
    List<double[]> ttft = new ArrayList<>();
    List<double[]> e2e = new ArrayList<>();
    List<double[]> itls = new ArrayList<>();
    for (RecordedRow r : rows) {
      if (r.requestId() < config.warmUpRequests()) {
        c.warmUpExcluded++;
        continue;
      }
      SimResult s = simById.get(r.requestId());
      if (s == null) {
        c.unmatchedReal++;
        continue;
      }
      used.add(r.requestId());
      if (!r.timed()) {
        c.unmatchedReal++; // as in Go BLIS, a row without usable times is left out as unmatched
        c.untimed++;
        continue;
      }
      c.matched++;
      if (r.promptTokens() != s.inputTokens() || r.outputTokens() != s.outputTokens()) {
        c.tokenMismatches++;
      }
      double network = config.networkRttUs() + upload(config.bandwidthMbps(), s.inputTokens());
      ttft.add(new double[] {r.ttftUs(), s.ttftUs() + network});
      e2e.add(new double[] {r.e2eUs(), s.e2eUs() + network + upload(config.bandwidthMbps(), s.outputTokens())});
      List<ItlChunk> cs = chunks.get(r.requestId());
      if (cs == null || cs.size() < 2) {
        continue;
      }
      cs.sort(Comparator.comparingInt(ItlChunk::chunkIndex));
      double sum = 0;
      int n = 0;
      for (int i = 1; i < cs.size(); i++) {
        long gap = cs.get(i).timestampUs() - cs.get(i - 1).timestampUs();
        if (gap >= 0) {
          sum += gap;
          n++;
        }
      }
      if (n == 0) {
        c.itlDropped++; // every gap negative: clock skew
        continue;
      }
      double simItl = s.outputTokens() > 1 ? (s.e2eUs() - s.ttftUs()) / (s.outputTokens() - 1) : 0;
      itls.add(new double[] {sum / n, simItl});
    }
    for (SimResult s : sims) {
      if (!used.contains(s.requestId())) {
        c.unmatchedSim++;
      }
    }
    c.itlPairs = itls.size();
    // Go BLIS writes the metrics map with its keys sorted
    if (!e2e.isEmpty()) {
      c.metrics.put("e2e", vectors(e2e));
    }
    if (!itls.isEmpty()) {
      c.metrics.put("itl", vectors(itls));
    }
    if (!ttft.isEmpty()) {
      c.metrics.put("ttft", vectors(ttft));
    }
    return c;
  }

  /** Delay in microseconds of sending {@code tokens} token ids (4 bytes each) over {@code mbps}. */
  static double upload(double mbps, int tokens) {
    return mbps <= 0 ? 0 : tokens * 4.0 * 8 / (mbps * 1e6) * 1e6;
  }

  private static Vectors vectors(List<double[]> pairs) {
    double[] real = new double[pairs.size()];
    double[] sim = new double[pairs.size()];
    for (int i = 0; i < real.length; i++) {
      real[i] = pairs.get(i)[0];
      sim[i] = pairs.get(i)[1];
    }
    return new Vectors(real, sim);
  }

  /** Pairs compared (trace rows matched to a completed simulated request, with usable times). */
  public int matched() {
    return matched;
  }

  /** Rows whose id matched a simulated request but whose times are unusable (no chunk, or before the send). */
  public int untimed() {
    return untimed;
  }

  /** Rows (after warm-up) without a completed simulated request, or without usable times. */
  public int unmatchedReal() {
    return unmatchedReal;
  }

  /** Completed simulated requests no compared row matched. */
  public int unmatchedSim() {
    return unmatchedSim;
  }

  /** Rows left out as warm-up. */
  public int warmUpExcluded() {
    return warmUpExcluded;
  }

  /** Requests with ITL chunks compared. */
  public int itlPairs() {
    return itlPairs;
  }

  /** The metrics compared, by Go BLIS's key (e2e, itl, ttft). */
  public Set<String> metricNames() {
    return metrics.keySet();
  }

  /** The statistics of one metric, or null when it was not compared. */
  public Stats stats(String metric) {
    Vectors v = metrics.get(metric);
    return v == null ? null : Stats.of(v.real(), v.sim());
  }

  /**
   * Workload- and request-level statistics of one metric (microseconds; fractions for relative
   * errors), Go BLIS's {@code MetricComparison}.
   */
  public record Stats(int count, double realMean, double simMean, double realP50, double simP50, double realP90,
      double simP90, double realP95, double simP95, double realP99, double simP99, double mape, double pearsonR,
      String biasDirection, String quality) {

    static Stats of(double[] real, double[] sim) {
      int n = real.length;
      double rs = 0;
      double ss = 0;
      for (int i = 0; i < n; i++) {
        rs += real[i];
        ss += sim[i];
      }
      double[] r = real.clone();
      double[] s = sim.clone();
      Arrays.sort(r);
      Arrays.sort(s);
      double mapeSum = 0;
      int mapeCount = 0;
      double bias = 0;
      for (int i = 0; i < n; i++) {
        if (real[i] == 0) {
          continue;
        }
        mapeSum += Math.abs(real[i] - sim[i]) / real[i];
        mapeCount++;
        bias += sim[i] - real[i];
      }
      double mape = mapeCount > 0 ? mapeSum / mapeCount : 0;
      String direction = mapeCount == 0 ? "" : bias > 0 ? "over-predict" : bias < 0 ? "under-predict" : "neutral";
      double pearson = n >= 3 ? pearson(real, sim) : 0;
      return new Stats(n, rs / n, ss / n, percentile(r, 50), percentile(s, 50), percentile(r, 90), percentile(s, 90),
          percentile(r, 95), percentile(s, 95), percentile(r, 99), percentile(s, 99), mape, pearson, direction,
          quality(mape, pearson));
    }

    /** Linear interpolation between the closest ranks: rank = p/100 * (n - 1). */
    static double percentile(double[] sorted, double p) {
      if (sorted.length == 1) {
        return sorted[0];
      }
      double rank = p / 100 * (sorted.length - 1);
      int lo = (int) Math.floor(rank);
      int hi = (int) Math.ceil(rank);
      return lo == hi ? sorted[lo] : sorted[lo] + (rank - lo) * (sorted[hi] - sorted[lo]);
    }

    static double pearson(double[] x, double[] y) {
      double n = x.length;
      double sx = 0;
      double sy = 0;
      double sxy = 0;
      double sx2 = 0;
      double sy2 = 0;
      for (int i = 0; i < x.length; i++) {
        sx += x[i];
        sy += y[i];
        sxy += x[i] * y[i];
        sx2 += x[i] * x[i];
        sy2 += y[i] * y[i];
      }
      double den = Math.sqrt((n * sx2 - sx * sx) * (n * sy2 - sy * sy));
      return den == 0 || Double.isNaN(den) ? 0 : (n * sxy - sx * sy) / den;
    }

    /** Go BLIS's rating: excellent, good, fair or poor by MAPE and Pearson r. */
    static String quality(double mape, double r) {
      if (mape < 0.10 && r > 0.95) {
        return "excellent";
      }
      if (mape < 0.20 && r > 0.85) {
        return "good";
      }
      if (mape < 0.35 && r > 0.70) {
        return "fair";
      }
      return "poor";
    }

    /** sim - real of the means. */
    public double meanError() {
      return simMean - realMean;
    }

    private static double relative(double error, double real) {
      return real > 0 ? Math.abs(error) / real : 0;
    }

    ObjectNode toJson(ObjectMapper json) {
      ObjectNode m = json.createObjectNode();
      ObjectNode w = m.putObject("workload_level");
      w.put("real_mean", realMean);
      w.put("sim_mean", simMean);
      w.put("mean_error", meanError());
      w.put("mean_percent_error", relative(meanError(), realMean));
      w.put("real_median", realP50);
      w.put("sim_median", simP50);
      w.put("median_error", simP50 - realP50);
      w.put("median_percent_error", relative(simP50 - realP50, realP50));
      double[][] ps = {{50, realP50, simP50}, {90, realP90, simP90}, {95, realP95, simP95}, {99, realP99, simP99}};
      for (double[] p : ps) {
        String k = "p" + (int) p[0];
        w.put("real_" + k, p[1]);
        w.put("sim_" + k, p[2]);
        w.put(k + "_error", p[2] - p[1]);
        w.put(k + "_percent_error", relative(p[2] - p[1], p[1]));
      }
      ObjectNode r = m.putObject("request_level");
      r.put("mape", mape);
      r.put("pearson_r", pearsonR);
      r.put("bias_direction", biasDirection);
      r.put("quality", quality);
      m.put("count", count);
      return m;
    }
  }

  /** What the report says about this simulator's known gaps to a real server. */
  static final List<String> KNOWN_LIMITATIONS = List.of(
      "The simulator advances in whole engine steps (vLLM's continuous batching, one step at a time); real step"
          + " times vary, so TTFT under heavy load can carry a systematic error.",
      "Prompt token ids are synthesized from the trace's lengths and prefix groups: prefix-cache hits follow the"
          + " groups, not the real prompts' contents, and can differ from the server's after evictions.",
      "Speculative decoding on the real server generates tokens in a pattern the simulation does not model.",
      "Token mismatches compare server_input_tokens (when recorded) with the simulated prompt; a few tokens of"
          + " difference from KV-block granularity or chat templates are expected, not data corruption.");

  /**
   * The calibration report: Go BLIS's {@code trace_info}, {@code metrics}, {@code config_match},
   * {@code known_limitations}, and optionally {@code hit_rate}; {@code ttft_tolerance} when TTFT was
   * compared. {@code trace_info} also carries {@code unmatched_real} and {@code unmatched_sim}.
   *
   * @param hitRate the hit-rate block, or null
   * @param ttftMapeThreshold threshold of the TTFT tolerance verdict
   */
  public String reportJson(ObjectNode hitRate, double ttftMapeThreshold) {
    ObjectMapper json = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    ObjectNode root = json.createObjectNode();
    ObjectNode info = root.putObject("trace_info");
    info.put("num_requests", matched + warmUpExcluded + unmatchedReal);
    info.put("warm_up_excluded", warmUpExcluded);
    info.put("matched_pairs", matched);
    info.put("token_mismatches", tokenMismatches);
    if (itlDropped > 0) {
      info.put("itl_dropped", itlDropped);
    }
    info.put("unmatched_real", unmatchedReal);
    info.put("unmatched_sim", unmatchedSim);
    ObjectNode ms = root.putObject("metrics");
    for (String k : metrics.keySet()) {
      ms.set(k, stats(k).toJson(json));
    }
    root.putObject("config_match");
    ArrayNode lim = root.putArray("known_limitations");
    KNOWN_LIMITATIONS.forEach(lim::add);
    if (hitRate != null) {
      root.set("hit_rate", hitRate);
    }
    Stats t = stats("ttft");
    if (t != null) {
      ObjectNode v = root.putObject("ttft_tolerance");
      v.put("mape", t.mape());
      v.put("threshold", ttftMapeThreshold);
      v.put("within", t.mape() <= ttftMapeThreshold);
    }
    try {
      return json.writeValueAsString(root) + "\n";
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * Go BLIS's hit-rate block: real (observed) and simulated KV cache hit rates, their absolute
   * difference in percentage points and whether it is within {@code tolerancePp} (inclusive, with a
   * 1e-9 allowance for rounding).
   */
  public static ObjectNode hitRate(double real, double sim, double tolerancePp, String source) {
    ObjectNode n = new ObjectMapper().createObjectNode();
    double pp = Math.abs(sim - real) * 100;
    n.put("real_hit_rate", real);
    n.put("sim_hit_rate", sim);
    n.put("abs_error_pp", pp);
    n.put("tolerance_pp", tolerancePp);
    n.put("within", pp <= tolerancePp + 1e-9);
    n.put("source", source);
    return n;
  }
}
