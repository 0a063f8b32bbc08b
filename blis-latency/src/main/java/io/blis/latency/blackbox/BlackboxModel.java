package io.blis.latency.blackbox;

import io.blis.api.BatchView;
import io.blis.api.LatencyModel;
import io.blis.api.Phase;
import io.blis.api.RequestView;

/** The blackbox model; see {@link BlackboxProvider} for the formula. */
final class BlackboxModel implements LatencyModel {

  private final double stepUs;
  private final double perPrefillTokenUs;
  private final double perDecodeRequestUs;
  private final double queueUs;
  private final double queuePerInputTokenUs;
  private final long perOutputTokenUs;
  private final long schedulingUs;
  private final long preemptionUs;

  BlackboxModel(double[] beta, double[] alpha, double schedulingUs, double preemptionUs) {
    this.stepUs = beta[0];
    this.perPrefillTokenUs = beta[1];
    this.perDecodeRequestUs = beta[2];
    this.queueUs = alpha[0];
    this.queuePerInputTokenUs = alpha[1];
    this.perOutputTokenUs = (long) alpha[2];
    this.schedulingUs = (long) schedulingUs;
    this.preemptionUs = (long) preemptionUs;
  }

  @Override
  public long stepTime(BatchView batch) {
    long prefillTokens = 0;
    int decodes = 0;
    for (int i = 0, n = batch.size(); i < n; i++) {
      RequestView r = batch.get(i);
      if (r.phase() == Phase.PREFILL) {
        prefillTokens += r.newTokens();
      } else {
        decodes++;
      }
    }
    double us = stepUs + perPrefillTokenUs * prefillTokens + perDecodeRequestUs * decodes;
    return Math.max(1L, (long) us);
  }

  @Override
  public long queueingTime(RequestView request) {
    return (long) (queueUs + queuePerInputTokenUs * request.inputTokens());
  }

  @Override
  public long outputTokenProcessingTime() {
    return perOutputTokenUs;
  }

  @Override
  public long schedulingProcessingTime() {
    return schedulingUs;
  }

  @Override
  public long preemptionProcessingTime() {
    return preemptionUs;
  }
}
