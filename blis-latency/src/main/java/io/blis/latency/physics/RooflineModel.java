package io.blis.latency.physics;

import io.blis.api.BatchView;
import io.blis.api.RequestView;
import io.blis.latency.coeff.RequestTimes;

/** The roofline model; see {@link RooflineProvider} for the formula. */
final class RooflineModel extends RequestTimes {

  private final StepBasis basis;
  private final double invMfuPrefill;
  private final double invMfuDecode;
  private final double invHbm;
  private final double invLink;

  RooflineModel(
      StepBasis basis, double[] efficiency, double[] alpha, double schedulingUs,
      double preemptionUs) {
    super(alpha[0], alpha[1], alpha[2], schedulingUs, preemptionUs);
    this.basis = basis;
    this.invMfuPrefill = 1.0 / efficiency[0];
    this.invMfuDecode = 1.0 / efficiency[1];
    this.invHbm = 1.0 / efficiency[2];
    this.invLink = 1.0 / efficiency[3];
  }

  @Override
  public long stepTime(BatchView batch) {
    StepBasis s = basis;
    s.compute(batch);
    double compute = s.prefillComputeUs * invMfuPrefill + s.decodeComputeUs * invMfuDecode;
    double memory =
        (s.weightLoadUs + s.expertWeightLoadUs + s.prefillMemoryUs + s.decodeMemoryUs
                + s.moeRoutingUs) * invHbm;
    double us = Math.max(compute, memory) + (s.tpCommUs + s.moeCommUs + s.ppCommUs) * invLink
        + s.commLatencyUs;
    return Math.max(1L, (long) us);
  }
}
