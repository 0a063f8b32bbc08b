package io.blis.latency.coeff;

import io.blis.api.LatencyModel;
import io.blis.api.RequestView;

/**
 * Base of the built-in latency models: the per-request times around the step (everything except
 * {@link #stepTime}), all in whole microseconds.
 *
 * <ul>
 *   <li>{@code queueingTime = queueUs + queuePerInputTokenUs x inputTokens}
 *   <li>{@code outputTokenProcessingTime = perOutputTokenUs}
 *   <li>{@code schedulingProcessingTime = schedulingUs}
 *   <li>{@code preemptionProcessingTime = preemptionUs}
 * </ul>
 *
 * Fractions of a microsecond are truncated.
 */
public abstract class RequestTimes implements LatencyModel {

  private final double queueUs;
  private final double queuePerInputTokenUs;
  private final long perOutputTokenUs;
  private final long schedulingUs;
  private final long preemptionUs;

  protected RequestTimes(
      double queueUs, double queuePerInputTokenUs, double perOutputTokenUs, double schedulingUs,
      double preemptionUs) {
    this.queueUs = queueUs;
    this.queuePerInputTokenUs = queuePerInputTokenUs;
    this.perOutputTokenUs = (long) perOutputTokenUs;
    this.schedulingUs = (long) schedulingUs;
    this.preemptionUs = (long) preemptionUs;
  }

  @Override
  public final long queueingTime(RequestView request) {
    return (long) (queueUs + queuePerInputTokenUs * request.inputTokens());
  }

  @Override
  public final long outputTokenProcessingTime() {
    return perOutputTokenUs;
  }

  @Override
  public final long schedulingProcessingTime() {
    return schedulingUs;
  }

  @Override
  public final long preemptionProcessingTime() {
    return preemptionUs;
  }
}
