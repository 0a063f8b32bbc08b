package io.blis.engine.result;

import java.util.List;

/**
 * The outcome of one {@link io.blis.engine.Simulation#run()}: aggregated metrics overall and per load stage,
 * engine-wide KV-cache figures and, when requested, one record per finished request.
 */
public final class SimulationResult {

  private final List<RequestRecord> requests;
  private final MetricsSummary overall;
  private final List<MetricsSummary> stages;
  private final long simulatedDurationUs;
  private final EngineStats engine;
  private final ClusterReport cluster;
  private final Fitness.Result fitness;
  private final GatewayReport gateway;
  private final AutoscaleReport autoscale;
  private final DisaggregationReport disaggregation;
  private final LoraReport lora;
  private final SessionReport sessions;
  private final io.blis.engine.spec.SpeculativeCounts speculative;

  /**
   * A result as the engine assembles it at the end of a run ({@code fitness}, when not null,
   * scores {@code overall}).
   */
  public SimulationResult(List<RequestRecord> requests, MetricsSummary overall,
      List<MetricsSummary> stages, long simulatedDurationUs, EngineStats engine,
      ClusterReport cluster, Fitness fitness) {
    this(requests, overall, stages, simulatedDurationUs, engine, cluster, fitness, null, null);
  }

  /**
   * As above, with what the gateway's flow control did ({@code gateway}) and what the autoscaled
   * pool did ({@code autoscale}), each null without it.
   */
  public SimulationResult(List<RequestRecord> requests, MetricsSummary overall,
      List<MetricsSummary> stages, long simulatedDurationUs, EngineStats engine,
      ClusterReport cluster, Fitness fitness, GatewayReport gateway, AutoscaleReport autoscale) {
    this(requests, overall, stages, simulatedDurationUs, engine, cluster, fitness, gateway, autoscale, null);
  }

  /** As above, with what prefill/decode disaggregation did ({@code disaggregation}, null without it). */
  public SimulationResult(List<RequestRecord> requests, MetricsSummary overall,
      List<MetricsSummary> stages, long simulatedDurationUs, EngineStats engine,
      ClusterReport cluster, Fitness fitness, GatewayReport gateway, AutoscaleReport autoscale,
      DisaggregationReport disaggregation) {
    this(requests, overall, stages, simulatedDurationUs, engine, cluster, fitness, gateway, autoscale, disaggregation,
        null);
  }

  /** As above, with what serving LoRA adapters did ({@code lora}, null without adapters). */
  public SimulationResult(List<RequestRecord> requests, MetricsSummary overall,
      List<MetricsSummary> stages, long simulatedDurationUs, EngineStats engine,
      ClusterReport cluster, Fitness fitness, GatewayReport gateway, AutoscaleReport autoscale,
      DisaggregationReport disaggregation, LoraReport lora) {
    this(requests, overall, stages, simulatedDurationUs, engine, cluster, fitness, gateway, autoscale, disaggregation,
        lora, null);
  }

  /** As above, with the multi-turn sessions ({@code sessions}, null when no request named one). */
  public SimulationResult(List<RequestRecord> requests, MetricsSummary overall,
      List<MetricsSummary> stages, long simulatedDurationUs, EngineStats engine,
      ClusterReport cluster, Fitness fitness, GatewayReport gateway, AutoscaleReport autoscale,
      DisaggregationReport disaggregation, LoraReport lora, SessionReport sessions) {
    this(requests, overall, stages, simulatedDurationUs, engine, cluster, fitness, gateway, autoscale, disaggregation,
        lora, sessions, null);
  }

  /** As above, with what speculative decoding did ({@code speculative}, null when the instances do not speculate). */
  public SimulationResult(List<RequestRecord> requests, MetricsSummary overall,
      List<MetricsSummary> stages, long simulatedDurationUs, EngineStats engine,
      ClusterReport cluster, Fitness fitness, GatewayReport gateway, AutoscaleReport autoscale,
      DisaggregationReport disaggregation, LoraReport lora, SessionReport sessions,
      io.blis.engine.spec.SpeculativeCounts speculative) {
    // a run's own records stay as they are: in files past their first run, read back in order
    this.requests = requests instanceof SpilledList ? requests : List.copyOf(requests);
    this.overall = overall;
    this.stages = List.copyOf(stages);
    this.simulatedDurationUs = simulatedDurationUs;
    this.engine = engine;
    this.cluster = cluster;
    this.fitness = fitness == null ? null : fitness.evaluate(overall);
    this.gateway = gateway;
    this.autoscale = autoscale;
    this.disaggregation = disaggregation;
    this.lora = lora;
    this.sessions = sessions;
    this.speculative = speculative;
  }

  private SimulationResult(SimulationResult base, List<RequestRecord> requests) {
    this.requests = requests;
    this.overall = base.overall;
    this.stages = base.stages;
    this.simulatedDurationUs = base.simulatedDurationUs;
    this.engine = base.engine;
    this.cluster = base.cluster;
    this.fitness = base.fitness;
    this.gateway = base.gateway;
    this.autoscale = base.autoscale;
    this.disaggregation = base.disaggregation;
    this.lora = base.lora;
    this.sessions = base.sessions;
    this.speculative = base.speculative;
  }

  /** This result without its per-request records (kept for a file, not for the document). */
  public SimulationResult withoutRequests() {
    return requests.isEmpty() ? this : new SimulationResult(this, List.of());
  }

  /** Per-request records sorted by arrival then id; empty unless requested. */
  public List<RequestRecord> requests() {
    return requests;
  }

  /** Metrics over all requests. */
  public MetricsSummary overall() {
    return overall;
  }

  /** Metrics per load stage, ordered by stage number. */
  public List<MetricsSummary> stages() {
    return stages;
  }

  /**
   * Simulated time from 0 to the last event (the end of the last step, or the last time a client
   * saw a request end, whichever is later; the horizon when it cut the run short), microseconds.
   */
  public long simulatedDurationUs() {
    return simulatedDurationUs;
  }

  /** Engine-wide KV cache, preemption and step figures. */
  public EngineStats engine() {
    return engine;
  }

  /** Per-instance, per SLO class and per tenant results, anomalies and decisions. */
  public ClusterReport cluster() {
    return cluster;
  }

  /** What the gateway's flow control did, when the simulation had it. */
  public java.util.Optional<GatewayReport> gateway() {
    return java.util.Optional.ofNullable(gateway);
  }

  /** What the autoscaled pool did and cost, when the simulation had one. */
  public java.util.Optional<AutoscaleReport> autoscale() {
    return java.util.Optional.ofNullable(autoscale);
  }

  /** What prefill/decode disaggregation did, when the cluster had it. */
  public java.util.Optional<DisaggregationReport> disaggregation() {
    return java.util.Optional.ofNullable(disaggregation);
  }

  /** The fitness score, when the simulation was given fitness weights. */
  public java.util.Optional<Fitness.Result> fitness() {
    return java.util.Optional.ofNullable(fitness);
  }

  /**
   * The result as a JSON document with stable snake_case field names, latencies in milliseconds
   * with fixed decimals, written deterministically (same result, same bytes).
   */
  public String toJson() {
    return ResultJson.write(jsonParts());
  }

  /**
   * Streams {@link #toJson()}'s document to {@code out}, with {@code tail} (further top-level
   * fields, each rendered as {@code ,\n  "name" : value} in the document's indentation, or empty)
   * before its closing brace: the same bytes, never the whole document in memory.
   */
  public void writeJson(java.io.Writer out, String tail) {
    ResultJson.write(jsonParts(), out, tail);
  }

  private ResultJson.Parts jsonParts() {
    return new ResultJson.Parts(simulatedDurationUs, overall, stages, engine, cluster, fitness,
        requests, gateway, autoscale, disaggregation, lora, sessions, speculative);
  }

  /** The multi-turn sessions, when requests named sessions. */
  public java.util.Optional<SessionReport> sessions() {
    return java.util.Optional.ofNullable(sessions);
  }

  /** What speculative decoding did, summed over the instances, when they speculate. */
  public java.util.Optional<io.blis.engine.spec.SpeculativeCounts> speculative() {
    return java.util.Optional.ofNullable(speculative);
  }

  /** What serving LoRA adapters did, when the instances served them. */
  public java.util.Optional<LoraReport> lora() {
    return java.util.Optional.ofNullable(lora);
  }
}
