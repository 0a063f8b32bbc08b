package io.blis.engine.corpus;

import io.blis.workload.TextFiles;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Locale;

/**
 * The half of the corpus a source belongs to, fixed by its id before any point was simulated: the
 * sources whose SHA-256 of the id starts with a hexadecimal digit 0-7 <em>choose</em> the model's
 * form (they may be looked at while a change is decided), those starting with 8-f only
 * <em>report</em> (docs/public-measurements/README.md).
 */
public enum CorpusHalf {
  /** May be looked at when the model's form is chosen. */
  CHOOSING,
  /** Only reported: never used to decide anything. */
  REPORTING;

  /** The half of the source with this id: the first hex digit of SHA-256(id) 0-7 or 8-f. */
  public static CorpusHalf of(String sourceId) {
    byte[] digest;
    try {
      digest = MessageDigest.getInstance("SHA-256").digest(sourceId.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("the JDK has no SHA-256", e);
    }
    int firstHexDigit = (digest[0] & 0xff) >>> 4;
    return firstHexDigit < 8 ? CHOOSING : REPORTING;
  }

  /** {@code choosing} or {@code reporting}. */
  public String key() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** Parses {@code choosing}, {@code reporting}; errors name what was expected. */
  public static CorpusHalf parse(String s) {
    for (CorpusHalf h : values()) {
      if (h.key().equals(s)) {
        return h;
      }
    }
    throw new IllegalArgumentException("expected choosing or reporting, got '" + TextFiles.quote(s)
        + "'");
  }
}
