package io.blis.cli.plan;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.blis.engine.result.AutoscaleReport;
import io.blis.engine.result.Distribution;
import io.blis.engine.result.MetricsSummary;
import io.blis.engine.result.SimulationResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * What one point of a day plan did: its cost and its SLO attainment, from the run's {@code
 * autoscaling} section, and the requests and latencies of the whole run. Written to and read
 * back from JSON ({@link #toJson}, {@link #fromJson}) exactly, so that a plan run again reuses it.
 *
 * @param index the point's place in the plan
 * @param label the point's label
 * @param args the {@code blis run} arguments it ran with
 * @param examplePrice whether its cost uses the bundled example price (no {@code --node-cost-per-hour})
 * @param scale the autoscaling section
 * @param requests requests that arrived
 * @param completed requests completed
 * @param rejected requests rejected
 * @param timedOut requests timed out
 * @param ttft time to first token of the completed requests
 * @param e2e end-to-end latency of the completed requests
 */
public record DayOutcome(int index, String label, List<String> args, boolean examplePrice, AutoscaleReport scale,
    long requests, long completed, long rejected, long timedOut, Distribution ttft, Distribution e2e) {

  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  public DayOutcome {
    Objects.requireNonNull(label, "label");
    args = List.copyOf(args);
    Objects.requireNonNull(scale, "scale");
    Objects.requireNonNull(ttft, "ttft");
    Objects.requireNonNull(e2e, "e2e");
  }

  /** The outcome of a point's run, which must have been autoscaled. */
  public static DayOutcome of(int index, String label, List<String> args, boolean examplePrice, SimulationResult r) {
    AutoscaleReport a = r.autoscale().orElseThrow(() -> new IllegalArgumentException(
        "point " + index + " (" + label + ") ran without an autoscaler"));
    MetricsSummary o = r.overall();
    return new DayOutcome(index, label, args, examplePrice, a, o.injectedRequests(), o.completedRequests(),
        o.rejectedRequests(), o.timedOutRequests(), o.ttft(), o.e2e());
  }

  /** Met over finished over the run; NaN when nothing finished. */
  public double attainment() {
    return scale.attainment();
  }

  /** The hour of arrival with the lowest attainment (the first of equals), or null when none finished. */
  public AutoscaleReport.Hour worstHour() {
    AutoscaleReport.Hour worst = null;
    for (AutoscaleReport.Hour h : scale.hours()) {
      if (h.finished() > 0 && (worst == null || h.attainment() < worst.attainment())) {
        worst = h;
      }
    }
    return worst;
  }

  /** The outcome as JSON, every number exact (doubles in their shortest round-tripping form). */
  public ObjectNode toJson() {
    ObjectNode o = NODES.objectNode();
    o.put("index", index);
    o.put("label", label);
    ArrayNode a = o.putArray("args");
    args.forEach(a::add);
    o.put("example_price", examplePrice);
    o.put("requests", requests);
    o.put("completed", completed);
    o.put("rejected", rejected);
    o.put("timed_out", timedOut);
    o.set("ttft_us", distribution(ttft));
    o.set("e2e_us", distribution(e2e));
    ObjectNode s = o.putObject("scale");
    s.put("scaler", scale.scaler());
    s.put("node_hours", scale.nodeHours());
    s.put("gpu_hours", scale.gpuHours());
    s.put("replica_gpu_hours", scale.replicaGpuHours());
    s.put("cost", scale.cost());
    s.put("peak_replicas", scale.peakReplicas());
    s.put("peak_nodes", scale.peakNodes());
    s.put("scale_ups", scale.scaleUps());
    s.put("scale_downs", scale.scaleDowns());
    s.put("arrivals_while_short", scale.arrivalsWhileShort());
    ArrayNode line = s.putArray("timeline");
    for (AutoscaleReport.Sample t : scale.timeline()) {
      line.addArray().add(t.atUs()).add(t.desired()).add(t.ready()).add(t.starting()).add(t.draining()).add(t.nodes());
    }
    ArrayNode hours = s.putArray("hours");
    for (AutoscaleReport.Hour h : scale.hours()) {
      hours.addArray().add(h.hour()).add(h.finished()).add(h.completed()).add(h.metSlo());
    }
    return o;
  }

  private static ObjectNode distribution(Distribution d) {
    ObjectNode n = NODES.objectNode();
    n.put("count", d.count());
    double[] v = {d.meanUs(), d.p50Us(), d.p90Us(), d.p95Us(), d.p99Us()};
    for (int i = 0; i < v.length; i++) {
      if (Double.isNaN(v[i])) {
        n.putNull(STATS[i]); // no sample
      } else {
        n.put(STATS[i], v[i]);
      }
    }
    return n;
  }

  /**
   * An outcome written by {@link #toJson}.
   *
   * @throws IllegalArgumentException when {@code n} is not such a document
   */
  public static DayOutcome fromJson(JsonNode n) {
    try {
      JsonNode s = required(n, "scale");
      List<AutoscaleReport.Sample> line = new ArrayList<>();
      for (JsonNode t : required(s, "timeline")) {
        line.add(new AutoscaleReport.Sample(t.get(0).asLong(), t.get(1).asInt(), t.get(2).asInt(), t.get(3).asInt(),
            t.get(4).asInt(), t.get(5).asInt()));
      }
      List<AutoscaleReport.Hour> hours = new ArrayList<>();
      for (JsonNode h : required(s, "hours")) {
        hours.add(new AutoscaleReport.Hour(h.get(0).asInt(), h.get(1).asLong(), h.get(2).asLong(), h.get(3).asLong()));
      }
      AutoscaleReport scale = new AutoscaleReport(required(s, "scaler").asText(), line,
          required(s, "node_hours").asDouble(), required(s, "gpu_hours").asDouble(),
          required(s, "replica_gpu_hours").asDouble(), required(s, "cost").asDouble(),
          required(s, "peak_replicas").asInt(), required(s, "peak_nodes").asInt(), required(s, "scale_ups").asLong(),
          required(s, "scale_downs").asLong(), required(s, "arrivals_while_short").asLong(), hours);
      List<String> args = new ArrayList<>();
      required(n, "args").forEach(a -> args.add(a.asText()));
      return new DayOutcome(required(n, "index").asInt(), required(n, "label").asText(), args,
          required(n, "example_price").asBoolean(), scale, required(n, "requests").asLong(),
          required(n, "completed").asLong(), required(n, "rejected").asLong(), required(n, "timed_out").asLong(),
          distribution(required(n, "ttft_us")), distribution(required(n, "e2e_us")));
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("not a day plan point's outcome: " + e.getMessage(), e);
    }
  }

  private static final String[] STATS = {"mean", "p50", "p90", "p95", "p99"};

  private static Distribution distribution(JsonNode d) {
    double[] v = new double[STATS.length];
    for (int i = 0; i < v.length; i++) {
      JsonNode x = d.get(STATS[i]);
      if (x == null) {
        throw new IllegalArgumentException("'" + STATS[i] + "' is missing");
      }
      v[i] = x.isNull() ? Double.NaN : x.asDouble();
    }
    return new Distribution(required(d, "count").asLong(), v[0], v[1], v[2], v[3], v[4]);
  }

  private static JsonNode required(JsonNode n, String key) {
    JsonNode v = n == null ? null : n.get(key);
    if (v == null || v.isNull()) {
      throw new IllegalArgumentException("'" + key + "' is missing");
    }
    return v;
  }
}
