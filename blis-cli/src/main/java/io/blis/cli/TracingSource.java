package io.blis.cli;

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
final class TracingSource extends io.blis.workload.ForwardingRequestSource {

  private final TraceWriter writer;
  private final String flag;
  private final java.nio.file.Path file;

  /**
   * @param flag and {@code file}: the output as the user named it, for the one line a failed
   *     write (a full disk, say) gives
   */
  TracingSource(RequestSource delegate, TraceWriter writer, String flag, java.nio.file.Path file) {
    super(delegate);
    this.writer = writer;
    this.flag = flag;
    this.file = file;
  }

  private java.io.UncheckedIOException named(java.io.UncheckedIOException e) {
    return new java.io.UncheckedIOException(flag + ": cannot write " + file + ": "
        + String.valueOf(e.getCause().getMessage()), e.getCause());
  }

  private void write(RequestSpec r) {
    try {
      writer.write(r);
    } catch (java.io.UncheckedIOException e) {
      throw named(e);
    }
  }

  @Override
  public RequestSpec next() {
    RequestSpec r = delegate.next();
    if (r != null) {
      write(r);
    }
    return r;
  }

  @Override
  public List<RequestSpec> onFinished(RequestSpec request, RequestOutcome outcome, long timeUs) {
    List<RequestSpec> followUps = delegate.onFinished(request, outcome, timeUs);
    for (RequestSpec f : followUps) {
      write(f);
    }
    return followUps;
  }

  @Override
  public void close() {
    try {
      writer.close();
    } catch (java.io.UncheckedIOException e) {
      throw named(e);
    } finally {
      delegate.close();
    }
  }
}
