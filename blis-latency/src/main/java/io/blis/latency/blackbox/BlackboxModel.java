package io.blis.latency.blackbox;

import io.blis.api.BatchView;
import io.blis.api.Phase;
import io.blis.api.RequestView;
import io.blis.latency.coeff.RequestTimes;

/** The blackbox model; see {@link BlackboxProvider} for the formula. */
final class BlackboxModel extends RequestTimes {

  private final double stepUs;
  private final double perPrefillTokenUs;
  private final double perDecodeRequestUs;

  BlackboxModel(double[] beta, double[] alpha, double schedulingUs, double preemptionUs) {
    super(alpha[0], alpha[1], alpha[2], schedulingUs, preemptionUs);
    this.stepUs = beta[0];
    this.perPrefillTokenUs = beta[1];
    this.perDecodeRequestUs = beta[2];
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
}
