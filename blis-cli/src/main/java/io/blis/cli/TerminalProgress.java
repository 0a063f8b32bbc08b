package io.blis.cli;

import java.io.PrintWriter;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * A progress line for a long command, on standard error and only when that is a terminal (a pipe
 * or a file gets nothing): rewritten in place at most once a second, from the
 * second second on, and cleared when the work is done. Quiet work stays quiet.
 */
final class TerminalProgress implements AutoCloseable {

  /** Nothing is shown before this much time has passed, nor more often. */
  static final long INTERVAL_NS = 1_000_000_000L;

  private final PrintWriter err;
  private final boolean enabled;
  private final LongSupplier clock;
  private final String command;
  private final long startNs;
  private long nextNs;
  private int shownWidth;

  TerminalProgress(String command, PrintWriter err, boolean enabled, LongSupplier clockNs) {
    this.command = command;
    this.err = err;
    this.enabled = enabled;
    this.clock = clockNs;
    this.startNs = clockNs.getAsLong();
    this.nextNs = startNs + INTERVAL_NS;
  }

  /** Progress of {@code command} on {@code err}, shown when the process runs at a terminal. */
  static TerminalProgress of(String command, PrintWriter err) {
    return new TerminalProgress(command, err, STDERR_IS_TERMINAL, System::nanoTime);
  }

  /**
   * Whether standard error is a terminal: on Linux, what descriptor 2 is (a result redirected to a
   * file, {@code blis run > r.json}, still shows progress); elsewhere, whether the JVM has a
   * console.
   */
  private static final boolean STDERR_IS_TERMINAL = stderrIsTerminal();

  private static boolean stderrIsTerminal() {
    try {
      String fd2 = java.nio.file.Path.of("/proc/self/fd/2").toRealPath().toString();
      return fd2.startsWith("/dev/pts/") || fd2.startsWith("/dev/tty");
    } catch (java.io.IOException | RuntimeException e) {
      return System.console() != null;
    }
  }

  /** Whether a line would be shown now; cheap enough to call for every unit of work. */
  boolean due() {
    return enabled && clock.getAsLong() >= nextNs;
  }

  /** Shows {@code what} (e.g. "1,200,000 rows"), with the time elapsed, when one is due. */
  void update(Supplier<String> what) {
    if (!due()) {
      return;
    }
    long now = clock.getAsLong();
    nextNs = now + INTERVAL_NS;
    String line = String.format(java.util.Locale.ROOT, "%s: %s (%d s)", command, what.get(), (now - startNs) / 1_000_000_000L);
    err.print("\r" + line + " ".repeat(Math.max(0, shownWidth - line.length())));
    err.flush();
    shownWidth = line.length();
  }

  /**
   * {@code source}, counting the requests the engine pulls for the progress line, which reads
   * {@code label} first (the engine pulls one ahead of its clock, so the count is the requests
   * arrived so far and the time that of the latest).
   */
  io.blis.workload.RequestSource counting(io.blis.workload.RequestSource source, String label) {
    if (!enabled) {
      return source;
    }
    return new io.blis.workload.ForwardingRequestSource(source) {
      private long pulled;

      @Override
      public io.blis.workload.RequestSpec next() {
        io.blis.workload.RequestSpec r = delegate.next();
        if (r != null) {
          pulled++;
          if (due()) {
            long n = pulled;
            update(() -> String.format(java.util.Locale.ROOT, "%s%,d requests arrived, simulated time %.1f s", label, n,
                r.arrivalTimeUs() / 1e6));
          }
        }
        return r;
      }
    };
  }

  /** Clears the line, if one was shown. */
  @Override
  public void close() {
    if (shownWidth > 0) {
      err.print("\r" + " ".repeat(shownWidth) + "\r");
      err.flush();
      shownWidth = 0;
    }
  }
}
