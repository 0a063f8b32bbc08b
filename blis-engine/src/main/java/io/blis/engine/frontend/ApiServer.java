package io.blis.engine.frontend;

import java.util.Locale;

/**
 * The CPU cost of a vLLM API server's work, in microseconds: {@code requestUs} for each request
 * taken in plus {@code inputTokenUs} per prompt token, and {@code chunkUs} for each streamed chunk
 * (one per engine step that gives the request new tokens). All zero: no API server is modelled.
 *
 * @param requestUs work per request taken in
 * @param inputTokenUs work per prompt token taken in
 * @param chunkUs work per streamed chunk
 */
public record ApiServer(double requestUs, double inputTokenUs, double chunkUs) {

  /** No API server work: requests enter the engine and chunks reach clients at once. */
  public static final ApiServer NONE = new ApiServer(0, 0, 0);

  private static final String FORM = "expected REQUEST_US:INPUT_TOKEN_US:CHUNK_US (e.g. 2000:0:120) or none";

  public ApiServer {
    check("request", requestUs);
    check("input-token", inputTokenUs);
    check("chunk", chunkUs);
  }

  private static void check(String what, double us) {
    if (!Double.isFinite(us) || us < 0 || us > 1e9) {
      throw new IllegalArgumentException("API server " + what + " time must be a number of microseconds in [0, 1e9], got " + us);
    }
  }

  /** Whether any work is charged. */
  public boolean active() {
    return requestUs > 0 || inputTokenUs > 0 || chunkUs > 0;
  }

  /**
   * Parses {@code REQUEST_US:INPUT_TOKEN_US:CHUNK_US} (for example {@code 2000:0:120}), or
   * {@code none}.
   *
   * @throws IllegalArgumentException naming what was expected
   */
  public static ApiServer parse(String text) {
    String t = text == null ? "" : text.trim();
    if (t.toLowerCase(Locale.ROOT).equals("none")) {
      return NONE;
    }
    String[] parts = t.split(":", -1);
    if (parts.length != 3) {
      throw new IllegalArgumentException(FORM + ", got '" + text + "'");
    }
    double[] v = new double[3];
    for (int i = 0; i < 3; i++) {
      try {
        v[i] = Double.parseDouble(parts[i].trim());
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(FORM + ", '" + parts[i].trim() + "' is not a number");
      }
    }
    return new ApiServer(v[0], v[1], v[2]);
  }

  @Override
  public String toString() {
    return active() ? fmt(requestUs) + ":" + fmt(inputTokenUs) + ":" + fmt(chunkUs) : "none";
  }

  private static String fmt(double v) {
    return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
  }
}
