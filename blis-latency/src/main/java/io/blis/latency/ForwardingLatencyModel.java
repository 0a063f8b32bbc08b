package io.blis.latency;

import io.blis.api.BatchView;
import io.blis.api.LatencyModel;
import io.blis.api.RequestView;
import java.util.Objects;

/**
 * A latency model that answers with another's times: the base of decorators that change one of them
 * (the engine's host time added to the step, no front-end time for an offline engine). Every method
 * forwards to {@link #delegate()} unless overridden.
 */
public abstract class ForwardingLatencyModel implements LatencyModel {

  private final LatencyModel delegate;

  protected ForwardingLatencyModel(LatencyModel delegate) {
    this.delegate = Objects.requireNonNull(delegate, "delegate");
  }

  /** The model whose times this one forwards. */
  protected final LatencyModel delegate() {
    return delegate;
  }

  @Override
  public long stepTime(BatchView batch) {
    return delegate.stepTime(batch);
  }

  @Override
  public long forwardPassTime(BatchView batch) {
    return delegate.forwardPassTime(batch);
  }

  @Override
  public long queueingTime(RequestView request) {
    return delegate.queueingTime(request);
  }

  @Override
  public long outputTokenProcessingTime() {
    return delegate.outputTokenProcessingTime();
  }

  @Override
  public long schedulingProcessingTime() {
    return delegate.schedulingProcessingTime();
  }

  @Override
  public long preemptionProcessingTime() {
    return delegate.preemptionProcessingTime();
  }
}
