package io.blis.workload.inferenceperf;

import java.util.List;

/**
 * The parts of an inference-perf profile that determine the request stream: the data (shared
 * prefix, or length distributions of synthetic or random prompts), the load stages, the pause between stages and the client timeout (seconds), and how
 * arrivals are drawn within a stage ({@link LoadType}); {@code multiTurnChat} selects the
 * multi-turn chat mode of newer inference-perf builds (never in effect in the measured runs).
 *
 * <p>Parse a profile file with {@link InferencePerfProfiles}.
 */
public record InferencePerfProfile(
    ProfileData data,
    List<LoadStage> stages,
    double stageIntervalS,
    double clientTimeoutS,
    LoadType loadType,
    boolean multiTurnChat) {

  /** How inference-perf spreads the requests of a stage. */
  public enum LoadType {
    /**
     * {@code int(rate x duration)} requests at exponential gaps rescaled to sum to the duration
     * (inference-perf's {@code constant}: a Poisson process conditioned on its count).
     */
    CONSTANT,
    /** A Poisson-distributed count in every second, spread the same way within the second. */
    POISSON
  }

  /** A profile with {@link LoadType#CONSTANT} load, as in every measured run. */
  public InferencePerfProfile(
      ProfileData data, List<LoadStage> stages, double stageIntervalS, double clientTimeoutS) {
    this(data, stages, stageIntervalS, clientTimeoutS, LoadType.CONSTANT, false);
  }

  /** A single-turn profile with the given load type. */
  public InferencePerfProfile(ProfileData data, List<LoadStage> stages, double stageIntervalS,
      double clientTimeoutS, LoadType loadType) {
    this(data, stages, stageIntervalS, clientTimeoutS, loadType, false);
  }

  /** {@link io.blis.workload.RequestSpec#MAX_TIME_US} in seconds: the longest timeout or pause. */
  static final long MAX_TIME_S = io.blis.workload.RequestSpec.MAX_TIME_US / 1_000_000;

  public InferencePerfProfile {
    if (loadType == null) {
      throw new IllegalArgumentException("inference-perf profile: missing load type");
    }
    if (data == null) {
      throw new IllegalArgumentException("inference-perf profile: missing data");
    }
    if (multiTurnChat && !(data instanceof SharedPrefixData)) {
      throw new IllegalArgumentException(
          "inference-perf profile: multi-turn chat needs shared_prefix data");
    }
    if (stages == null || stages.isEmpty()) {
      throw new IllegalArgumentException("inference-perf profile: at least one load stage is required");
    }
    for (LoadStage s : stages) {
      if (s == null) {
        throw new IllegalArgumentException("inference-perf profile: a load stage is missing");
      }
    }
    stages = List.copyOf(stages);
    if (!(stageIntervalS >= 0) || !(stageIntervalS <= MAX_TIME_S)) {
      throw new IllegalArgumentException("inference-perf profile: stage interval must be in [0, "
          + MAX_TIME_S + "] seconds (" + io.blis.workload.RequestSpec.MAX_TIME_WORDS + "), got " + stageIntervalS);
    }
    if (!(clientTimeoutS >= 0) || !(clientTimeoutS <= MAX_TIME_S)) {
      throw new IllegalArgumentException("inference-perf profile: client timeout must be in [0, "
          + MAX_TIME_S + "] seconds (" + io.blis.workload.RequestSpec.MAX_TIME_WORDS + "), got " + clientTimeoutS);
    }
  }

  /** Total requests over all stages (expected value for {@link LoadType#POISSON}). */
  public long totalRequests() {
    long n = 0;
    for (LoadStage s : stages) {
      n += s.numRequests();
    }
    return n;
  }
}
