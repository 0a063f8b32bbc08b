package io.blis.workload.inferenceperf;

import java.util.List;

/**
 * The parts of an inference-perf profile that determine the request stream: the shared-prefix
 * data, the load stages, the pause between stages and the client timeout (seconds).
 */
public record InferencePerfProfile(
    SharedPrefixData data, List<LoadStage> stages, double stageIntervalS, double clientTimeoutS) {

  public InferencePerfProfile {
    if (data == null) {
      throw new IllegalArgumentException("inference-perf profile: missing shared_prefix data");
    }
    if (stages == null || stages.isEmpty()) {
      throw new IllegalArgumentException("inference-perf profile: at least one load stage is required");
    }
    stages = List.copyOf(stages);
    if (!(stageIntervalS >= 0) || !Double.isFinite(stageIntervalS)) {
      throw new IllegalArgumentException(
          "inference-perf profile: stage interval must be >= 0 seconds, got " + stageIntervalS);
    }
    if (!(clientTimeoutS >= 0) || !Double.isFinite(clientTimeoutS)) {
      throw new IllegalArgumentException(
          "inference-perf profile: client timeout must be >= 0 seconds, got " + clientTimeoutS);
    }
  }

  /** Total requests over all stages. */
  public long totalRequests() {
    long n = 0;
    for (LoadStage s : stages) {
      n += s.numRequests();
    }
    return n;
  }
}
