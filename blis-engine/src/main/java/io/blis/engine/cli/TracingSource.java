package io.blis.engine.cli;

import io.blis.workload.RequestOutcome;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import io.blis.workload.trace.TraceWriter;
import java.util.List;

/**
 * A {@link RequestSource} that writes every request it hands to the engine to a BLIS trace: each
 * one returned by {@link #next()} and each session follow-up returned by {@link #onFinished}, in
 * the order the engine receives them. {@link #close()} closes the writer, then the source.
 */
final class TracingSource implements RequestSource {

  private final RequestSource delegate;
  private final TraceWriter writer;

  TracingSource(RequestSource delegate, TraceWriter writer) {
    this.delegate = delegate;
    this.writer = writer;
  }

  @Override
  public RequestSpec next() {
    RequestSpec r = delegate.next();
    if (r != null) {
      writer.write(r);
    }
    return r;
  }

  @Override
  public boolean exhausted() {
    return delegate.exhausted();
  }

  @Override
  public List<RequestSpec> onFinished(RequestSpec request, RequestOutcome outcome, long timeUs) {
    List<RequestSpec> followUps = delegate.onFinished(request, outcome, timeUs);
    for (RequestSpec f : followUps) {
      writer.write(f);
    }
    return followUps;
  }

  @Override
  public void close() {
    try {
      writer.close();
    } finally {
      delegate.close();
    }
  }
}
