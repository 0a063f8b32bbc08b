package io.blis.workload.inferenceperf;

/** One load stage of an inference-perf profile: a request rate held for a duration. */
public record LoadStage(double rateRps, double durationS) {

  /**
   * The longest stage: {@link io.blis.workload.RequestSpec#MAX_TIME_US} (365 days) in seconds;
   * benchmark stages last minutes.
   */
  public static final double MAX_DURATION_S = io.blis.workload.RequestSpec.MAX_TIME_US / 1e6;

  public LoadStage {
    if (!(rateRps > 0) || !Double.isFinite(rateRps)) {
      throw new IllegalArgumentException("load stage: rate must be a positive number, got " + rateRps);
    }
    if (!(durationS > 0) || !(durationS <= MAX_DURATION_S)) {
      throw new IllegalArgumentException("load stage: duration must be a positive number of"
          + " seconds, at most " + (long) MAX_DURATION_S + " ("
          + io.blis.workload.RequestSpec.MAX_TIME_WORDS + "), got " + durationS);
    }
    if (rateRps * durationS >= Integer.MAX_VALUE) {
      throw new IllegalArgumentException("load stage: rate x duration = " + rateRps * durationS
          + " requests, more than the " + Integer.MAX_VALUE + " a stage may send");
    }
  }

  /** Requests inference-perf sends in this stage: {@code int(rate x duration)}. */
  public int numRequests() {
    return (int) (rateRps * durationS);
  }
}
