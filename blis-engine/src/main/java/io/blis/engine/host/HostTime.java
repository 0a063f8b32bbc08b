package io.blis.engine.host;

/**
 * The host (CPU) time of one engine step of a vLLM release: scheduling the step, preparing its
 * inputs, handing them to the tensor-parallel workers, and processing its outputs, in microseconds:
 *
 * <pre>
 *   host = perStepUs + perExtraRankUs x (tp - 1) + perRequestUs x requests in the step
 * </pre>
 *
 * divided by the number of scheduler steps when the release schedules several decode steps at once
 * (vLLM 0.6's multi-step scheduling). A synchronous engine waits for it between GPU steps (step =
 * GPU + host); an asynchronous one prepares step k+1 while the GPU runs step k (step = max(GPU,
 * host)).
 *
 * @param perStepUs fixed host time of a step
 * @param perExtraRankUs added per tensor-parallel rank beyond the first (inputs broadcast to the
 *     workers)
 * @param perRequestUs added per request in the step
 */
public record HostTime(double perStepUs, double perExtraRankUs, double perRequestUs) {

  /** No host time. */
  public static final HostTime NONE = new HostTime(0, 0, 0);

  public HostTime {
    if (!(perStepUs >= 0) || !(perExtraRankUs >= 0) || !(perRequestUs >= 0) || !Double.isFinite(perStepUs)
        || !Double.isFinite(perExtraRankUs) || !Double.isFinite(perRequestUs)) {
      throw new IllegalArgumentException("host times must be finite numbers >= 0 us, got " + perStepUs + ", "
          + perExtraRankUs + ", " + perRequestUs);
    }
  }

  /** The host time of a step of {@code requests} requests on {@code tp} ranks, us. */
  public double of(int requests, int tp) {
    return perStepUs + perExtraRankUs * (tp - 1) + perRequestUs * requests;
  }
}
