package io.blis.workload.spec;

import com.fasterxml.jackson.databind.JsonNode;
import io.blis.workload.inferenceperf.InferencePerfBlock;
import java.util.List;
import java.util.Map;

/**
 * Binding of a Go BLIS workload spec (versions 1 and 2; times in microseconds). Only the shape is
 * checked here (unknown keys, types); {@link GoSpecs} checks the values with the file position of
 * each key and translates the spec into this project's clients. Field by field mapping:
 * docs/go-blis.md.
 */
record GoSpecFile(
    JsonNode version,
    Long seed,
    String category,
    List<Client> clients,
    List<Cohort> cohorts,
    Double aggregateRate,
    Long horizon,
    Long numRequests,
    JsonNode servegenData,
    InferencePerfBlock inferencePerf,
    JsonNode goodputSloTargets) {

  /** A client ({@code clients[]}). */
  record Client(
      String id,
      String tenantId,
      String sloClass,
      String model,
      String adapter,
      Double rateFraction,
      Integer concurrency,
      Long thinkTimeUs,
      Arrival arrival,
      Dist inputDistribution,
      Dist outputDistribution,
      String prefixGroup,
      Integer prefixLength,
      Boolean streaming,
      Network network,
      Lifecycle lifecycle,
      JsonNode multimodal,
      Reasoning reasoning,
      Long timeout,
      Long sloTargetUs,
      Boolean closedLoop) {}

  /** A population of identical clients ({@code cohorts[]}), expanded into clients. */
  record Cohort(
      String id,
      Integer population,
      String tenantId,
      String sloClass,
      String model,
      String adapter,
      Arrival arrival,
      Dist inputDistribution,
      Dist outputDistribution,
      String prefixGroup,
      String prefixSharing,
      Boolean streaming,
      Double rateFraction,
      Diurnal diurnal,
      Spike spike,
      Drain drain,
      Integer prefixLength,
      Reasoning reasoning,
      Boolean closedLoop,
      Long timeout,
      Long sloTargetUs,
      Network network,
      JsonNode multimodal) {}

  /** {@code process}: poisson, gamma, weibull, constant; {@code shape}/{@code scale} fitted. */
  record Arrival(String process, Double cv, Double shape, Double scale) {}

  /** A length distribution: {@code type} and its {@code params}; {@code file} for empirical. */
  record Dist(String type, Map<String, Double> params, String file) {}

  record Network(Double rttMs, Double bandwidthMbps) {}

  record Lifecycle(List<Window> windows) {}

  /** An active window {@code [start_us, end_us)} with optional per-window settings. */
  record Window(Long startUs, Long endUs, Double traceRate, Arrival arrival, Dist inputDistribution,
      Dist outputDistribution) {}

  record Reasoning(Dist reasonRatioDistribution, MultiTurn multiTurn) {}

  record MultiTurn(Integer maxRounds, Long thinkTimeUs, String contextGrowth, Boolean singleSession) {}

  record Diurnal(Integer peakHour, Double peakToTroughRatio) {}

  record Spike(Long startTimeUs, Long durationUs, Double traceRate) {}

  record Drain(Long startTimeUs, Long rampDurationUs) {}
}
