package io.blis.engine.result;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * Writes output files so that they are never half-written: the text goes to {@code FILE.tmp} in
 * the same directory, which is then moved over {@code FILE} in one atomic rename. A run that is
 * killed or fails while writing leaves the previous {@code FILE} (or none) and at most a stray
 * {@code FILE.tmp}; a reader never sees part of a file. Streamed outputs (traces) write to {@link
 * #temporary} themselves and {@link #commit} it when complete, or {@link #discard} it on failure.
 */
public final class OutputFiles {

  private OutputFiles() {}

  /** Where {@code file} is written before it is complete: {@code FILE.tmp}, next to it. */
  public static Path temporary(Path file) {
    return file.resolveSibling(file.getFileName() + ".tmp");
  }

  /** Writes {@code text} (UTF-8) to {@code file} atomically, creating its parent directories. */
  public static void write(Path file, CharSequence text) throws IOException {
    createParents(file);
    Path tmp = temporary(file);
    try {
      Files.writeString(tmp, text, StandardCharsets.UTF_8);
      commit(tmp, file);
    } catch (IOException | RuntimeException e) {
      discard(tmp);
      throw e;
    }
  }

  /** Creates the parent directories of {@code file}. */
  public static void createParents(Path file) throws IOException {
    Path parent = file.toAbsolutePath().getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
  }

  /**
   * Moves the complete {@code tmp} over {@code file} in one rename (a plain replacing move where
   * the file system cannot rename atomically).
   */
  public static void commit(Path tmp, Path file) throws IOException {
    try {
      Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } catch (AtomicMoveNotSupportedException e) {
      Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
    }
  }

  /** Deletes an unfinished temporary file, if there is one; never fails. */
  public static void discard(Path tmp) {
    try {
      Files.deleteIfExists(tmp);
    } catch (IOException ignored) {
      // a stray FILE.tmp is harmless; the error that made us discard it is what matters
    }
  }
}
