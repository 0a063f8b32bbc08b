package io.blis.engine;

import io.blis.api.BatchView;
import io.blis.api.LatencyModel;
import io.blis.api.RequestView;

/** Test latency model: step = base + perToken x new tokens; constant processing times. */
public class LinearTestModel implements LatencyModel {

  final long baseUs;
  final long perTokenUs;
  final long queueUs;
  final long schedulingUs;
  final long outputTokenUs;
  final long preemptionUs;

  public LinearTestModel(long baseUs, long perTokenUs, long queueUs, long schedulingUs,
      long outputTokenUs, long preemptionUs) {
    this.baseUs = baseUs;
    this.perTokenUs = perTokenUs;
    this.queueUs = queueUs;
    this.schedulingUs = schedulingUs;
    this.outputTokenUs = outputTokenUs;
    this.preemptionUs = preemptionUs;
  }

  static LinearTestModel constant(long stepUs) {
    return new LinearTestModel(stepUs, 0, 0, 0, 0, 0);
  }

  @Override
  public long stepTime(BatchView batch) {
    return baseUs + perTokenUs * batch.totalNewTokens();
  }

  @Override
  public long queueingTime(RequestView request) {
    return queueUs;
  }

  @Override
  public long outputTokenProcessingTime() {
    return outputTokenUs;
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
