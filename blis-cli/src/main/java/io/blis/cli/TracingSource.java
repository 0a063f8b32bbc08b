package io.blis.cli;

import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import io.blis.workload.trace.TraceWriter;

/**
 * A {@link RequestSource} that writes every request it hands to the engine to a BLIS trace, in
 * the order the engine receives them (see {@link SeeingSource}). {@link #close()} closes the
 * writer, then the source.
 */
final class TracingSource extends SeeingSource {

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

  @Override
  void seen(RequestSpec r) {
    try {
      writer.write(r);
    } catch (java.io.UncheckedIOException e) {
      throw named(e);
    }
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
