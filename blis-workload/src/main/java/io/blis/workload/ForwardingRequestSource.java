package io.blis.workload;

import java.util.List;

/**
 * A request source that hands every call on to another: extend it and override what you add to
 * (count, record, rename errors), the rest forwards unchanged.
 */
public abstract class ForwardingRequestSource implements RequestSource {

  /** The source calls are handed on to. */
  protected final RequestSource delegate;

  protected ForwardingRequestSource(RequestSource delegate) {
    this.delegate = java.util.Objects.requireNonNull(delegate, "delegate");
  }

  @Override
  public RequestSpec next() {
    return delegate.next();
  }

  @Override
  public boolean exhausted() {
    return delegate.exhausted();
  }

  @Override
  public List<RequestSpec> onFinished(RequestSpec request, RequestOutcome outcome, long timeUs) {
    return delegate.onFinished(request, outcome, timeUs);
  }

  @Override
  public void close() {
    delegate.close();
  }
}
