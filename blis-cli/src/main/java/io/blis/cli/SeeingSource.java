package io.blis.cli;

import io.blis.workload.ForwardingRequestSource;
import io.blis.workload.RequestOutcome;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.util.List;

/**
 * A {@link RequestSource} that shows {@link #seen} every request it hands to the engine: each one
 * returned by {@link #next()} and each session follow-up returned by {@link #onFinished}, in the
 * order the engine receives them.
 */
abstract class SeeingSource extends ForwardingRequestSource {

  SeeingSource(RequestSource delegate) {
    super(delegate);
  }

  /** A request on its way to the engine. */
  abstract void seen(RequestSpec r);

  @Override
  public RequestSpec next() {
    RequestSpec r = delegate.next();
    if (r != null) {
      seen(r);
    }
    return r;
  }

  @Override
  public List<RequestSpec> onFinished(RequestSpec request, RequestOutcome outcome, long timeUs) {
    List<RequestSpec> followUps = delegate.onFinished(request, outcome, timeUs);
    for (RequestSpec f : followUps) {
      seen(f);
    }
    return followUps;
  }
}
