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
 * at. A plain file (new or existing) is written to a temporary file in the same directory, which
 * is then moved over {@code FILE} in one atomic rename: a run that is killed or fails while
 * writing leaves the previous {@code FILE} (or none) and at most a stray temporary; a reader never
 * sees part of a file. A symbolic link is followed (through every hop) and its target replaced
 * that way, so the link stays a link. A path that is not a plain file (a device such as {@code
 * /dev/null}, a FIFO, a descriptor under {@code /proc} or {@code /dev/fd}) is written in place as
 * a stream, never renamed over; {@code -} means standard output. Streamed outputs (traces) write
 * to {@link #temporary} themselves (opened with {@link #open}) and {@link #commit} it when
 * complete, or {@link #discard} it on failure.
 *
 * <p><b>Temporary files.</b> Each write has a temporary of its own, {@code
 * .FILE.PID-N-HOST.blis-tmp} beside {@code FILE}: hidden (a leading dot), named after the writing
 * process's id, a counter of that process and a tag of the machine and PID namespace it runs in
 * (a container has its own), so two writers of one file, in two processes or two threads of one,
 * never share a temporary (each completes; the last rename wins). A temporary that a killed
 * process (SIGKILL) left behind is deleted by the next writer of any file in that directory, from
 * any process: the first time a process writes into a directory, it deletes the {@code *.blis-tmp}
 * files there of its own machine and namespace whose process is no longer running ({@link
 * #sweepStale}). A temporary of a running process, or of a process it cannot see (another
 * container, another machine sharing the directory), is left alone.
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
   * Where {@code file} is written before it is complete: a new temporary file's name beside the
   * file a link points to ({@link #temporaryFor}), or the target itself when it is written in place
   * ({@link #inPlace}). Each call gives another name; call it once per write and keep what it gave.
   * The first call for a directory deletes the stale temporaries of dead processes there ({@link
   * #sweepStale}).
   */
  public static Path temporary(Path file) {
    Path t = target(file);
    return targetInPlace(t) ? t : temporaryFor(t);
  }

  /** Suffix of every temporary file an output is written to. */
  public static final String TEMP_SUFFIX = ".blis-tmp";

  /**
   * {@code .NAME.PID-N-HOST.blis-tmp}: the name written, the writer's process id, its counter, its
   * machine and PID namespace.
   */
  private static final java.util.regex.Pattern TEMP_NAME = java.util.regex.Pattern.compile(
      "\\..*\\.(\\d{1,19})-\\d{1,19}-([0-9a-f]{1,16})" + java.util.regex.Pattern.quote(TEMP_SUFFIX));

  /** The longest part of the target's name a temporary's name repeats, in UTF-8 bytes. */
  private static final int NAME_BYTES = 160;

  private static final long PID = ProcessHandle.current().pid();

  /** The tag of this machine's boot and this process's PID namespace: whose process ids we see. */
  static final String HOST = hostTag();

  private static String hostTag() {
    try {
      String boot = Files.readString(Path.of("/proc/sys/kernel/random/boot_id")).strip();
      String ns = Files.readSymbolicLink(Path.of("/proc/self/ns/pid")).toString();
      return Integer.toHexString((boot + " " + ns).hashCode());
    } catch (IOException | RuntimeException e) {
      return "0"; // not Linux: the process ids a temporary names are taken as this machine's
    }
  }

  private static final java.util.concurrent.atomic.AtomicLong COUNTER = new java.util.concurrent.atomic.AtomicLong();

  /** Directories this process has swept of stale temporaries (absolute, normalized). */
  private static final java.util.Set<Path> SWEPT = java.util.concurrent.ConcurrentHashMap.newKeySet();

  /**
   * A new temporary file's name for the plain file {@code t} (already resolved through links):
   * {@code .NAME.PID-N-HOST.blis-tmp} in {@code t}'s directory, NAME cut to its first 160 bytes
   * (UTF-8) so that the name stays within file systems' limits, PID this process's id, N this
   * process's count of temporaries so far, HOST {@link #HOST}. Sweeps the directory of stale
   * temporaries first, once per directory and process.
   */
  static Path temporaryFor(Path t) {
    Path dir = t.toAbsolutePath().normalize().getParent();
    if (dir != null) {
      sweepOnce(dir);
    }
    return t.resolveSibling(temporaryName(t.getFileName().toString(), PID, COUNTER.incrementAndGet()));
  }

  /**
   * The name of the {@code n}-th temporary file process {@code pid} of this machine and PID
   * namespace writes {@code fileName} to: {@code .NAME.PID-N-HOST.blis-tmp}.
   */
  public static String temporaryName(String fileName, long pid, long n) {
    return "." + cut(fileName) + "." + pid + "-" + n + "-" + HOST + TEMP_SUFFIX;
  }

  /**
   * Creates a new, empty scratch file in {@code dir} for {@code name} (readable and writable by
   * this user only, where the file system has POSIX permissions), named as an output's temporary
   * ({@code .NAME.PID-N-HOST.blis-tmp}, N random so that the name cannot be guessed in a shared
   * directory such as /tmp): so the sweep of a later process deletes it if this one is killed
   * before it deletes the file itself. Sweeps {@code dir} of stale temporaries first, once per
   * process.
   */
  static Path createScratch(Path dir, String name) throws IOException {
    Path d = dir.toAbsolutePath().normalize();
    sweepOnce(d);
    java.security.SecureRandom random = new java.security.SecureRandom();
    for (int attempt = 0; ; attempt++) {
      Path p = d.resolve(temporaryName(name, PID, random.nextLong() & Long.MAX_VALUE));
      try {
        if (d.getFileSystem().supportedFileAttributeViews().contains("posix")) {
          return Files.createFile(p, java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
              java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")));
        }
        return Files.createFile(p);
      } catch (java.nio.file.FileAlreadyExistsException e) {
        if (attempt >= 100) {
          throw e;
        }
      }
    }
  }

  /** Sweeps {@code dir} (absolute, normalized) of stale temporaries, the first time this process writes there. */
  private static void sweepOnce(Path dir) {
    if (SWEPT.add(dir)) {
      sweepStale(dir);
    }
  }

  private static String cut(String name) {
    if (name.getBytes(StandardCharsets.UTF_8).length <= NAME_BYTES) {
      return name;
    }
    StringBuilder b = new StringBuilder();
    int bytes = 0;
    for (int i = 0; i < name.length(); ) {
      int cp = name.codePointAt(i);
      int n = new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8).length;
      if (bytes + n > NAME_BYTES) {
        break;
      }
      b.appendCodePoint(cp);
      bytes += n;
      i += Character.charCount(cp);
    }
    return b.toString();
  }

  /**
   * The process id a temporary file's name carries, or -1 when {@code name} is not the name of one
   * ({@code .NAME.PID-N-HOST.blis-tmp}).
   */
  static long writerOf(String name) {
    java.util.regex.Matcher m = TEMP_NAME.matcher(name);
    return m.matches() ? pidOf(m) : -1;
  }

  /** The process id of a matched temporary's name, or -1 when it does not fit a long. */
  private static long pidOf(java.util.regex.Matcher m) {
    try {
      return Long.parseLong(m.group(1));
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /**
   * Deletes the temporary files in {@code dir} ({@code .NAME.PID-N-HOST.blis-tmp}, regular files,
   * not links) of this machine and PID namespace whose process is no longer running: what a writer
   * killed by SIGKILL left. Never fails (what cannot be listed or deleted stays); returns how many
   * it deleted. A process id another process has taken since keeps its file until that one ends
   * too.
   */
  public static int sweepStale(Path dir) {
    int deleted = 0;
    try (java.nio.file.DirectoryStream<Path> ds = Files.newDirectoryStream(dir, "*" + TEMP_SUFFIX)) {
      for (Path p : ds) {
        java.util.regex.Matcher m = TEMP_NAME.matcher(p.getFileName().toString());
        if (!m.matches() || !m.group(2).equals(HOST)) {
          continue; // not a temporary, or one of another machine or PID namespace
        }
        long pid = pidOf(m);
        if (pid < 0 || pid == PID || ProcessHandle.of(pid).isPresent()
            || !Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) {
          continue;
        }
        try {
          if (Files.deleteIfExists(p)) {
            deleted++;
          }
        } catch (IOException ignored) {
          // not ours to insist on: another writer's sweep, or a directory we may not change
        }
      }
    } catch (IOException | RuntimeException ignored) {
      // no directory yet, or one we cannot read: nothing to sweep
    }
    return deleted;
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
   * System.exit}), so that a stopped command leaves no temporary; only a SIGKILL leaves one, which
   * the next writer into that directory deletes ({@link #sweepStale}). For a process whose outputs
   * are abandoned when it is stopped (the command line's run, replay, convert, ...), not one that
   * finishes its outputs in a shutdown hook of its own (a graceful stop), since the hooks run at
   * once. Registers one hook, however often called.
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
    write(file, text, null);
  }

  /** Reads back what a write wrote. */
  public interface ReadBack {
    void readFrom(java.io.InputStream in) throws IOException;
  }

  /**
   * As {@link #write(Path, Text)}, then, once the file is in place, hands {@code readBack} (unless
   * null) what this write wrote, as a stream opened before the rename: what this writer wrote,
   * even when another writer's rename has replaced the file since. Not for a file written in place
   * (which cannot be read back): there {@code readBack} is not called.
   */
  public static void write(Path file, Text text, ReadBack readBack) throws IOException {
    Path t = target(file);
    boolean inPlace = targetInPlace(t);
    if (!inPlace) {
      createParents(t);
    }
    Path tmp = inPlace ? t : temporaryFor(t);
    java.io.InputStream back = null;
    try {
      try (Writer w = new BufferedWriter(new OutputStreamWriter(open(tmp), StandardCharsets.UTF_8), 1 << 16)) {
        text.writeTo(w);
      } catch (UncheckedIOException e) {
        throw e.getCause();
      }
      if (readBack != null && !inPlace) {
        back = Files.newInputStream(tmp);
      }
      commit(tmp, file);
    } catch (IOException | RuntimeException | Error e) {
      if (back != null) {
        back.close();
      }
      discard(tmp);
      throw e;
    }
    if (back != null) {
      try (java.io.InputStream in = back) {
        readBack.readFrom(in);
      }
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
   * as a temporary ({@code .NAME.PID-N-HOST.blis-tmp}) is deleted: never a device, FIFO, link or a
   * file written in place.
   */
  public static void discard(Path tmp) {
    UNFINISHED.remove(tmp.toAbsolutePath());
    try {
      if (tmp.getFileName() != null && writerOf(tmp.getFileName().toString()) >= 0
          && Files.isRegularFile(tmp, LinkOption.NOFOLLOW_LINKS)) {
        Files.deleteIfExists(tmp);
      }
    } catch (IOException ignored) {
      // a stray temporary is harmless (the next writer's sweep deletes it); the error that made us
      // discard it is what matters
    }
  }
}
