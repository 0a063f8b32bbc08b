package io.blis.cli;

import io.blis.engine.result.OutputFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * File checks and output writing shared by the commands; failures name the flag and the path.
 * Inputs are checked before any work ({@link #requireFile}), outputs too ({@link
 * #requireWritable}), so a bad path costs no simulation; outputs are written atomically ({@link
 * OutputFiles}): an interrupted run leaves the old file or the new one, never part of one.
 */
final class Cli {

  private Cli() {}

  private static final java.util.regex.Pattern GO_DURATION_PART =
      java.util.regex.Pattern.compile("(\\d+(?:\\.\\d*)?|\\.\\d+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)");

  /**
   * A duration in Go's {@code time.ParseDuration} form ("60s", "1m30s", "500ms", "0", "+1h"), in
   * microseconds; empty when {@code text} is not one (a leading minus included: callers refuse
   * negative durations by their own words).
   */
  static java.util.OptionalLong goDurationUs(String text) {
    String t = text == null ? "" : text.strip();
    if (t.equals("0") || t.equals("+0") || t.equals("-0")) {
      return java.util.OptionalLong.of(0);
    }
    String rest = t.startsWith("+") ? t.substring(1) : t;
    java.util.regex.Matcher m = GO_DURATION_PART.matcher(rest);
    double us = 0;
    int at = 0;
    while (at < rest.length() && m.find(at) && m.start() == at) {
      double v = Double.parseDouble(m.group(1));
      us += v * switch (m.group(2)) {
        case "ns" -> 1e-3;
        case "ms" -> 1e3;
        case "s" -> 1e6;
        case "m" -> 60e6;
        case "h" -> 3600e6;
        default -> 1;
      };
      at = m.end();
    }
    return !rest.isEmpty() && at == rest.length() && Double.isFinite(us) && us < Long.MAX_VALUE / 2.0
        ? java.util.OptionalLong.of(Math.round(us)) : java.util.OptionalLong.empty();
  }

  /**
   * Fails with a message naming {@code flag} unless {@code file} is a readable regular file: "no
   * such file", "is a directory, expected a file", "cannot read (permission denied)".
   */
  static Path requireFile(String flag, Path file) {
    if (!Files.exists(file)) {
      throw new IllegalArgumentException(flag + ": no such file '" + file + "'");
    }
    if (Files.isDirectory(file)) {
      throw new IllegalArgumentException(flag + ": '" + file + "' is a directory, expected a file");
    }
    if (!Files.isRegularFile(file)) {
      throw new IllegalArgumentException(flag + ": '" + file + "' is not a regular file");
    }
    if (!Files.isReadable(file)) {
      throw new IllegalArgumentException(flag + ": cannot read '" + file + "' (permission denied)");
    }
    return file;
  }

  /**
   * Fails with a message naming {@code flag} unless {@code file} can be written: it is not a
   * directory, and its nearest existing ancestor is a writable directory (missing parents are
   * created when writing). Called before the work whose result goes there.
   */
  static Path requireWritable(String flag, Path file) {
    if (Files.isDirectory(file)) {
      throw new IllegalArgumentException(flag + ": '" + file + "' is a directory, expected a file path");
    }
    if (Files.exists(file) && !Files.isWritable(file)) {
      throw new IllegalArgumentException(flag + ": cannot write '" + file + "' (permission denied)");
    }
    Path dir = file.toAbsolutePath().getParent();
    while (dir != null && !Files.exists(dir)) {
      dir = dir.getParent();
    }
    if (dir != null && !Files.isDirectory(dir)) {
      throw new IllegalArgumentException(flag + ": cannot write '" + file + "': '" + dir + "' is not a directory");
    }
    if (dir != null && !Files.isWritable(dir)) {
      throw new IllegalArgumentException(flag + ": cannot write '" + file + "': directory '" + dir
          + "' is not writable");
    }
    probe(flag, file);
    return file;
  }

  /**
   * Creates and deletes the temporary file the output will be written to, when its directory
   * exists: permissions alone do not tell (a file system such as /proc takes no new files even
   * from root), and the answer is wanted before the work, not after it.
   */
  private static void probe(String flag, Path file) {
    if (OutputFiles.inPlace(file)) {
      Path t = OutputFiles.target(file);
      if (!OutputFiles.isStdout(file) && !Files.exists(t)) {
        // written in place, appended to: a descriptor path under /proc or /dev/fd that names none
        throw new IllegalArgumentException(flag + ": cannot write '" + file + "': no such file, and '"
            + t.toAbsolutePath().getParent() + "' takes no new files (a path there names an open descriptor)");
      }
      return;
    }
    Path tmp = OutputFiles.temporary(file);
    Path dir = tmp.toAbsolutePath().getParent();
    if (dir == null || !Files.isDirectory(dir) || Files.exists(tmp, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    try {
      Files.newOutputStream(tmp, java.nio.file.StandardOpenOption.CREATE_NEW,
          java.nio.file.StandardOpenOption.WRITE).close();
      Files.deleteIfExists(tmp);
    } catch (java.nio.file.NoSuchFileException e) {
      throw new IllegalArgumentException(flag + ": cannot write '" + file + "': directory '" + dir
          + "' takes no new files");
    } catch (IOException e) {
      throw new IllegalArgumentException(flag + ": cannot write '" + file + "': " + io.blis.workload.TextFiles.reason(e));
    }
  }

  /** Writes {@code text} to {@code file} atomically ({@link OutputFiles#write}); errors name {@code flag}. */
  static void write(String flag, Path file, CharSequence text) {
    try {
      OutputFiles.write(file, text);
    } catch (IOException e) {
      throw new UncheckedIOException(flag + ": cannot write " + file + ": " + io.blis.workload.TextFiles.reason(e), e);
    }
  }

  /**
   * Streams text (UTF-8) into {@code file} as {@link #write} does for a string ({@link
   * OutputFiles#write(Path, OutputFiles.Text)}); errors name {@code flag}.
   */
  static void writeStreamed(String flag, Path file, OutputFiles.Text text) {
    try {
      OutputFiles.write(file, text);
    } catch (IOException e) {
      throw new UncheckedIOException(flag + ": cannot write " + file + ": " + io.blis.workload.TextFiles.reason(e), e);
    }
  }

  /**
   * As {@link #writeStreamed(String, Path, OutputFiles.Text)}, then copies what this write wrote
   * (UTF-8) to {@code out}, a buffer at a time, once the file is in place: read from the file this
   * writer wrote, even when another writer of the same path has renamed its own over it since. A
   * file written in place ({@link OutputFiles#inPlace}: a device, a FIFO) cannot be read back and is
   * not copied; nor is anything when {@code out} is null.
   */
  static void writeStreamed(String flag, Path file, OutputFiles.Text text, java.io.Writer out) {
    boolean[] reading = {false};
    try {
      OutputFiles.write(file, text, out == null ? null : in -> {
        reading[0] = true;
        new java.io.InputStreamReader(in, java.nio.charset.StandardCharsets.UTF_8).transferTo(out);
      });
    } catch (IOException e) {
      throw new UncheckedIOException(flag + ": cannot " + (reading[0] ? "read back " : "write ") + file + ": "
          + io.blis.workload.TextFiles.reason(e), e);
    }
  }

  /**
   * Moves a streamed output's complete temporary file into place ({@link OutputFiles#commit});
   * errors name {@code flag}.
   */
  static void commit(String flag, Path tmp, Path file) {
    try {
      OutputFiles.commit(tmp, file);
    } catch (IOException e) {
      OutputFiles.discard(tmp);
      throw new UncheckedIOException(flag + ": cannot write " + file + ": " + io.blis.workload.TextFiles.reason(e), e);
    }
  }

  /**
   * Prints each note (a setting of an input file that has no meaning here, "FILE:LINE:COL: why")
   * to the command's stderr as one line, "note: ...".
   */
  static void printNotes(picocli.CommandLine cl, java.util.List<String> notes) {
    for (String n : notes) {
      cl.getErr().println("note: " + BlisCli.oneLine(n));
    }
    cl.getErr().flush();
  }

  /** Creates the parent directories of an output file named by {@code flag}; returns the file. */
  static Path parentsCreated(String flag, Path file) {
    Path parent = file.toAbsolutePath().getParent();
    try {
      if (parent != null) {
        Files.createDirectories(parent);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(flag + ": cannot create " + parent + ": " + e.getMessage(), e);
    }
    return file;
  }

  /**
   * A top-level field as the result's streamed tail writes it, {@code   "key" : value} indented by two
   * spaces, without the separator before it or a line end after it.
   */
  static String field(String key, com.fasterxml.jackson.databind.JsonNode value) {
    String rendered;
    try {
      rendered = new com.fasterxml.jackson.databind.ObjectMapper()
          .writer(new com.fasterxml.jackson.core.util.DefaultPrettyPrinter()).writeValueAsString(value);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException("cannot render " + key, e);
    }
    return "  \"" + key + "\" : " + rendered.replace("\n", "\n  ");
  }
}
