package io.blis.workload;

import java.io.BufferedInputStream;
import java.io.BufferedReader;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.util.Locale;
import java.util.zip.GZIPInputStream;
import java.util.zip.ZipException;

/**
 * Opens the text files this module reads (traces, ground-truth CSVs, workload specs, profiles) the
 * same way: UTF-8; a leading byte-order mark is skipped; a file that starts with the gzip signature
 * is decompressed whatever its name. Bytes that are not UTF-8 decode to the replacement character
 * U+FFFD, which readers refuse line by line ({@link #REPLACEMENT}), so the error names the line
 * of the first bad byte. Every failure is one line that names the file and says what was
 * expected: {@link IllegalArgumentException} for a file that cannot be what it should be (a
 * directory, binary, UTF-16), {@link UncheckedIOException} for a failure of the file system.
 */
public final class TextFiles {

  /**
   * Largest configuration file (workload spec, inference-perf profile) read whole: 3 MiB, the size
   * of YAML document the YAML reader accepts (SnakeYAML's default code-point limit). Real specs and
   * profiles are a few kilobytes.
   */
  public static final int MAX_CONFIG_CHARS = 3 * 1024 * 1024;

  private static final char BOM = '\uFEFF';

  /** What bytes that are not UTF-8 decode to; a text this module reads must not contain it. */
  public static final char REPLACEMENT = '\uFFFD';

  private TextFiles() {}

  /**
   * Checks that {@code file} can be opened as a file: it exists and is not a directory.
   *
   * @throws IllegalArgumentException naming the file otherwise
   */
  public static Path requireFile(Path file) {
    if (Files.isDirectory(file)) {
      throw new IllegalArgumentException(file + ": is a directory, expected a file");
    }
    if (!Files.exists(file)) {
      throw new IllegalArgumentException(file + ": no such file");
    }
    if (!Files.isReadable(file)) {
      throw new IllegalArgumentException(file + ": cannot read: permission denied");
    }
    return file;
  }

  /**
   * Opens {@code file} for reading text (see the class comment). Lines read from it that contain
   * {@link #REPLACEMENT} held bytes that are not UTF-8.
   */
  public static BufferedReader open(Path file) {
    requireFile(file);
    InputStream raw = null;
    try {
      raw = new BufferedInputStream(Files.newInputStream(file), 1 << 16);
      raw.mark(4);
      int b0 = raw.read();
      int b1 = raw.read();
      raw.reset();
      if ((b0 == 0xFF && b1 == 0xFE) || (b0 == 0xFE && b1 == 0xFF)) {
        raw.close();
        throw new IllegalArgumentException(
            file + ": UTF-16 text (it starts with a UTF-16 byte-order mark), expected UTF-8");
      }
      InputStream in = b0 == 0x1F && b1 == 0x8B ? new GZIPInputStream(raw, 1 << 16) : raw;
      BufferedReader reader =
          new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8), 1 << 16);
      skipBom(reader);
      return reader;
    } catch (IOException e) {
      closeQuietly(raw);
      throw new UncheckedIOException(file + ": cannot read: " + reason(e), e);
    }
  }

  /**
   * The whole text of a configuration file of at most {@link #MAX_CONFIG_CHARS} characters,
   * without a leading byte-order mark.
   */
  public static String readConfig(Path file) {
    return readText(file, MAX_CONFIG_CHARS);
  }

  /** The whole text of a file of at most {@code maxChars} characters, without a byte-order mark. */
  public static String readText(Path file, int maxChars) {
    requireFile(file);
    try {
      long size = Files.size(file);
      if (size > 4L * maxChars) {
        throw tooLarge(file.toString(), size + " bytes", maxChars);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(file + ": cannot read: " + reason(e), e);
    }
    StringBuilder sb = new StringBuilder();
    try (BufferedReader r = open(file)) {
      char[] buf = new char[8192];
      int n;
      while ((n = r.read(buf)) >= 0) {
        sb.append(buf, 0, n);
        if (sb.length() > maxChars) {
          throw tooLarge(file.toString(), "more than " + maxChars + " characters", maxChars);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(file + ": cannot read: " + reason(e), e);
    }
    int bad = sb.indexOf(String.valueOf(REPLACEMENT));
    if (bad >= 0) {
      int line = 1;
      for (int i = 0; i < bad; i++) {
        if (sb.charAt(i) == '\n') {
          line++;
        }
      }
      throw notUtf8(file, line);
    }
    return sb.toString();
  }

  /** {@code text} without a leading byte-order mark. */
  public static String stripBom(String text) {
    return !text.isEmpty() && text.charAt(0) == BOM ? text.substring(1) : text;
  }

  /**
   * The error for a file whose content stopped being UTF-8 text at line {@code line}; it says so
   * when the file's name promises gzip data it does not hold.
   */
  public static IllegalArgumentException notUtf8(Path file, int line) {
    if (file.getFileName() != null && file.getFileName().toString().endsWith(".gz")
        && !startsWithGzipSignature(file)) {
      return new IllegalArgumentException(file + ":" + line + ": neither gzip data (its name ends"
          + " in .gz but it lacks the gzip signature) nor UTF-8 text");
    }
    return notUtf8(file + ":" + line);
  }

  private static boolean startsWithGzipSignature(Path file) {
    try (InputStream in = Files.newInputStream(file)) {
      return in.read() == 0x1F && in.read() == 0x8B;
    } catch (IOException e) {
      return false;
    }
  }

  /** The error for text that is not UTF-8; {@code where} is {@code file} or {@code file:line}. */
  public static IllegalArgumentException notUtf8(String where) {
    return new IllegalArgumentException(
        where + ": not UTF-8 text (a binary file, or text in another encoding?)");
  }

  /**
   * Position (0-based) of the first character of {@code text} that has no place in a text file (a
   * control character other than tab, line feed, carriage return and form feed), or -1.
   */
  public static int firstControlCharacter(CharSequence text) {
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f') || c == 0x7F) {
        return i;
      }
    }
    return -1;
  }

  /** The error for a control character found in a text file. */
  public static IllegalArgumentException controlCharacter(String where, char c) {
    return new IllegalArgumentException(where + ": contains the control character "
        + String.format(Locale.ROOT, "U+%04X", (int) c) + ", expected text (is it a binary file?)");
  }

  /**
   * {@code value} as it may appear inside quotes in a one-line message: control characters and
   * line separators escaped, cut to 60 characters.
   */
  public static String quote(String value) {
    if (value == null) {
      return "";
    }
    StringBuilder sb = new StringBuilder();
    int i = 0;
    for (; i < value.length() && sb.length() < 60; i++) {
      appendEscaped(sb, value.charAt(i));
    }
    return i < value.length() ? sb + "..." : sb.toString();
  }

  /**
   * {@code message} on one line: control characters and line separators that a value quoted in it
   * brought along are escaped as {@link #quote} escapes them, the rest is left as it is.
   */
  public static String oneLine(String message) {
    if (message == null) {
      return "";
    }
    StringBuilder sb = new StringBuilder(message.length());
    for (int i = 0; i < message.length(); i++) {
      appendEscaped(sb, message.charAt(i));
    }
    return sb.toString();
  }

  private static void appendEscaped(StringBuilder sb, char c) {
    if (c < 0x20 || c == 0x7F || (c >= 0x80 && c < 0xA0) || c == '\u2028' || c == '\u2029'
        || c == BOM || c == '\uFFFD') {
      sb.append(String.format(Locale.ROOT, "\\u%04X", (int) c));
    } else {
      sb.append(c);
    }
  }

  /** What went wrong in a few words, without the exception's class or the file name. */
  public static String reason(IOException e) {
    if (e instanceof NoSuchFileException) {
      return "no such file";
    }
    if (e instanceof AccessDeniedException) {
      return "permission denied";
    }
    if (e instanceof NotDirectoryException) {
      return "a part of the path is not a directory";
    }
    if (e instanceof CharacterCodingException) {
      return "not UTF-8 text (a binary file, or text in another encoding?)";
    }
    if (e instanceof EOFException) {
      return "the gzip data is truncated";
    }
    if (e instanceof ZipException) {
      return "corrupt gzip data (" + e.getMessage() + ")";
    }
    if (e instanceof java.nio.file.FileSystemException fse && fse.getReason() != null) {
      return fse.getReason();
    }
    String m = e.getMessage();
    if (m == null || m.isBlank()) {
      return "input/output error";
    }
    if (m.equals("Is a directory")) {
      return "is a directory, expected a file";
    }
    return m;
  }

  private static IllegalArgumentException tooLarge(String file, String size, int maxChars) {
    return new IllegalArgumentException(file + ": too large (" + size + "); a file read whole"
        + " may have at most " + maxChars + " characters");
  }

  private static void skipBom(BufferedReader reader) throws IOException {
    reader.mark(1);
    int c = reader.read();
    if (c != BOM) {
      reader.reset();
    }
  }

  private static void closeQuietly(InputStream in) {
    if (in != null) {
      try {
        in.close();
      } catch (IOException ignored) {
        // The first failure is the one reported.
      }
    }
  }
}
