package io.blis.engine.result;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/**
 * A result in the flat form Go BLIS prints ({@code --output-format go-blis}), so that scripts that
 * read Go BLIS's keys keep working: {@code completed_requests}, {@code responses_per_sec}, {@code
 * tokens_per_sec} (output tokens per simulated second), {@code e2e_mean_ms}, {@code e2e_p90_ms},
 * ..., {@code ttft_*_ms}, {@code itl_*_ms}, {@code scheduling_delay_p99_ms}, {@code
 * vllm_estimated_duration_s} (the simulated duration), and, as Go BLIS, the wall-clock {@code
 * simulation_duration_s}, {@code sim_start_timestamp} and {@code sim_end_timestamp} (UTC). Those
 * three are the only fields that differ from one run to the next; the rest is deterministic.
 */
public final class GoBlisResult {

  private static final ObjectMapper JSON = new ObjectMapper();
  /** Go's indented JSON: two spaces, {@code "key": value}. */
  private static final com.fasterxml.jackson.databind.ObjectWriter WRITER = JSON.writer(
      new com.fasterxml.jackson.core.util.DefaultPrettyPrinter().withSeparators(
          com.fasterxml.jackson.core.util.Separators.createDefaultInstance()
              .withObjectFieldValueSpacing(com.fasterxml.jackson.core.util.Separators.Spacing.AFTER)));
  private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss").withZone(ZoneOffset.UTC);

  private GoBlisResult() {}

  /**
   * The result as Go BLIS's JSON.
   *
   * @param started when the simulation started (wall clock)
   * @param ended when it ended
   */
  /** Rejections by the admission policies (the reasons of {@code io.blis.engine.policy.Admissions}). */
  private static final java.util.Set<String> ADMISSION_REASONS = java.util.Set.of("token_bucket_exhausted",
      "reject_all", "tier_shed", "gaie_saturated");

  /** Refusals of requests no instance can hold (Go BLIS's {@code dropped_unservable}). */
  private static final java.util.Set<String> UNSERVABLE_REASONS = java.util.Set.of("prompt_exceeds_max_model_len",
      "prompt_plus_output_exceeds_max_model_len", "exceeds_kv_cache_capacity");

  public static String toJson(SimulationResult r, Instant started, Instant ended) {
    return toJson(r, started, ended, java.util.Map.of());
  }

  /** As {@link #toJson(SimulationResult, Instant, Instant)}, with {@code extra} fields at its end, in order. */
  public static String toJson(SimulationResult r, Instant started, Instant ended,
      java.util.Map<String, com.fasterxml.jackson.databind.JsonNode> extra) {
    MetricsSummary o = r.overall();
    double simS = r.simulatedDurationUs() / 1e6;
    ObjectNode n = JSON.createObjectNode();
    n.put("instance_id", "cluster");
    n.put("sim_start_timestamp", STAMP.format(started));
    n.put("sim_end_timestamp", STAMP.format(ended));
    counts(n, o);
    n.put("timed_out_requests", o.timedOutRequests());
    n.put("rejected_requests", o.rejectedRequests());
    n.put("total_input_tokens", o.inputTokens());
    n.put("total_output_tokens", o.outputTokens());
    n.put("vllm_estimated_duration_s", round(simS));
    n.put("simulation_duration_s", round((ended.toEpochMilli() - started.toEpochMilli()) / 1000.0));
    rates(n, o, simS);
    n.put("preemption_count", r.engine().preemptions());
    n.put("dropped_unservable", unservable(o));
    n.put("length_capped_requests", 0); // a request over max_model_len is refused here, never cut short
    n.put("cache_hit_rate", round(r.engine().tokenHitRate()));
    extra.forEach(n::set);
    return text(n);
  }

  /**
   * Go BLIS's object for one instance ({@code instance_N}), which it prints before the cluster's
   * when there are several. Its duration is the instance's span, from its first request's arrival
   * to its last end (Go BLIS's runs from time 0); its inter-token latencies are there only when the
   * simulation kept them per instance ({@code Simulation.Builder#breakdownInterTokenSamples}).
   */
  public static String instanceJson(InstanceResult ir) {
    MetricsSummary o = ir.metrics();
    double simS = o.durationUs() / 1e6;
    ObjectNode n = JSON.createObjectNode();
    n.put("instance_id", "instance_" + ir.index());
    counts(n, o);
    n.put("total_input_tokens", o.inputTokens());
    n.put("total_output_tokens", o.outputTokens());
    n.put("vllm_estimated_duration_s", round(simS));
    rates(n, o, simS);
    n.put("preemption_count", ir.preemptions());
    n.put("dropped_unservable", unservable(o));
    n.put("length_capped_requests", 0);
    n.put("timed_out_requests", o.timedOutRequests());
    return text(n);
  }

  /** Requests the admission policies refused (Go BLIS never counts them as injected). */
  public static long admissionRefusals(MetricsSummary o) {
    return sum(o, ADMISSION_REASONS);
  }

  /** Requests refused at routing: no instance serves the model or adapter they name (Go BLIS's routing rejections). */
  public static long routingRefusals(MetricsSummary o) {
    return sum(o, ROUTING_REASONS);
  }

  private static final java.util.Set<String> ROUTING_REASONS = java.util.Set.of("model_not_served",
      "adapter_not_served");

  /** Requests no instance could hold (Go BLIS's {@code dropped_unservable}). */
  public static long unservable(MetricsSummary o) {
    return sum(o, UNSERVABLE_REASONS);
  }

  private static long sum(MetricsSummary o, java.util.Set<String> reasons) {
    long n = 0;
    for (java.util.Map.Entry<String, Long> e : o.rejectedByReason().entrySet()) {
      n += reasons.contains(e.getKey()) ? e.getValue() : 0;
    }
    return n;
  }

  private static void counts(ObjectNode n, MetricsSummary o) {
    n.put("completed_requests", o.completedRequests());
    n.put("still_queued", o.stillQueued());
    n.put("still_running", o.stillRunning());
    // Go BLIS counts a request as injected once admitted: its admission rejections never enter
    n.put("injected_requests", o.injectedRequests() - admissionRefusals(o));
  }

  private static void rates(ObjectNode n, MetricsSummary o, double simS) {
    n.put("responses_per_sec", round(simS > 0 ? o.completedRequests() / simS : 0));
    n.put("tokens_per_sec", round(simS > 0 ? o.outputTokens() / simS : 0));
    latencies(n, "e2e", o.e2e());
    latencies(n, "ttft", o.ttft());
    latencies(n, "itl", o.itl());
    ms(n, "scheduling_delay_p99_ms", o.schedulingDelay().p99Us());
  }

  private static String text(ObjectNode n) {
    try {
      return WRITER.writeValueAsString(n) + "\n";
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  private static void latencies(ObjectNode n, String metric, Distribution d) {
    ms(n, metric + "_mean_ms", d.meanUs());
    ms(n, metric + "_p90_ms", d.p90Us());
    ms(n, metric + "_p95_ms", d.p95Us());
    ms(n, metric + "_p99_ms", d.p99Us());
  }

  private static void ms(ObjectNode n, String key, double us) {
    if (Double.isFinite(us)) {
      n.put(key, round(us / 1000));
    } else {
      n.put(key, 0); // Go BLIS writes 0 for a metric without samples
    }
  }

  private static BigDecimal round(double v) {
    return BigDecimal.valueOf(v).setScale(6, RoundingMode.HALF_EVEN).stripTrailingZeros();
  }
}
