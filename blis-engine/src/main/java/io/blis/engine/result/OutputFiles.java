package io.blis.engine.result;

import java.io.BufferedWriter;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.LinkOption;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * Writes output files so that they are never half-written and never destroy what a path points
 * at. A plain file (new or existing) is written to {@code FILE.tmp} in the same directory, which
 * is then moved over {@code FILE} in one atomic rename: a run that is killed or fails while
 * writing leaves the previous {@code FILE} (or none) and at most a stray {@code FILE.tmp}; a
 * reader never sees part of a file. A symbolic link is followed (through every hop) and its
 * target replaced that way, so the link stays a link. A path that is not a plain file (a device
 * such as {@code /dev/null}, a FIFO, a descriptor under {@code /proc} or {@code /dev/fd}) is
 * written in place as a stream, never renamed over; {@code -} means standard output. Streamed
 * outputs (traces) write to {@link #temporary} themselves (opened with {@link #open}) and {@link
 * #commit} it when complete, or {@link #discard} it on failure.
 */
public final class OutputFiles {

  /** The name that means standard output wherever a file is written. */
  public static final String STDOUT_NAME = "-";

  private static final Path STDOUT = Path.of("/dev/stdout");

  private OutputFiles() {}

  /** Whether {@code file} is {@code -}, standard output. */
  public static boolean isStdout(Path file) {
    return file.toString().equals(STDOUT_NAME);
  }

  /**
   * Where writing {@code file} really goes: standard output for {@code -}; the end of a chain of
   * symbolic links (a link into {@code /proc} or {@code /dev/fd}, as {@code /dev/stdout} is, ends
   * the chain there); otherwise {@code file}.
   */
  public static Path target(Path file) {
    if (isStdout(file)) {
      return STDOUT;
    }
    Path p = file;
    for (int hops = 0; hops < 40 && Files.isSymbolicLink(p); hops++) {
      if (isDescriptor(p)) {
        return p;
      }
      try {
        Path next = Files.readSymbolicLink(p);
        p = p.toAbsolutePath().getParent() == null ? next : p.toAbsolutePath().getParent().resolve(next).normalize();
      } catch (IOException e) {
        return p;
      }
    }
    return p;
  }

  private static boolean isDescriptor(Path p) {
    String s = p.toAbsolutePath().normalize().toString();
    return s.startsWith("/proc/") || s.startsWith("/dev/fd/") || s.equals("/dev/stdout") || s.equals("/dev/stderr");
  }

  /**
   * Whether {@code file} is written in place as a stream rather than through a temporary file
   * and a rename: standard output, and anything that exists and is not a regular file (devices,
   * FIFOs, descriptors).
   */
  public static boolean inPlace(Path file) {
    return targetInPlace(target(file));
  }

  /** {@link #inPlace} of a path {@link #target} already resolved. */
  private static boolean targetInPlace(Path t) {
    return t.equals(STDOUT) || isDescriptor(t) || (Files.exists(t) && !Files.isRegularFile(t));
  }

  /**
   * Where {@code file} is written before it is complete: {@code FILE.tmp} beside the file a link
   * points to, or the target itself when it is written in place ({@link #inPlace}).
   */
  public static Path temporary(Path file) {
    Path t = target(file);
    return targetInPlace(t) ? t : t.resolveSibling(t.getFileName() + ".tmp");
  }

  /**
   * Opens {@code path} (what {@link #temporary} gave) for writing: a temporary file is created or
   * truncated; a path written in place is appended to, never truncated (a descriptor of a
   * redirected standard output keeps what is already there), and standard output itself is the
   * process's own descriptor, left open when the stream is closed.
   */
  public static OutputStream open(Path path) throws IOException {
    if (path.equals(STDOUT)) {
      System.out.flush();
      return new FilterOutputStream(new FileOutputStream(FileDescriptor.out)) {
        @Override
        public void write(byte[] b, int off, int len) throws IOException {
          out.write(b, off, len);
        }

        @Override
        public void close() throws IOException {
          flush(); // the process's standard output stays open
        }
      };
    }
    if (targetInPlace(path)) { // what temporary gave is already resolved
      return Files.newOutputStream(path, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
    }
    UNFINISHED.add(path.toAbsolutePath());
    return Files.newOutputStream(path);
  }

  /** Temporary files opened and not yet committed or discarded. */
  private static final java.util.Set<Path> UNFINISHED = java.util.concurrent.ConcurrentHashMap.newKeySet();

  private static boolean hooked;

  /**
   * Discards the temporary files still unfinished when the JVM exits (SIGTERM, SIGINT, {@code
   * System.exit}), so that a stopped command leaves no {@code FILE.tmp}; only a SIGKILL leaves one,
   * which the next write replaces. For a process whose outputs are abandoned when it is stopped
   * (the command line's run, replay, convert, ...), not one that finishes its outputs in a shutdown
   * hook of its own (a graceful stop), since the hooks run at once. Registers one hook, however
   * often called.
   */
  public static synchronized void discardUnfinishedOnExit() {
    if (!hooked) {
      hooked = true;
      Runtime.getRuntime().addShutdownHook(new Thread(() -> UNFINISHED.forEach(OutputFiles::discard),
          "blis-discard-unfinished-outputs"));
    }
  }

  /** The temporary files opened and not yet committed or discarded (absolute paths). */
  static java.util.Set<Path> unfinished() {
    return java.util.Set.copyOf(UNFINISHED);
  }

  /** Writes text to a {@link Writer}; may fail with an I/O error. */
  public interface Text {
    void writeTo(Writer w) throws IOException;
  }

  /**
   * Writes {@code text} (UTF-8) to {@code file}: atomically through {@link #temporary} and a
   * rename for a plain file or a link to one (creating the parent directories), in place for
   * anything else ({@link #inPlace}).
   */
  public static void write(Path file, CharSequence text) throws IOException {
    write(file, w -> w.append(text));
  }

  /**
   * As {@link #write(Path, CharSequence)}, streamed: the text goes out as {@code text} writes it,
   * never whole in memory. An {@link UncheckedIOException} {@code text} throws is unwrapped.
   */
  public static void write(Path file, Text text) throws IOException {
    Path t = target(file);
    boolean inPlace = targetInPlace(t);
    if (!inPlace) {
      createParents(t);
    }
    Path tmp = inPlace ? t : t.resolveSibling(t.getFileName() + ".tmp");
    try {
      try (Writer w = new BufferedWriter(new OutputStreamWriter(open(tmp), StandardCharsets.UTF_8), 1 << 16)) {
        text.writeTo(w);
      } catch (UncheckedIOException e) {
        throw e.getCause();
      }
      commit(tmp, file);
    } catch (IOException | RuntimeException | Error e) {
      discard(tmp);
      throw e;
    }
  }

  /** Creates the parent directories of {@code file}. */
  public static void createParents(Path file) throws IOException {
    if (inPlace(file)) {
      return;
    }
    Path parent = target(file).toAbsolutePath().getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
  }

  /**
   * Moves the complete {@code tmp} over the file {@code file} names (through its links) in one
   * rename (a plain replacing move where the file system cannot rename atomically); nothing when
   * {@code file} was written in place.
   */
  public static void commit(Path tmp, Path file) throws IOException {
    Path t = target(file);
    if (tmp.equals(t)) {
      return;
    }
    try {
      Files.move(tmp, t, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } catch (AtomicMoveNotSupportedException e) {
      Files.move(tmp, t, StandardCopyOption.REPLACE_EXISTING);
    }
    UNFINISHED.remove(tmp.toAbsolutePath());
  }

  /**
   * Deletes an unfinished temporary file, if there is one; never fails. Only a regular file named
   * {@code *.tmp} is deleted: never a device, FIFO, link or a file written in place.
   */
  public static void discard(Path tmp) {
    UNFINISHED.remove(tmp.toAbsolutePath());
    try {
      if (tmp.getFileName() != null && tmp.getFileName().toString().endsWith(".tmp")
          && Files.isRegularFile(tmp, LinkOption.NOFOLLOW_LINKS)) {
        Files.deleteIfExists(tmp);
      }
    } catch (IOException ignored) {
      // a stray FILE.tmp is harmless; the error that made us discard it is what matters
    }
  }
}
