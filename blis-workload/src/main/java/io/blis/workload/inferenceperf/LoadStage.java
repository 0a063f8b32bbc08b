package io.blis.workload.inferenceperf;

/** One load stage of an inference-perf profile: a request rate held for a duration. */
public record LoadStage(double rateRps, double durationS) {

  public LoadStage {
    if (!(rateRps > 0) || !Double.isFinite(rateRps)) {
      throw new IllegalArgumentException("load stage: rate must be a positive number, got " + rateRps);
    }
    if (!(durationS > 0) || !Double.isFinite(durationS)) {
      throw new IllegalArgumentException(
          "load stage: duration must be a positive number of seconds, got " + durationS);
    }
  }

  /** Requests inference-perf sends in this stage: {@code int(rate x duration)}. */
  public int numRequests() {
    return (int) (rateRps * durationS);
  }
}
