package io.blis.latency.physics;

import io.blis.api.BatchView;
import io.blis.api.HardwareSpec;
import io.blis.api.ModelSpec;
import io.blis.api.RequestView;
import io.blis.latency.coeff.RequestTimes;
import io.blis.latency.layout.Layout;

/** The trained-physics model; see {@link TrainedPhysicsProvider} for the formula. */
final class TrainedPhysicsModel extends RequestTimes {

  private final StepBasis basis;
  private final double prefillCompute;
  private final double prefillMemory;
  private final double decodeCompute;
  private final double decodeMemory;
  private final double weightLoad;
  private final double expertWeightLoad;
  private final double tpComm;
  private final double moeRouting;
  private final double perRequestUs;
  /** Per request of a forward pass inside another's step: b10, without the sampling passes. */
  private final double perRequestPassUs;
  /** What a forward pass costs whatever its batch: per layer, per all-reduce, per MoE layer. */
  private final double fixedPerPassUs;
  /**
   * Everything that does not depend on the batch: the pass's, plus per step and the sort of the
   * logits for top-p/top-k sampling.
   */
  private final double fixedPerStepUs;

  TrainedPhysicsModel(ModelSpec model, HardwareSpec gpu, Layout layout, boolean truncatedSampling,
      TrainedPhysicsParameters p) {
    super(p.alpha()[0], 0.0, p.alpha()[2], p.alpha()[1], p.alpha()[3]);
    this.basis = new StepBasis(model, gpu, layout, truncatedSampling);
    double[] b = p.beta();
    this.prefillCompute = b[0];
    this.prefillMemory = b[1];
    this.decodeCompute = b[2];
    this.decodeMemory = b[3];
    this.weightLoad = b[4];
    this.expertWeightLoad = b[5];
    this.tpComm = b[6];
    this.moeRouting = b[7];
    // per request: b10, plus the sampling passes over its logits (top-p/top-k models only)
    this.perRequestUs = b[10] + b[14] * basis.logitsPassUs;
    this.perRequestPassUs = b[10];
    this.fixedPerPassUs = b[8] * basis.layerUnits + b[9] * basis.allReduceUnits + b[12] * basis.moeLayerUnits;
    this.fixedPerStepUs = // summed in this order, as always (the same doubles, the same step times)
        b[8] * basis.layerUnits + b[9] * basis.allReduceUnits + b[11] + b[12] * basis.moeLayerUnits
            + b[13] * basis.kiloVocabUnits;
  }

  @Override
  public long stepTime(BatchView batch) {
    double us = batchUs(batch) + perRequestUs * basis.requests + fixedPerStepUs;
    return Math.max(1L, (long) us);
  }

  /**
   * A drafter's pass: the batch's terms, the per-layer, all-reduce and MoE-layer fixed times and the
   * per-request time, without the step's constant (b11) and its top-p/top-k sampling chain (b13,
   * b14): a drafter takes the argmax of its logits.
   */
  @Override
  public long forwardPassTime(BatchView batch) {
    double us = batchUs(batch) + perRequestPassUs * basis.requests + fixedPerPassUs;
    return Math.max(1L, (long) us);
  }

  /** The terms that depend on the batch, per-request times apart; leaves them in {@link #basis}. */
  private double batchUs(BatchView batch) {
    StepBasis s = basis;
    s.compute(batch);
    // Prefill GEMMs (many rows) overlap their weight reads; decode rows (one per request) do not:
    // a decode step streams the weights and each decode request adds its own MMA work on top.
    double compute = prefillCompute * s.prefillComputeUs;
    double memory =
        weightLoad * s.weightLoadUs
            + expertWeightLoad * s.expertWeightLoadUs
            + prefillMemory * s.prefillMemoryUs
            + decodeMemory * s.decodeMemoryUs;
    double us =
        Math.max(compute, memory)
            + decodeCompute * s.decodeComputeUs
            + tpComm * (s.tpCommUs + s.moeCommUs + s.ppCommUs)
            + s.commLatencyUs
            + moeRouting * s.moeRoutingUs
            + s.moeExpertFixedUs;
    return us;
  }
}
