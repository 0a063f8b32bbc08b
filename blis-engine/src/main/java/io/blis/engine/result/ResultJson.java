package io.blis.engine.result;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.util.DefaultIndenter;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.List;
import java.util.Map;

/**
 * Writes a simulation result ({@code SimulationResult}, given as its parts) as JSON with a fixed
 * field order and number format.
 */
final class ResultJson {

  private static final JsonFactory FACTORY = new JsonFactory();

  private ResultJson() {}

  /** {@link #write(Parts, java.io.Writer, String)} to a string, with no further fields. */
  static String write(Parts result) {
    StringWriter out = new StringWriter();
    write(result, out, "");
    return out.toString();
  }

  /**
   * What a result document is written from: the parts of a {@code SimulationResult}, with its
   * fitness score or null.
   */
  record Parts(long simulatedDurationUs, MetricsSummary overall, List<MetricsSummary> stages,
      EngineStats engine, ClusterReport cluster, Fitness.Result fitness,
      List<RequestRecord> requests, GatewayReport gateway, AutoscaleReport autoscale,
      DisaggregationReport disaggregation, LoraReport lora, SessionReport sessions,
      io.blis.engine.spec.SpeculativeCounts speculative) {}

  /**
   * Streams the result to {@code out} (never whole in memory: a million per-request records or
   * routing decisions go out as they are written), with {@code tail} (further fields, rendered
   * as {@code ,\n  "name" : value}) placed before the closing brace; ends with a newline.
   */
  static void write(Parts result, java.io.Writer out, String tail) {
    try (JsonGenerator g = FACTORY.createGenerator(out).disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET)) {
      g.setPrettyPrinter(new DefaultPrettyPrinter()
          .withObjectIndenter(new DefaultIndenter("  ", "\n"))
          .withArrayIndenter(new DefaultIndenter("  ", "\n")));
      g.writeStartObject();
      g.writeFieldName("simulated_duration_s");
      number(g, result.simulatedDurationUs() / 1e6, 6);
      g.writeFieldName("overall");
      summary(g, result.overall());
      g.writeArrayFieldStart("stages");
      for (MetricsSummary s : result.stages()) {
        summary(g, s);
      }
      g.writeEndArray();
      EngineStats e = result.engine();
      g.writeObjectFieldStart("engine");
      g.writeNumberField("instances", e.instances());
      g.writeNumberField("kv_total_blocks", e.totalBlocks());
      g.writeNumberField("kv_block_size_tokens", e.blockSizeTokens());
      g.writeNumberField("kv_peak_used_blocks", e.peakUsedBlocks());
      g.writeFieldName("kv_token_hit_rate");
      number(g, e.tokenHitRate(), 6);
      g.writeFieldName("kv_block_hit_rate");
      number(g, e.blockHitRate(), 6);
      g.writeNumberField("kv_cpu_tier_blocks", e.cpuTierBlocks());
      g.writeNumberField("kv_cpu_loaded_blocks", e.cpuLoadedBlocks());
      if (e.secondaryTiers() > 0) {
        g.writeNumberField("kv_secondary_tiers", e.secondaryTiers());
        g.writeNumberField("kv_secondary_read_blocks", e.secondaryReadBlocks());
        g.writeNumberField("kv_secondary_written_blocks", e.secondaryWrittenBlocks());
        g.writeNumberField("kv_secondary_reads_refused", e.refusedSecondaryReads());
        g.writeNumberField("kv_cpu_stores_skipped", e.skippedCpuStores());
      }
      g.writeNumberField("preemption_events", e.preemptions());
      g.writeNumberField("preemption_count", e.preemptions()); // Go BLIS's name of the same count, which its docs grep
      g.writeNumberField("steps", e.steps());
      g.writeEndObject();
      cluster(g, result.cluster(), e.instances() > 1);
      if (result.gateway() != null) {
        gateway(g, result.gateway());
      }
      if (result.autoscale() != null) {
        autoscale(g, result.autoscale());
      }
      if (result.disaggregation() != null) {
        disaggregation(g, result.disaggregation());
      }
      if (result.lora() != null) {
        lora(g, result.lora());
      }
      if (result.sessions() != null) {
        sessions(g, result.sessions());
      }
      if (result.speculative() != null) {
        speculative(g, result.speculative());
      }
      if (result.fitness() != null) {
        fitness(g, result.fitness());
      }
      if (!result.requests().isEmpty()) {
        g.writeArrayFieldStart("requests");
        for (RequestRecord r : result.requests()) {
          request(g, r, e.instances() > 1);
        }
        g.writeEndArray();
      }
      if (!tail.isEmpty()) {
        g.writeRaw(tail);
      }
      g.writeEndObject();
      g.flush();
      out.write('\n');
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void cluster(JsonGenerator g, ClusterReport c, boolean manyInstances)
      throws IOException {
    if (manyInstances) {
      g.writeArrayFieldStart("instances");
      for (InstanceResult i : c.instances()) {
        g.writeStartObject();
        g.writeNumberField("index", i.index());
        if (!i.pool().isEmpty()) {
          g.writeStringField("pool", i.pool());
        }
        g.writeNumberField("steps", i.steps());
        g.writeNumberField("preemption_events", i.preemptions());
        g.writeNumberField("kv_total_blocks", i.totalKvBlocks());
        g.writeNumberField("kv_peak_used_blocks", i.peakUsedKvBlocks());
        g.writeFieldName("kv_token_hit_rate");
        number(g, i.kvTokenHitRate(), 6);
        g.writeNumberField("priority_inversions", i.priorityInversions());
        g.writeFieldName("metrics");
        summary(g, i.metrics(), false);
        g.writeEndObject();
      }
      g.writeEndArray();
    }
    summaries(g, "slo_classes", c.sloClasses());
    if (!c.models().isEmpty()) {
      summaries(g, "models", c.models());
    }
    if (!c.tenants().isEmpty()) {
      summaries(g, "tenants", c.tenants());
      g.writeFieldName("tenant_fairness_jain");
      number(g, c.tenantFairness(), 6);
    }
    Anomalies a = c.anomalies();
    g.writeObjectFieldStart("anomalies");
    g.writeNumberField("priority_inversions", a.priorityInversions());
    g.writeNumberField("hol_blocking_events", a.holBlockingEvents());
    g.writeObjectFieldStart("rejections_by_reason");
    for (Map.Entry<String, Long> e : a.rejectionsByReason().entrySet()) {
      g.writeNumberField(e.getKey(), e.getValue());
    }
    g.writeEndObject();
    g.writeEndObject();
    DecisionSummary d = c.decisionSummary();
    if (d != null) {
      g.writeObjectFieldStart("decision_summary");
      g.writeNumberField("admission_decisions", d.admissionDecisions());
      g.writeNumberField("admission_rejections", d.rejected());
      g.writeNumberField("routing_decisions", d.routingDecisions());
      g.writeNumberField("counterfactual_k", d.counterfactualK());
      if (d.counterfactualK() > 0) {
        g.writeNumberField("decisions_with_regret", d.regretDecisions());
        distribution(g, "regret_ms", d.regret());
      }
      g.writeEndObject();
      g.writeArrayFieldStart("decisions");
      for (RoutingDecision r : c.decisions()) {
        decision(g, r);
      }
      g.writeEndArray();
    }
  }

  private static void decision(JsonGenerator g, RoutingDecision r) throws IOException {
    g.writeStartObject();
    g.writeStringField("kind", r.kind());
    g.writeNumberField("request_id", r.requestId());
    g.writeFieldName("time_s");
    number(g, r.timeUs() / 1e6, 6);
    if (r.kind().equals("admission")) {
      g.writeBooleanField("admitted", r.admitted());
      if (!r.admitted()) {
        g.writeStringField("reason", r.reason());
      }
    } else {
      g.writeNumberField("chosen", r.chosen());
      g.writeArrayFieldStart("candidates");
      for (RoutingDecision.Candidate c : r.candidates()) {
        g.writeStartObject();
        g.writeNumberField("instance", c.instance());
        g.writeFieldName("score");
        number(g, c.score(), 6);
        ms(g, "estimated_wait_ms", c.estimatedWaitUs());
        g.writeEndObject();
      }
      g.writeEndArray();
      if (r.regretUs() >= 0) {
        g.writeArrayFieldStart("alternatives");
        for (int i : r.alternatives()) {
          g.writeNumber(i);
        }
        g.writeEndArray();
        ms(g, "regret_ms", r.regretUs());
      }
    }
    g.writeEndObject();
  }

  private static void gateway(JsonGenerator g, GatewayReport r) throws IOException {
    g.writeObjectFieldStart("gateway");
    g.writeStringField("flow_control", r.settings());
    counts(g, r.all());
    g.writeNumberField("max_queue_depth", r.maxDepth());
    distribution(g, "queue_wait_ms", r.waitUs());
    g.writeObjectFieldStart("slo_classes");
    for (Map.Entry<String, GatewayReport.Counts> e : r.bySloClass().entrySet()) {
      g.writeObjectFieldStart(e.getKey().isEmpty() ? "standard" : e.getKey());
      counts(g, e.getValue());
      g.writeEndObject();
    }
    g.writeEndObject();
    g.writeEndObject();
  }

  /** An object of one summary per key. */
  private static void summaries(JsonGenerator g, String name, Map<String, MetricsSummary> byKey) throws IOException {
    g.writeObjectFieldStart(name);
    for (Map.Entry<String, MetricsSummary> e : byKey.entrySet()) {
      g.writeFieldName(e.getKey());
      summary(g, e.getValue(), false);
    }
    g.writeEndObject();
  }

  private static void speculative(JsonGenerator g, io.blis.engine.spec.SpeculativeCounts c) throws IOException {
    g.writeObjectFieldStart("speculative_decoding");
    g.writeStringField("method", c.method());
    g.writeNumberField("num_speculative_tokens", c.tokens());
    g.writeNumberField("drafts", c.drafts());
    g.writeNumberField("draft_tokens", c.draftTokens());
    g.writeNumberField("accepted_tokens", c.acceptedTokens());
    g.writeFieldName("acceptance_rate");
    number(g, c.acceptanceRate(), 6);
    g.writeFieldName("mean_acceptance_length");
    number(g, c.meanAcceptanceLength(), 6);
    g.writeArrayFieldStart("position_acceptance_rates");
    for (double r : c.positionRates()) {
      number(g, r, 6);
    }
    g.writeEndArray();
    g.writeEndObject();
  }

  private static void lora(JsonGenerator g, LoraReport l) throws IOException {
    g.writeObjectFieldStart("lora");
    g.writeNumberField("max_loras", l.maxLoras());
    g.writeNumberField("max_cpu_loras", l.maxCpuLoras());
    g.writeNumberField("max_lora_rank", l.maxLoraRank());
    g.writeFieldName("reserved_gib_per_gpu");
    number(g, l.reservedBytesPerGpu() / (double) (1L << 30), 4);
    g.writeNumberField("adapters_seen", l.adapters().size());
    g.writeNumberField("gpu_loads", l.gpuLoads());
    g.writeNumberField("checkpoint_reads", l.checkpointReads());
    g.writeNumberField("gpu_evictions", l.gpuEvictions());
    g.writeNumberField("cpu_evictions", l.cpuEvictions());
    g.writeFieldName("load_time_ms");
    number(g, l.loadMs(), 3);
    g.writeFieldName("kernel_time_ms");
    number(g, l.kernelMs(), 3);
    g.writeNumberField("steps_with_adapters", l.stepsWithAdapters());
    g.writeNumberField("requests_passed_over_for_max_loras", l.passedOver());
    g.writeNumberField("peak_resident_per_instance", l.peakResident());
    g.writeObjectFieldStart("adapters");
    for (Map.Entry<String, LoraReport.Adapter> e : l.adapters().entrySet()) {
      g.writeObjectFieldStart(e.getKey());
      g.writeNumberField("gpu_loads", e.getValue().gpuLoads());
      g.writeNumberField("checkpoint_reads", e.getValue().checkpointReads());
      g.writeFieldName("metrics");
      summary(g, e.getValue().metrics(), false);
      g.writeEndObject();
    }
    g.writeEndObject();
    g.writeEndObject();
  }

  private static void disaggregation(JsonGenerator g, DisaggregationReport d) throws IOException {
    g.writeObjectFieldStart("disaggregation");
    g.writeStringField("decider", d.decider());
    g.writeStringField("transfer", d.transfer());
    g.writeNumberField("disaggregated", d.disaggregated());
    g.writeNumberField("kept_whole", d.keptWhole());
    g.writeNumberField("transferred", d.transferred());
    g.writeNumberField("waited_for_decode_room", d.waitedForDecode());
    g.writeNumberField("pending_at_end", d.pendingAtEnd());
    g.writeNumberField("peak_concurrent_transfers", d.peakConcurrentTransfers());
    g.writeFieldName("mean_concurrent_transfers");
    number(g, d.meanConcurrentTransfers(), 4);
    g.writeFieldName("transferred_gb");
    number(g, d.transferredGb(), 4);
    distribution(g, "ttft_ms", d.ttftUs());
    g.writeObjectFieldStart("ttft_phases");
    distribution(g, "prefill_queue_ms", d.prefillQueueUs());
    distribution(g, "prefill_ms", d.prefillUs());
    distribution(g, "decode_room_wait_ms", d.decodeWaitUs());
    distribution(g, "first_decode_ms", d.firstDecodeUs());
    g.writeEndObject();
    distribution(g, "transfer_ms", d.transferUs());
    g.writeArrayFieldStart("pools");
    for (DisaggregationReport.Pool p : d.pools()) {
      g.writeStartObject();
      g.writeStringField("pool", p.name());
      g.writeStringField("role", p.role());
      g.writeNumberField("instances", p.instances());
      g.writeFieldName("utilization");
      number(g, p.utilization(), 4);
      g.writeEndObject();
    }
    g.writeEndArray();
    g.writeEndObject();
  }

  private static void autoscale(JsonGenerator g, AutoscaleReport a) throws IOException {
    g.writeObjectFieldStart("autoscaling");
    autoscaleFields(g, a);
    if (!a.pools().isEmpty()) {
      g.writeObjectFieldStart("pools");
      for (java.util.Map.Entry<String, AutoscaleReport> e : a.pools().entrySet()) {
        g.writeObjectFieldStart(e.getKey());
        autoscaleFields(g, e.getValue());
        g.writeEndObject();
      }
      g.writeEndObject();
    }
    g.writeEndObject();
  }

  private static void autoscaleFields(JsonGenerator g, AutoscaleReport a) throws IOException {
    g.writeStringField("autoscaler", a.scaler());
    g.writeFieldName("node_hours");
    number(g, a.nodeHours(), 4);
    g.writeFieldName("gpu_hours");
    number(g, a.gpuHours(), 4);
    g.writeFieldName("replica_gpu_hours");
    number(g, a.replicaGpuHours(), 4);
    g.writeFieldName("cost");
    number(g, a.cost(), 2);
    g.writeNumberField("peak_replicas", a.peakReplicas());
    g.writeNumberField("peak_nodes", a.peakNodes());
    g.writeNumberField("scale_ups", a.scaleUps());
    g.writeNumberField("scale_downs", a.scaleDowns());
    g.writeNumberField("arrivals_while_short", a.arrivalsWhileShort());
    g.writeFieldName("slo_attainment");
    number(g, a.attainment(), 6);
    g.writeArrayFieldStart("hours");
    for (AutoscaleReport.Hour h : a.hours()) {
      g.writeStartObject();
      g.writeNumberField("hour", h.hour());
      g.writeNumberField("finished", h.finished());
      g.writeNumberField("completed", h.completed());
      g.writeNumberField("met_slo", h.metSlo());
      g.writeFieldName("attainment");
      number(g, h.attainment(), 6);
      g.writeEndObject();
    }
    g.writeEndArray();
    g.writeArrayFieldStart("timeline");
    for (AutoscaleReport.Sample s : a.timeline()) {
      g.writeStartObject();
      g.writeFieldName("t_s");
      number(g, s.atUs() / 1e6, 3);
      g.writeNumberField("desired", s.desired());
      g.writeNumberField("ready", s.ready());
      g.writeNumberField("starting", s.starting());
      g.writeNumberField("draining", s.draining());
      g.writeNumberField("nodes", s.nodes());
      g.writeEndObject();
    }
    g.writeEndArray();
  }

  private static void counts(JsonGenerator g, GatewayReport.Counts c) throws IOException {
    g.writeNumberField("enqueued", c.enqueued());
    g.writeNumberField("dispatched", c.dispatched());
    g.writeNumberField("rejected_queue_full", c.rejected());
    g.writeNumberField("shed", c.shed());
    g.writeNumberField("expired_ttl", c.expired());
    g.writeNumberField("timed_out", c.timedOut());
    g.writeNumberField("still_queued", c.stillQueued());
  }

  private static void fitness(JsonGenerator g, Fitness.Result f) throws IOException {
    g.writeObjectFieldStart("fitness");
    g.writeFieldName("score");
    number(g, f.score(), 6);
    g.writeObjectFieldStart("weights");
    for (Map.Entry<String, Double> e : f.weights().entrySet()) {
      g.writeFieldName(e.getKey());
      number(g, e.getValue(), 6);
    }
    g.writeEndObject();
    g.writeObjectFieldStart("normalized");
    for (Map.Entry<String, Double> e : f.normalized().entrySet()) {
      g.writeFieldName(e.getKey());
      number(g, e.getValue(), 6);
    }
    g.writeEndObject();
    g.writeEndObject();
  }

  private static void summary(JsonGenerator g, MetricsSummary s) throws IOException {
    summary(g, s, true);
  }

  private static void summary(JsonGenerator g, MetricsSummary s, boolean withItl)
      throws IOException {
    g.writeStartObject();
    if (s.stage() >= 0) {
      g.writeNumberField("stage", s.stage());
    }
    g.writeNumberField("injected_requests", s.injectedRequests());
    g.writeNumberField("completed_requests", s.completedRequests());
    g.writeNumberField("timed_out_requests", s.timedOutRequests());
    g.writeNumberField("rejected_requests", s.rejectedRequests());
    g.writeObjectFieldStart("rejected_by_reason");
    for (Map.Entry<String, Long> e : new java.util.TreeMap<>(s.rejectedByReason()).entrySet()) {
      g.writeNumberField(e.getKey(), e.getValue());
    }
    g.writeEndObject();
    g.writeNumberField("still_queued", s.stillQueued());
    g.writeNumberField("still_running", s.stillRunning());
    g.writeNumberField("total_input_tokens", s.inputTokens());
    g.writeNumberField("total_output_tokens", s.outputTokens());
    g.writeFieldName("duration_s");
    number(g, s.durationUs() / 1e6, 6);
    g.writeFieldName("requests_per_s");
    number(g, s.requestsPerS(), 6);
    g.writeFieldName("input_tokens_per_s");
    number(g, s.inputTokensPerS(), 4);
    g.writeFieldName("output_tokens_per_s");
    number(g, s.outputTokensPerS(), 4);
    distribution(g, "e2e_ms", s.e2e());
    distribution(g, "ttft_ms", s.ttft());
    if (withItl) {
      distribution(g, "itl_ms", s.itl());
    }
    distribution(g, "scheduling_delay_ms", s.schedulingDelay());
    g.writeNumberField("preemptions", s.preemptions());
    g.writeFieldName("kv_hit_rate");
    number(g, s.kvHitRate(), 6);
    g.writeNumberField("good_requests", s.goodRequests());
    g.writeFieldName("goodput_per_s");
    number(g, s.goodputPerS(), 6);
    g.writeEndObject();
  }

  private static void sessions(JsonGenerator g, SessionReport s) throws IOException {
    g.writeObjectFieldStart("sessions");
    g.writeNumberField("sessions", s.sessions());
    distribution(g, "ttft_cold_ms", s.ttftCold());
    distribution(g, "ttft_warm_ms", s.ttftWarm());
    distribution(g, "duration_ms", s.duration());
    g.writeEndObject();
  }

  private static void distribution(JsonGenerator g, String name, Distribution d)
      throws IOException {
    g.writeObjectFieldStart(name);
    g.writeNumberField("count", d.count());
    ms(g, "mean", d.meanUs());
    ms(g, "p50", d.p50Us());
    ms(g, "p90", d.p90Us());
    ms(g, "p95", d.p95Us());
    ms(g, "p99", d.p99Us());
    g.writeEndObject();
  }

  private static void ms(JsonGenerator g, String name, long us) throws IOException {
    ms(g, name, (double) us);
  }

  private static void ms(JsonGenerator g, String name, double us) throws IOException {
    g.writeFieldName(name);
    number(g, us / 1000.0, 4);
  }

  private static void request(JsonGenerator g, RequestRecord r, boolean withInstance)
      throws IOException {
    g.writeStartObject();
    g.writeNumberField("id", r.id());
    if (withInstance) {
      g.writeNumberField("instance", r.instance());
    }
    g.writeNumberField("stage", r.stage());
    g.writeFieldName("arrival_s");
    number(g, r.arrivalUs() / 1e6, 6);
    g.writeNumberField("input_tokens", r.inputTokens());
    g.writeNumberField("output_tokens", r.outputTokens());
    g.writeStringField("outcome", r.outcome().name().toLowerCase(java.util.Locale.ROOT));
    optionalMs(g, "ttft_ms", r.ttftUs());
    optionalMs(g, "e2e_ms", r.e2eUs());
    optionalMs(g, "scheduling_delay_ms", r.schedulingDelayUs());
    g.writeNumberField("preemptions", r.preemptions());
    g.writeNumberField("cached_prompt_tokens", r.cachedPromptTokens());
    if (!r.rejectReason().isEmpty()) {
      g.writeStringField("reject_reason", r.rejectReason());
    }
    g.writeEndObject();
  }

  private static void optionalMs(JsonGenerator g, String name, long us) throws IOException {
    g.writeFieldName(name);
    if (us < 0) {
      g.writeNull();
    } else {
      number(g, us / 1000.0, 3);
    }
  }

  /** Fixed decimals, exact binary-to-decimal conversion, null for NaN. */
  private static void number(JsonGenerator g, double v, int decimals) throws IOException {
    if (Double.isNaN(v) || Double.isInfinite(v)) {
      g.writeNull();
      return;
    }
    g.writeNumber(new BigDecimal(v).setScale(decimals, RoundingMode.HALF_EVEN).toPlainString());
  }
}
