package io.blis.cli.sweep;

import com.fasterxml.jackson.annotation.JsonFormat;
import io.blis.api.LatencyModelProvider;
import io.blis.api.Providers;
import io.blis.engine.capacity.CapacitySearch;
import io.blis.workload.spec.WorkloadSpec;
import java.util.ArrayList;
import java.util.List;

/**
 * Binding of a sweep grid file (read by {@link io.blis.workload.StrictYaml}, which reports
 * unknown keys and wrong types with their line, column and key). Sections that check themselves
 * (workload, search, deployment) fail where they start; the values of the question, the rates and
 * the configurations are checked by {@link SweepGrid}, which names the element.
 */
record GridFile(
    String question,
    String slo,
    @JsonFormat(with = JsonFormat.Feature.ACCEPT_SINGLE_VALUE_AS_ARRAY) List<Double> rates,
    WorkloadFile workload,
    Axes grid,
    List<PointFile> points,
    SearchFile search,
    DeploymentFile deployment,
    String paretoLatency,
    IntervalsFile intervals) {

  /**
   * Intervals of each capacity from an ensemble: the bundled one unless a file is named (relative
   * to the grid file), at a nominal coverage (default 0.9).
   */
  record IntervalsFile(Double level, String ensemble) {
    IntervalsFile {
      if (level != null && !(level > 0 && level < 1)) {
        throw new IllegalArgumentException("level must be in (0, 1), got " + level);
      }
    }
  }

  /**
   * The workload: exactly one of a preset, a workload spec, an inference-perf profile or a BLIS
   * trace (paths relative to the grid file), with a seed for the generated kinds.
   */
  record WorkloadFile(String preset, String spec, String inferencePerf, String trace, Long seed) {
    WorkloadFile {
      List<String> kinds = new ArrayList<>();
      if (preset != null) {
        kinds.add("preset");
        if (!WorkloadSpec.presetNames().contains(preset)) {
          throw new IllegalArgumentException("unknown preset '" + preset + "', expected one of " + WorkloadSpec.presetNames());
        }
      }
      if (spec != null) {
        kinds.add("spec");
      }
      if (inferencePerf != null) {
        kinds.add("inference_perf");
      }
      if (trace != null) {
        kinds.add("trace");
        if (seed != null) {
          throw new IllegalArgumentException("seed does not apply to a trace (it replays recorded requests)");
        }
      }
      if (kinds.size() != 1) {
        throw new IllegalArgumentException("give exactly one of preset, spec, inference_perf or trace, got "
            + (kinds.isEmpty() ? "none" : String.join(" and ", kinds)));
      }
    }
  }

  /**
   * The axes of the cartesian product; an axis left out has one value, the default of {@code
   * blis run}. A single value may be written without brackets. Values are checked by {@link
   * SweepGrid}, which names the element.
   */
  record Axes(
      @JsonFormat(with = JsonFormat.Feature.ACCEPT_SINGLE_VALUE_AS_ARRAY) List<String> model,
      @JsonFormat(with = JsonFormat.Feature.ACCEPT_SINGLE_VALUE_AS_ARRAY) List<String> gpu,
      @JsonFormat(with = JsonFormat.Feature.ACCEPT_SINGLE_VALUE_AS_ARRAY) List<Integer> tp,
      @JsonFormat(with = JsonFormat.Feature.ACCEPT_SINGLE_VALUE_AS_ARRAY) List<Integer> pp,
      @JsonFormat(with = JsonFormat.Feature.ACCEPT_SINGLE_VALUE_AS_ARRAY) List<Integer> dp,
      @JsonFormat(with = JsonFormat.Feature.ACCEPT_SINGLE_VALUE_AS_ARRAY) List<Boolean> expertParallel,
      @JsonFormat(with = JsonFormat.Feature.ACCEPT_SINGLE_VALUE_AS_ARRAY) List<Integer> replicas,
      @JsonFormat(with = JsonFormat.Feature.ACCEPT_SINGLE_VALUE_AS_ARRAY) List<Integer> maxNumSeqs,
      @JsonFormat(with = JsonFormat.Feature.ACCEPT_SINGLE_VALUE_AS_ARRAY) List<Integer> maxNumBatchedTokens,
      @JsonFormat(with = JsonFormat.Feature.ACCEPT_SINGLE_VALUE_AS_ARRAY) List<String> router,
      @JsonFormat(with = JsonFormat.Feature.ACCEPT_SINGLE_VALUE_AS_ARRAY) List<String> scheduler,
      @JsonFormat(with = JsonFormat.Feature.ACCEPT_SINGLE_VALUE_AS_ARRAY) List<Integer> prefillReplicas,
      @JsonFormat(with = JsonFormat.Feature.ACCEPT_SINGLE_VALUE_AS_ARRAY) List<Integer> decodeReplicas,
      @JsonFormat(with = JsonFormat.Feature.ACCEPT_SINGLE_VALUE_AS_ARRAY) List<String> pdDecider,
      @JsonFormat(with = JsonFormat.Feature.ACCEPT_SINGLE_VALUE_AS_ARRAY) List<Integer> maxLoras) {}

  /** One configuration given explicitly; a field left out takes the default of {@code blis run}. */
  record PointFile(String model, String gpu, Integer tp, Integer pp, Integer dp, Boolean expertParallel,
      Integer replicas, Integer maxNumSeqs, Integer maxNumBatchedTokens, String router, String scheduler,
      Integer prefillReplicas, Integer decodeReplicas, String pdDecider, Integer maxLoras) {}

  /** Overrides of {@link CapacitySearch.Settings#defaults()}; every field optional. */
  record SearchFile(Double pointDurationS, Long minRequests, Long maxRequests, Double warmup, Double tolerance,
      Double startRps, Double maxRps, Double minRps, Boolean saturation) {

    SearchFile {
      settings(pointDurationS, minRequests, maxRequests, warmup, tolerance, startRps, maxRps, minRps);
    }

    CapacitySearch.Settings settings() {
      return settings(pointDurationS, minRequests, maxRequests, warmup, tolerance, startRps, maxRps, minRps);
    }

    private static CapacitySearch.Settings settings(Double d, Long min, Long max, Double w, Double t, Double start,
        Double hi, Double lo) {
      CapacitySearch.Settings s = CapacitySearch.Settings.defaults();
      return new CapacitySearch.Settings(d != null ? d : s.durationS(), min != null ? min : s.minRequests(),
          max != null ? max : s.maxRequests(), w != null ? w : s.warmup(), t != null ? t : s.tolerance(),
          start != null ? start : s.startRps(), hi != null ? hi : s.maxRps(), lo != null ? lo : s.minRps());
    }
  }

  /**
   * Deployment fields shared by every point (paths relative to the grid file); {@code loraConfig}
   * a LoRA configuration (a YAML file with a top-level {@code lora:} block) that turns LoRA on for
   * every configuration, read by {@link SweepGrid}.
   */
  record DeploymentFile(String latencyModel, String coefficients, Double gpuMemoryUtilization, Integer blockSize,
      Integer maxModelLen, String loraConfig) {
    DeploymentFile {
      if (latencyModel != null && !Providers.names(LatencyModelProvider.class).contains(latencyModel)) {
        throw new IllegalArgumentException("unknown latency model '" + latencyModel + "'; available: "
            + String.join(", ", Providers.names(LatencyModelProvider.class)));
      }
      if (gpuMemoryUtilization != null && !(gpuMemoryUtilization > 0 && gpuMemoryUtilization <= 1)) {
        throw new IllegalArgumentException("gpu_memory_utilization must be in (0, 1], got " + gpuMemoryUtilization);
      }
      if (blockSize != null && blockSize < 1) {
        throw new IllegalArgumentException("block_size must be at least 1, got " + blockSize);
      }
      if (maxModelLen != null && maxModelLen < 0) {
        throw new IllegalArgumentException("max_model_len must be >= 0, got " + maxModelLen);
      }
    }
  }
}
