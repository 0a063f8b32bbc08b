package io.blis.engine.result;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
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

  private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
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
    MetricsSummary o = r.overall();
    double simS = r.simulatedDurationUs() / 1e6;
    ObjectNode n = JSON.createObjectNode();
    n.put("instance_id", "cluster");
    n.put("sim_start_timestamp", STAMP.format(started));
    n.put("sim_end_timestamp", STAMP.format(ended));
    n.put("completed_requests", o.completedRequests());
    n.put("still_queued", o.stillQueued());
    n.put("still_running", o.stillRunning());
    // Go BLIS counts a request as injected once admitted: its admission rejections never enter
    long refused = 0;
    long unservable = 0;
    for (java.util.Map.Entry<String, Long> e : o.rejectedByReason().entrySet()) {
      refused += ADMISSION_REASONS.contains(e.getKey()) ? e.getValue() : 0;
      unservable += UNSERVABLE_REASONS.contains(e.getKey()) ? e.getValue() : 0;
    }
    n.put("injected_requests", o.injectedRequests() - refused);
    n.put("timed_out_requests", o.timedOutRequests());
    n.put("rejected_requests", o.rejectedRequests());
    n.put("total_input_tokens", o.inputTokens());
    n.put("total_output_tokens", o.outputTokens());
    n.put("vllm_estimated_duration_s", round(simS));
    n.put("simulation_duration_s", round((ended.toEpochMilli() - started.toEpochMilli()) / 1000.0));
    n.put("responses_per_sec", round(simS > 0 ? o.completedRequests() / simS : 0));
    n.put("tokens_per_sec", round(simS > 0 ? o.outputTokens() / simS : 0));
    latencies(n, "e2e", o.e2e());
    latencies(n, "ttft", o.ttft());
    latencies(n, "itl", o.itl());
    ms(n, "scheduling_delay_p99_ms", o.schedulingDelay().p99Us());
    n.put("preemption_count", r.engine().preemptions());
    n.put("dropped_unservable", unservable);
    n.put("length_capped_requests", 0); // a request over max_model_len is refused here, never cut short
    n.put("cache_hit_rate", round(r.engine().tokenHitRate()));
    try {
      return JSON.writeValueAsString(n) + "\n";
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
